/// @file sm90.cuh
/// @brief Raw PTX wrappers introduced with Hopper (sm_90) that the Atom may
/// use: the bulk copies of the tensor-memory-access unit (TMA) between global
/// and shared memory, their mbarrier completion and bulk-group tracking, and
/// the bulk L2 prefetch. Using them in a pass for an older architecture is a
/// compile-time error with a message. Shared addresses are 32-bit shared
/// window addresses (smemAddr).
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

/// mbarrier.init: the 8-byte barrier at shared address `bar` expects
/// `count` arrivals per phase; its phase parity starts at 0.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void mbarrierInit(uint32_t bar, uint32_t count) {
  static_assert(kArch >= 900, "the TMA datapath's mbarrier use needs sm_90 or newer");
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/// mbarrier.inval: the barrier's memory may be reused (or initialized again).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void mbarrierInval(uint32_t bar) {
  static_assert(kArch >= 900, "the TMA datapath's mbarrier use needs sm_90 or newer");
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

/// One arrival on `bar` that also expects `bytes` more transaction bytes
/// (the bulk copies that complete on it) in the current phase.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void mbarrierArriveExpectTx(uint32_t bar, uint32_t bytes) {
  static_assert(kArch >= 900, "mbarrier expect_tx needs sm_90 or newer");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

/// One arrival on `bar` (release, CTA scope).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void mbarrierArrive(uint32_t bar) {
  static_assert(kArch >= 900, "the TMA datapath's mbarrier use needs sm_90 or newer");
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/// Waits (acquire, CTA scope) until the phase of `bar` with parity `parity`
/// has completed: its arrivals and transaction bytes are all in, so the
/// bulk copies that completed on it are visible to this thread.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void mbarrierWaitParity(uint32_t bar, uint32_t parity) {
  static_assert(kArch >= 900, "mbarrier try_wait.parity needs sm_90 or newer");
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

/// fence.mbarrier_init: makes this thread's mbarrier.init visible to the
/// async proxy (the bulk copies' complete_tx) and, after a barrier, to the
/// CTA's other threads.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void fenceMbarrierInit() {
  static_assert(kArch >= 900, "fence.mbarrier_init needs sm_90 or newer");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// fence.proxy.async.shared::cta: orders this thread's (and, after a
/// barrier, its CTA's) generic-proxy accesses of shared memory before the
/// bulk copies it issues next (a slot read by threads, then refilled by TMA).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void fenceProxyAsyncShared() {
  static_assert(kArch >= 900, "fence.proxy.async needs sm_90 or newer");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// cp.async.bulk global -> shared: `bytes` (a multiple of 16, both
/// addresses 16-byte aligned) from `src` (this GPU's memory or a peer's)
/// into shared address `dst`, completing as transaction bytes on `bar`.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkLoadShared(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  static_assert(kArch >= 900, "cp.async.bulk needs sm_90 or newer");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

/// cp.async.bulk shared -> global (bulk-group completion): `bytes` (a
/// multiple of 16, both addresses 16-byte aligned) from shared address
/// `src` to `dst` (this GPU's memory or a peer's). Tracked by
/// bulkCommit / bulkWaitRead / bulkWait of the issuing thread.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkStoreGlobal(void* dst, uint32_t src, uint32_t bytes) {
  static_assert(kArch >= 900, "cp.async.bulk needs sm_90 or newer");
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}

/// cp.async.bulk.commit_group: closes this thread's bulk group.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkCommit() {
  static_assert(kArch >= 900, "cp.async.bulk needs sm_90 or newer");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// cp.async.bulk.wait_group.read N: at most N of this thread's bulk groups
/// still read their shared source (the older ones' slots may be refilled).
template <int N, int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkWaitRead() {
  static_assert(kArch >= 900, "cp.async.bulk needs sm_90 or newer");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// cp.async.bulk.wait_group N: at most N of this thread's bulk groups are
/// incomplete (the older ones' global writes are performed).
template <int N, int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void bulkWait() {
  static_assert(kArch >= 900, "cp.async.bulk needs sm_90 or newer");
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

/// prefetch.global.L2::evict_last: keep-resident prefetch of one line.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void prefetchL2EvictLast(const void* p) {
  static_assert(kArch >= 800, "prefetch.global.L2::evict_last needs sm_80 or newer");
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(p));
}

} // namespace purlin::arch

#endif // __CUDACC__
