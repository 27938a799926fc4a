/// @file atom_test_common.cuh
/// @brief Helpers shared by the Atom GPU tests: CUDA error checks that return
/// a failure instead of exiting, the datapaths under test, device selection
/// and peer access between GPU 0 and GPU 1, a deterministic random source.
#pragma once

#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "purlin/atom/atom.cuh"

namespace atomtest {

/// Evaluates a CUDA call; on error prints where and returns false from the
/// enclosing bool function.
#define ATOMTEST_CK(call)                                                                   \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #call); \
      return false;                                                                         \
    }                                                                                       \
  } while (0)

namespace pa = purlin::atom;

/// Datapaths under test: the four tags plus small pipeline shapes (so the
/// pipeline runs on small sizes too) and the Hopper tuning candidates that
/// bench/micro measures.
using AmpereSmall = pa::Atom<pa::Ampere, 2, 1024>;
using HopperSmall = pa::Atom<pa::Hopper, 3, 2048>;
using TmaSmall = pa::Atom<pa::HopperTma, 3, 2048>;
using CandL2 = pa::Atom<pa::Tuning<true, pa::StoreKind::Plain, false, 800>, 4, 4096>;
using CandCs = pa::Atom<pa::Tuning<false, pa::StoreKind::Streaming, false, 800>, 4, 4096>;
using CandNa = pa::Atom<pa::Tuning<false, pa::StoreKind::NoAlloc, false, 800>, 4, 4096>;
using CandPf = pa::Atom<pa::Tuning<false, pa::StoreKind::Plain, true, 900>, 4, 4096>;

/// Compute capability of a device as __CUDA_ARCH__ (900 for 9.0).
inline int deviceArch(int dev) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return 0;
  return p.major * 100 + p.minor * 10;
}

/// Deterministic xorshift64* generator.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 40) / 16777216.0f; }
};

/// Opens GPU 0 and, when present, GPU 1 with peer access both ways. Returns
/// the number of usable GPUs (0 on error, 1 when peer cases must be skipped).
inline int setupDevices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    std::printf("FAIL no CUDA device\n");
    return 0;
  }
  if (n < 2) return 1;
  int ok01 = 0, ok10 = 0;
  cudaDeviceCanAccessPeer(&ok01, 0, 1);
  cudaDeviceCanAccessPeer(&ok10, 1, 0);
  if (!ok01 || !ok10) return 1;
  for (int d = 0; d < 2; ++d) {
    cudaSetDevice(d);
    cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
      std::printf("FAIL cudaDeviceEnablePeerAccess(%d): %s\n", 1 - d, cudaGetErrorString(e));
      return 0;
    }
    cudaGetLastError();
  }
  cudaSetDevice(0);
  return 2;
}

/// Sets the dynamic shared memory limit of `kernel` to `bytes` when needed.
template <class K>
inline bool allowSmem(K kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return true;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) ==
         cudaSuccess;
}

} // namespace atomtest
