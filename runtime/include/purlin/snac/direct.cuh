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

namespace detail {

/// CTA-collective: notify ARRIVED(r, c) at every peer, then wait for every
/// peer's ARRIVED(p, c) of this call. False if a checked wait gave up.
__device__ __forceinline__ bool ctaDirectArrive(const DeviceComm& dc, uint64_t e, int c) {
  int ok = 1;
  if (threadIdx.x == 0) {
    const uint64_t v = signalValue(e, 0);
    for (int p = 0; p < dc.size; ++p)
      if (p != dc.rank) arch::stReleaseSys(dc.signals[p] + arrivedIndex(dc.rank, c), v);
    for (int p = 0; p < dc.size && ok; ++p)
      if (p != dc.rank) ok = waitSignal(dc, arrivedIndex(p, c), v);
  }
  return __syncthreads_and(ok) != 0;
}

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
