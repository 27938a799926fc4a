/// @file direct.cuh
/// @brief The direct program's primitives and its copy-engine form
/// (docs/snac-protocol.md "Direct program"): no staging; every CTA c of
/// rank r writes its slice of the data straight into the destination ranks'
/// output buffers (mapped by Communicator::registerDirect when the call was
/// captured), after the destination's CTA c has ARRIVED, and notifies PUT
/// after each round. Epochs as everywhere (epoch.cuh): ARRIVED/PUT/BACK
/// carry sig(e, round) and are never reset.
///
/// The kernel form is printed by purlinc from the SNAC IR (NAME_direct,
/// NAME_directKernel in the generated .cu; docs/codegen.md "Direct
/// program"; the hand-written one is at commit cfcd7a0). Here: the
/// CTA-collective arrive / notify / wait of the direct signals and the
/// 16-byte vector view the printed code and the kernels below use.
///
/// The copy-engine form (Plan::directEngine, large messages) is printed by
/// purlinc from the IR too (NAME_engine and its kernel nodes; graph.cuh
/// holds the host primitives it calls).
#pragma once

#include "purlin/atom/atom.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

/// One thread: tells rank `dst` that this rank's CTA `c` started the call
/// of epoch `e` (ARRIVED = sig(e, 0)), after writing its ARRIVED_TAG
/// packetHeader(e, tag) (tag: Plan::flowTagTo[dst]); the release store
/// orders the two.
__device__ __forceinline__ void notifyArrived(const DeviceComm& dc, int dst, int c, uint64_t e, uint32_t tag) {
  arch::stRelaxedSys(dc.signals[dst] + arrivedTagIndex(dc.rank, c), packetHeader(e, tag));
  arch::stReleaseSys(dc.signals[dst] + arrivedIndex(dc.rank, c), signalValue(e, 0));
}

/// One thread: waits for rank `src`'s ARRIVED of CTA `c` in the call of
/// epoch `e`, then compares its ARRIVED_TAG with packetHeader(e, tag) (tag:
/// Plan::flowTagFrom[src]). False if the wait gave up, or if the tag
/// differs: the source called another collective, count, dtype, op or root,
/// or (an eager call on a registered buffer) its output is another
/// registration or another offset in it; that records ArrivalMismatch and
/// fails the communicator on every rank, before this CTA writes anything
/// into the source's output. (The copy-engine form's arrive kernel finds it
/// too, but the copies the host enqueued after it still run.)
__device__ __forceinline__ bool waitArrived(const DeviceComm& dc, int src, int c, uint64_t e, uint32_t tag) {
  if (!waitSignal(dc, arrivedIndex(src, c), signalValue(e, 0))) return false;
  const uint64_t want = packetHeader(e, tag), seen = arch::ldRelaxedSys(dc.signals[dc.rank] + arrivedTagIndex(src, c));
  if (seen == want) return true;
  recordWaitError(dc, WaitErrorKind::ArrivalMismatch, uint32_t(src), want, seen);
  return false;
}

namespace detail {

/// CTA-collective: after a barrier (this CTA's writes are done), thread 0
/// publishes them (fence.acq_rel.sys) and writes `value` into signal
/// `index` of rank `dst` (every peer when dst < 0).
__device__ __forceinline__ void ctaDirectNotify(const DeviceComm& dc, int dst, uint32_t index, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) {
    arch::fenceAcqRelSys();
    for (int p = 0; p < dc.size; ++p)
      if (p != dc.rank && (dst < 0 || p == dst)) arch::stReleaseSys(dc.signals[p] + index, value);
  }
}

/// CTA-collective: thread 0 waits until signal `indexOf(p)` >= value for
/// every peer p (or only `src` when src >= 0); then a barrier. False if a
/// checked wait gave up.
template <class IndexOf>
__device__ __forceinline__ bool ctaDirectWait(const DeviceComm& dc, int src, IndexOf indexOf, uint64_t value) {
  int ok = 1;
  if (threadIdx.x == 0)
    for (int p = 0; p < dc.size && ok; ++p)
      if (p != dc.rank && (src < 0 || p == src)) ok = waitSignal(dc, indexOf(p), value);
  return __syncthreads_and(ok) != 0;
}

__device__ __forceinline__ uint4* vec(std::byte* p) { return reinterpret_cast<uint4*>(p); }
__device__ __forceinline__ const uint4* vec(const std::byte* p) { return reinterpret_cast<const uint4*>(p); }

} // namespace detail

} // namespace purlin::snac
