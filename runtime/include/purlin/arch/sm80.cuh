/// @file sm80.cuh
/// @brief Raw PTX wrappers introduced with Ampere (sm_80): cp.async from
/// global (local or peer over NVLink) into shared memory, with its group
/// commit/wait. Using them in a pass for an older architecture is a
/// compile-time error with a message.
///
/// cp.async semantics (PTX ISA 9.7.9.25): the copy is performed
/// asynchronously by the issuing thread; its shared-memory write becomes
/// visible to that thread only after a cp.async.wait_group / wait_all that
/// covers its group. Nothing orders it against other threads: a thread that
/// reads slots written by another thread's cp.async needs the writer's wait
/// plus a barrier.
#pragma once

#include "purlin/arch/common.cuh"

#if defined(__CUDACC__)

namespace purlin::arch {

/// cp.async.cg.shared.global, 16 bytes, bypassing L1 (.cg). Copies the first
/// `srcBytes` (0..16) bytes of `src` and zero-fills the rest of the 16 bytes
/// at `dstSmem` (a tail copy reads no byte past src + srcBytes).
/// Preconditions: src and dstSmem 16-byte aligned.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void cpAsync16(uint32_t dstSmem, const void* src, uint32_t srcBytes = 16) {
  static_assert(kArch >= 800, "cp.async needs sm_80 or newer: use the Generic Atom for older GPUs");
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dstSmem), "l"(src), "r"(srcBytes) : "memory");
}

/// As cpAsync16, with the L2::256B prefetch hint: the L2 may fetch the whole
/// 256-byte block around the address (one request for the neighbours).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void cpAsync16L2Prefetch256(uint32_t dstSmem, const void* src, uint32_t srcBytes = 16) {
  static_assert(kArch >= 800, "cp.async needs sm_80 or newer: use the Generic Atom for older GPUs");
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;" :: "r"(dstSmem), "l"(src), "r"(srcBytes) : "memory");
}

/// cp.async.commit_group: closes the group of this thread's cp.async issued
/// since the previous commit (an empty group is legal and completes at once).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void cpAsyncCommit() {
  static_assert(kArch >= 800, "cp.async needs sm_80 or newer: use the Generic Atom for older GPUs");
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// cp.async.wait_group N: waits until at most N of this thread's committed
/// groups are pending (the oldest ones complete first).
template <int N, int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void cpAsyncWait() {
  static_assert(kArch >= 800, "cp.async needs sm_80 or newer: use the Generic Atom for older GPUs");
  static_assert(N >= 0 && N < 32, "cp.async.wait_group takes an immediate in 0..31");
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

/// cpAsyncWait with a run-time count in 0..kMax (kMax < 32): dispatches to the
/// immediate form. Counts above kMax wait for more than asked (still correct).
template <int kMax>
__device__ __forceinline__ void cpAsyncWaitDyn(int pending) {
  if constexpr (kMax <= 0) {
    cpAsyncWait<0>();
  } else {
    if (pending >= kMax) cpAsyncWait<kMax>();
    else cpAsyncWaitDyn<kMax - 1>(pending);
  }
}

/// cp.async.wait_all: waits for all of this thread's cp.async.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void cpAsyncWaitAll() {
  static_assert(kArch >= 800, "cp.async needs sm_80 or newer: use the Generic Atom for older GPUs");
  asm volatile("cp.async.wait_all;" ::: "memory");
}

} // namespace purlin::arch

#endif // __CUDACC__
