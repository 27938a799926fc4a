/// @file epoch.cuh
/// @brief Per-CTA epochs kept on the device (paper §4.2; docs/snac-protocol.md
/// "Per-CTA epochs"): CTA i reads DeviceState::epochs[i] after the grid
/// dependency wait and before its end barrier (all slots are equal between
/// calls, so every CTA sees the call's epoch e); at its end it writes e+1 to
/// every slot j = i (mod gridDim). No atomics and no
/// CTA waits for another; the kernel boundary (or, under programmatic
/// dependent launch, griddepcontrol.wait, which waits for the previous grid's
/// completion and memory flush) publishes the slots to the next call. Nothing
/// happens on the host per call, so calls can be captured in CUDA graphs.
/// Calls on one communicator are stream-ordered (like NCCL).
///
/// Programmatic dependent launch (sm_90+): every kernel first waits for the
/// previous grid of the stream (gridDependencyWait, also inside ctaBeginCall;
/// a no-op when the kernel was not launched with the programmatic-
/// serialization attribute), so nothing of a call touches memory before the
/// previous call has fully finished.
#pragma once

#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/device_comm.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

/// Waits until the previous grid of the stream completed and its memory is
/// visible (programmatic dependent launch). No-op before sm_90 and when the
/// kernel was launched without the programmatic attribute.
__device__ __forceinline__ void gridDependencyWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Allows the next grid of the stream (launched with the programmatic
/// attribute) to be scheduled now; it still waits in gridDependencyWait()
/// for this grid's completion. No-op before sm_90.
__device__ __forceinline__ void gridLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The epoch of the current call (>= 1), the same in every thread of the
/// grid, for a kernel that has already called gridDependencyWait(). Every
/// thread loads its CTA's slot (one broadcast transaction per warp); nobody
/// writes slot blockIdx.x before this CTA's ctaEndCall barrier. Needs
/// gridDim.x <= kMaxEpochSlots (checked by the launcher).
__device__ __forceinline__ uint64_t ctaEpoch(const DeviceComm& dc) {
  return *reinterpret_cast<volatile const uint64_t*>(&dc.state->epochs[blockIdx.x]);
}

/// Checked mode: the call check with peer `p`, for the call whose check
/// values are `toPeer` (written to p) and `fromPeer` (expected from p;
/// plan_impl.h callCheckFor), (docs/runtime.md "Failure model"), by one
/// thread. If `write`, writes this call's CALL value (epoch and toPeer)
/// into peer p's CALL slot of this rank; then waits for peer p's value of
/// this epoch and compares it with fromPeer. A mismatch (the peer called
/// with another kind, count, dtype, op or root, or AllToAllV counts whose
/// two ends disagree) records WaitErrorKind::Mismatch and fails the
/// communicator on every rank (recordWaitError); every later wait of the
/// call then gives up before its data is used (checkedFailed). A wait that
/// gives up has recorded why. Costs one round trip between the ranks per
/// call, in checked mode only. Inlined, as recordWaitError (primitives.cuh)
/// says why.
/// What exchangeWith found.
enum class Exchange { Match, Differs, GaveUp };

/// One thread: if `write`, writes callCheckValue(epoch, mine) into peer p's
/// slot Index(epoch, this rank); waits for peer p's value of this epoch in
/// this rank's slot Index(epoch, p) (*seen) and compares it with
/// callCheckValue(epoch, want). GaveUp: the wait gave up (it recorded why).
/// The call check's exchange (CALL) and a device-count call's two rounds
/// (CALL, VERDICT: device_counts.cuh).
template <uint32_t (*Index)(uint64_t, int)>
__device__ __forceinline__ Exchange exchangeWith(const DeviceComm& dc, uint64_t mine, uint64_t want, uint64_t epoch,
                                                 int p, bool write, uint64_t& seen) {
  const uint64_t value = callCheckValue(epoch, mine), expect = callCheckValue(epoch, want);
  if (write) arch::stReleaseSys(dc.signals[p] + Index(epoch, dc.rank), value);
  const uint64_t* slot = dc.signals[dc.rank] + Index(epoch, p);
  SpinBound bound;
  while (((seen = arch::ldAcquireSys(slot)) >> 32) != (expect >> 32))
    if (!bound.step(dc, WaitKind::Signal, Index(epoch, p), expect, seen)) return Exchange::GaveUp;
  return seen == expect ? Exchange::Match : Exchange::Differs;
}

/// checkCallWith returns whether peer p's value matched (false: a
/// mismatch, recorded, or a wait that gave up, recorded too).
__device__ __forceinline__ bool checkCallWith(const DeviceComm& dc, uint64_t toPeer, uint64_t fromPeer,
                                              uint64_t epoch, int p, bool write) {
  uint64_t v = 0;
  const Exchange x = exchangeWith<callCheckIndex>(dc, toPeer, fromPeer, epoch, p, write, v);
  if (x == Exchange::Differs)
    recordWaitError(dc, WaitKind::Mismatch, uint32_t(p), callCheckValue(epoch, fromPeer) & 0xffffffffu,
                    v & 0xffffffffu);
  return x == Exchange::Match;
}

/// Checked mode: the call check as a kernel of its own, which the launcher
/// (snac::launch) enqueues before each call's program on the same stream
/// and without programmatic dependent launch: it runs once the previous
/// call's kernels have ended, and the program's first gridDependencyWait
/// (ctaBeginCall) orders it after the check. One CTA; thread p checks with
/// peer p (writes this rank's CALL value into p, waits for p's, compares).
/// A mismatch fails the communicator on every rank before any program
/// touches data: the program's waits then give up (checkedFailed).
///
/// Kept out of the programs' kernels: inlined there behind a branch on
/// a per-call DeviceComm field, its code alone made the unchecked latency
/// kernels 0.1-0.3 us slower per call (lat_floor_micro --loopback, one
/// H200, 2026-12-03; bench/results/2026-12-03-failure-model).
template <int = 0>
__global__ void callCheckKernel(DeviceComm dc, CallCheck check) {
  const uint64_t e = ctaEpoch(dc);  // epochs are equal between calls: slot 0 is this call's
  const int p = int(threadIdx.x);
  if (p < dc.size && p != dc.rank) checkCallWith(dc, check.toPeer[p], check.fromPeer[p], e, p, true);
}

/// Waits for the previous grid (see the file comment), then returns the
/// call's epoch (ctaEpoch). In checked mode the previous grid is the call
/// check (callCheckKernel).
__device__ __forceinline__ uint64_t ctaBeginCall(const DeviceComm& dc) {
  gridDependencyWait();
  return ctaEpoch(dc);
}

/// CTA-collective, called once by every CTA of the grid at its very end
/// (also after a checked-mode abort): after a barrier (every thread of this
/// CTA has read its slot), its threads write e+1 to the slots blockIdx.x +
/// k*gridDim.x (< kMaxEpochSlots). (A separate host-visible mirror word,
/// written by CTA 0 besides its slots, cost ~0.17 us per call at 1 KiB, E11;
/// the host reads epochs[0].)
__device__ __forceinline__ void ctaEndCall(const DeviceComm& dc, uint64_t epoch) {
  __syncthreads();
  // Weak stores suffice: only later grids read these, after the kernel
  // boundary or griddepcontrol.wait made them visible.
  const unsigned stride = blockDim.x * gridDim.x;
#pragma unroll 1
  for (unsigned slot = blockIdx.x + threadIdx.x * gridDim.x; slot < unsigned(kMaxEpochSlots); slot += stride)
    dc.state->epochs[slot] = epoch + 1;
}

} // namespace purlin::snac
