/// @file exchange_micro.h
/// @brief What the two latency micros (lat_floor_micro, lat_trace_micro)
/// share: their two ranks' devices, the input pattern, and the check of an
/// AllGather exchange. Include after micro_check.h, from a .cu file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "micro_check.h"

namespace micro {

/// Fills `words` 8-byte words with a rank-dependent pattern (many words have
/// bit 63 set, which the packet formats must carry).
static __global__ void fillPattern(uint64_t* p, std::size_t words, int rank) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(rank + 1) << 17);
    x ^= x >> 29;
    p[i] = x * 0xBF58476D1CE4E5B9ull;
  }
}

/// Sets p[0..n) to v (n <= blockDim.x).
static __global__ void setWords(uint64_t* p, int n, uint64_t v) {
  if (threadIdx.x < unsigned(n)) p[threadIdx.x] = v;
}

/// One rank's buffers of an exchange micro on device `dev`: a stream,
/// 128 per-CTA epoch slots, a packet area of two halves of `halfBytes`,
/// `maxBytes` of input (fillPattern), 2 * `maxBytes` of output and an error
/// flag (0). Never freed: the micros run once and exit.
struct ExchangeRank {
  cudaStream_t s;
  uint64_t* epochs;
  std::byte *packets, *in, *out;
  int* err;
  void allocate(const char* program, int dev, int rank, std::size_t maxBytes, std::size_t halfBytes) {
    MICRO_CUDA_CHECK(program, cudaSetDevice(dev));
    MICRO_CUDA_CHECK(program, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    MICRO_CUDA_CHECK(program, cudaMalloc(&epochs, 128 * sizeof(uint64_t)));
    MICRO_CUDA_CHECK(program, cudaMalloc(&packets, 2 * halfBytes));
    MICRO_CUDA_CHECK(program, cudaMalloc(&in, maxBytes));
    MICRO_CUDA_CHECK(program, cudaMalloc(&out, 2 * maxBytes));
    MICRO_CUDA_CHECK(program, cudaMalloc(&err, sizeof(int)));
    MICRO_CUDA_CHECK(program, cudaMemset(err, 0, sizeof(int)));
    fillPattern<<<256, 256>>>(reinterpret_cast<uint64_t*>(in), maxBytes / 8, rank);
    MICRO_CUDA_CHECK(program, cudaDeviceSynchronize());
  }
};

/// The devices of the two ranks: 0 and 1 with peer access both ways, or
/// both 0 (`loopback`, a machine with one GPU, or two GPUs without peer
/// access: the peer's memory is then local, two streams). Prints the mode
/// line and returns whether it is loopback; exits with status 2 and a
/// message when there is no GPU.
inline bool twoRankDevices(const char* program, bool loopback, int (&dev)[2]) {
  int ndev = 0;
  MICRO_CUDA_CHECK(program, cudaGetDeviceCount(&ndev));
  if (ndev < 1) {
    std::fprintf(stderr, "%s: no GPU\n", program);
    std::exit(2);
  }
  if (!loopback && ndev >= 2) {
    int a = 0, b = 0;
    MICRO_CUDA_CHECK(program, cudaDeviceCanAccessPeer(&a, 0, 1));
    MICRO_CUDA_CHECK(program, cudaDeviceCanAccessPeer(&b, 1, 0));
    if (!a || !b) std::printf("%s: devices 0 and 1 have no peer access; running loopback\n", program);
    loopback = !a || !b;
  }
  loopback = loopback || ndev < 2;
  dev[0] = 0;
  dev[1] = loopback ? 0 : 1;
  if (!loopback)
    for (int r = 0; r < 2; ++r) {
      MICRO_CUDA_CHECK(program, cudaSetDevice(r));
      MICRO_CUDA_CHECK(program, cudaDeviceEnablePeerAccess(1 - r, 0));
    }
  std::printf("mode: %s\n", loopback ? "loopback (both ranks on device 0, two streams)" : "two GPUs (devices 0 and 1)");
  return loopback;
}

/// True if neither rank's error flag is set and each rank's output holds
/// rank 0's `bytes` input bytes, then rank 1's (an AllGather, byte for byte).
/// Only the final output is seen: every call of a row sends the same input,
/// so this catches lost, misplaced or corrupted packets (wrong bytes or an
/// expired wait), not a call that read an earlier call's identical packet
/// (tests/gpu/coll_correctness_test's stale-words probe covers that).
inline bool allGatherOk(const char* program, const std::byte* const (&in)[2], const std::byte* const (&out)[2],
                        int* const (&err)[2], std::size_t bytes) {
  std::vector<unsigned char> src[2], got(2 * bytes);
  for (int r = 0; r < 2; ++r) {
    src[r].resize(bytes);
    MICRO_CUDA_CHECK(program, cudaMemcpy(src[r].data(), in[r], bytes, cudaMemcpyDeviceToHost));
  }
  for (int r = 0; r < 2; ++r) {
    int e = 0;
    MICRO_CUDA_CHECK(program, cudaMemcpy(&e, err[r], sizeof(int), cudaMemcpyDeviceToHost));
    MICRO_CUDA_CHECK(program, cudaMemcpy(got.data(), out[r], 2 * bytes, cudaMemcpyDeviceToHost));
    if (e != 0 || !std::equal(src[0].begin(), src[0].end(), got.begin()) ||
        !std::equal(src[1].begin(), src[1].end(), got.begin() + std::ptrdiff_t(bytes)))
      return false;
  }
  return true;
}

} // namespace micro
