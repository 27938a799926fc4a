/// @file micro_check.h
/// @brief The microbenchmarks' CUDA error check: a benchmark has nothing to
/// recover, so a failed call prints the program, the error, where and what,
/// and exits with status 2.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define MICRO_CUDA_CHECK(program, call)                                                                      \
  do {                                                                                                       \
    cudaError_t e_ = (call);                                                                                 \
    if (e_ != cudaSuccess) {                                                                                 \
      std::fprintf(stderr, "%s: CUDA error %s at %s:%d: %s\n", program, cudaGetErrorString(e_), __FILE__, \
                   __LINE__, #call);                                                                         \
      std::exit(2);                                                                                          \
    }                                                                                                        \
  } while (0)

/// Ends the stream capture on `s`, instantiates the captured graph and frees
/// the graph (the executable graph is the caller's).
inline cudaGraphExec_t instantiateCapture(cudaStream_t s, const char* program) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  MICRO_CUDA_CHECK(program, cudaStreamEndCapture(s, &g));
  MICRO_CUDA_CHECK(program, cudaGraphInstantiate(&ge, g, 0));
  MICRO_CUDA_CHECK(program, cudaGraphDestroy(g));
  return ge;
}

/// Two ranks of one process (rank r on device dev[r]; by default devices 0
/// and 1, or both on one device in a loopback run): replays graph ge[r] on
/// stream s[r] once as a warm-up, then `reps` times (launched alternately,
/// so both run concurrently), and returns the larger of the two ranks'
/// elapsed milliseconds for the timed replays. Leaves dev[1] current.
inline float replayOnTwoGpus(const cudaGraphExec_t (&ge)[2], const cudaStream_t (&s)[2], int reps,
                             const char* program, const int (&dev)[2] = {0, 1}) {
  cudaEvent_t t0[2], t1[2];
  for (int r = 0; r < 2; ++r) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
    MICRO_CUDA_CHECK(program, cudaEventCreate(&t0[r]));
    MICRO_CUDA_CHECK(program, cudaEventCreate(&t1[r]));
    MICRO_CUDA_CHECK(program, cudaGraphLaunch(ge[r], s[r]));  // warm-up
  }
  for (int r = 0; r < 2; ++r) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
    MICRO_CUDA_CHECK(program, cudaStreamSynchronize(s[r]));
  }
  for (int r = 0; r < 2; ++r) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
    MICRO_CUDA_CHECK(program, cudaEventRecord(t0[r], s[r]));
  }
  for (int rep = 0; rep < reps; ++rep)
    for (int r = 0; r < 2; ++r) {
      MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
      MICRO_CUDA_CHECK(program, cudaGraphLaunch(ge[r], s[r]));
    }
  float ms = 0;
  for (int r = 0; r < 2; ++r) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
    MICRO_CUDA_CHECK(program, cudaEventRecord(t1[r], s[r]));
  }
  for (int r = 0; r < 2; ++r) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev[r]));
    MICRO_CUDA_CHECK(program, cudaEventSynchronize(t1[r]));
    float m = 0;
    MICRO_CUDA_CHECK(program, cudaEventElapsedTime(&m, t0[r], t1[r]));
    ms = m > ms ? m : ms;
    MICRO_CUDA_CHECK(program, cudaEventDestroy(t0[r]));
    MICRO_CUDA_CHECK(program, cudaEventDestroy(t1[r]));
  }
  return ms;
}
