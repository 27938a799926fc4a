/// @file comm_test_kernels.cuh
/// @brief Kernels and host helpers of the communicator GPU tests: write a
/// byte pattern through a peer mapping and publish it with a release signal;
/// wait (bounded) on an own signal with acquire and verify the pattern.
#pragma once

#include <cstdio>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "purlin/device_comm.h"

namespace commtest {

/// Failures are counted, printed, and turn the exit status non-zero.
inline int &failures() {
  static int n = 0;
  return n;
}
#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++::commtest::failures();                                                \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
    }                                                                          \
  } while (0)

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    EXPECT(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));        \
  } while (0)

__host__ __device__ inline uint32_t patternWord(std::size_t i, uint32_t seed) {
  return static_cast<uint32_t>(i * 2654435761u) ^ seed;
}

/// Writes words [0, words) of `dst` (a peer's memory) with the pattern, then
/// the last thread to finish releases `value` into `signal` (a peer's signal)
/// at system scope.
__global__ void putAndNotify(uint32_t *dst, std::size_t words, uint32_t seed,
                             uint64_t *signal, uint64_t value,
                             unsigned *arrived) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = patternWord(i, seed);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    if (atomicAdd(arrived, 1u) == gridDim.x - 1) {
      __threadfence_system();
      asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(signal), "l"(value) : "memory");
    }
  }
}

/// Waits (bounded by about `maxNs` ns) until *signal >= value with acquire
/// at system scope, then counts words of `src` that differ from the pattern.
/// result[0] = 1 if the wait succeeded, result[1] = mismatches, result[2] =
/// the last observed signal value.
__global__ void waitAndCheck(const uint32_t *src, std::size_t words, uint32_t seed,
                             const uint64_t *signal, uint64_t value,
                             unsigned long long maxNs,
                             unsigned long long *result) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    uint64_t seen = 0;
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(seen) : "l"(signal) : "memory");
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (seen < value && now - start < maxNs);
    ok = seen >= value;
    if (blockIdx.x == 0) {
      result[0] = ok;
      result[2] = seen;
    }
  }
  __syncthreads();
  if (!ok)
    return;
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x)
    bad += src[i] != patternWord(i, seed);
  if (bad)
    atomicAdd(&result[1], bad);
}

} // namespace commtest
