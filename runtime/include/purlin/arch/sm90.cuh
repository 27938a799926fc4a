/// @file sm90.cuh
/// @brief Raw PTX wrappers introduced with Hopper (sm_90) that the Atom may
/// use: the bulk L2 prefetch of the tensor-memory-access unit. Using them in
/// a pass for an older architecture is a compile-time error with a message.
#pragma once

#include "purlin/arch/sm80.cuh"

#if defined(__CUDACC__)

namespace purlin::arch {

/// cp.async.bulk.prefetch.L2.global: asks the L2 that owns `src` (the peer's
/// L2 for NVLink memory) to fetch `bytes` bytes; no data returns, nothing to
/// wait for. Preconditions: src 16-byte aligned, bytes a multiple of 16.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkPrefetchL2(const void* src, uint32_t bytes) {
  static_assert(kArch >= 900, "cp.async.bulk.prefetch needs sm_90 or newer");
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(src), "r"(bytes) : "memory");
}

/// prefetch.global.L2::evict_last: keep-resident prefetch of one line.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void prefetchL2EvictLast(const void* p) {
  static_assert(kArch >= 800, "prefetch.global.L2::evict_last needs sm_80 or newer");
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(p));
}

} // namespace purlin::arch

#endif // __CUDACC__
