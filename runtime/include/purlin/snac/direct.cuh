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
/// Copy-engine form (Plan::directEngine, large messages; not modelled by the
/// IR yet): the bulk moves are cudaMemcpyAsync nodes of the captured graph
/// and the kernels below only arrive, reduce and finish. AllGather /
/// AllToAll announce their copies with PUT from the finish kernel;
/// ReduceScatter / AllReduce (n == 2) announce each chunk with a stream
/// memory operation writing E_PUT(k) / E_BACK(k) (protocol.h); one
/// directEngineReduceKernel per chunk reduces it as it lands, and the
/// finish kernel resets those flags.
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

/// Copy-engine form of the direct program (Plan::directEngine), first kernel: one CTA arrives (ARRIVED(r, 0) at every peer, waits for
/// theirs), so the copy-engine transfers the launcher captures after it may
/// write into the peers' outputs. The call's epoch is not advanced here.
/// (A template, like every kernel in these headers, so that each translation
/// unit's instantiation is a weak definition.)
template <CollKind K>
__global__ void directEngineArriveKernel(DeviceComm dc) {
  const uint64_t e = ctaBeginCall(dc);
  (void)detail::ctaDirectArrive(dc, e, 0);
}

/// Copy-engine form of ReduceScatter / AllReduce (n == 2, peer q), the SM
/// part for chunk k of partition r (engineChunkBytes): one kernel per
/// chunk, on the call's stream after this rank's own copy of chunk k of
/// partition q (a graph edge, so in any schedule both ranks' pushes of
/// chunk k precede their reductions of it). Waits E_PUT(k) >= 1 (q's copy
/// engine has written chunk k into this rank's output, and its memory
/// operation published it), then reduces this CTA's slice of the chunk in
/// place, in ascending rank order (fp32 accumulation, one rounding: the
/// same bits as the SM form). No epoch of its own: stream-ordered between
/// the call's arrive and finish kernels.
/// Launch: grid = plan.directCtas, block = kDirectEngineReduceThreads.
template <CollKind K, class E, RedOp Op>
__global__ void __launch_bounds__(kDirectEngineReduceThreads)
    directEngineReduceKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out, int k, std::size_t begin,
                             std::size_t chunk) {
  static_assert(K == CollKind::ReduceScatter || K == CollKind::AllReduce,
                "the engine reduce kernel serves ReduceScatter / AllReduce");
  const int r = pl.rank, c = int(blockIdx.x), C = int(gridDim.x);
  const atom::Slice s{threadIdx.x, blockDim.x};
  const std::byte* mine = in + pl.txOff[r] + begin;
  std::byte* landed = out + pl.rxOff[r] + begin;
  if (!ctaWaitSignal(dc, enginePutIndex(k), 1)) return;
  const std::size_t b = sliceBegin(chunk, C, c), n = sliceSize(chunk, C, c);
  const uint4* a = r == 0 ? detail::vec(mine + b) : detail::vec(landed + b);
  const uint4* x = r == 0 ? detail::vec(landed + b) : detail::vec(mine + b);
  atom::detail::reduceVec16Pair<E, Op>(detail::vec(landed + b), nullptr, a, x, n / 16, s);
}

/// Copy-engine form, last kernel (stream-ordered after this rank's copy
/// branch, joined before it, and after the reduce kernels), then ends the
/// call (advances the epoch). AllGather / AllToAll: PUT(r, 0) at every
/// peer, wait for every peer's PUT (their copies into this rank's output
/// are complete). AllReduce: wait E_BACK(k) >= 1 for every chunk of
/// partition q (q's reduced partition is in this rank's output). Reductions
/// then reset this rank's E_PUT / E_BACK to 0: every memory operation that
/// writes them in this call has been observed (E_PUT by the reduce
/// kernels, E_BACK here), and the peer's next writes come only after this
/// rank's next ARRIVED.
template <CollKind K>
__global__ void directEngineFinishKernel(DeviceComm dc, Plan pl) {
  const uint64_t e = ctaBeginCall(dc);
  if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll) {
    const uint64_t v = signalValue(e, 0);
    detail::ctaDirectNotify(dc, -1, putIndex(dc.rank, 0), v);
    (void)detail::ctaDirectWait(dc, -1, [](int p) { return putIndex(p, 0); }, v);
  } else {
    bool ok = true;
    if constexpr (K == CollKind::AllReduce) {
      const int q = 1 - pl.rank;
      const int chunks = engineChunks(true, pl.txLen[q]);
      for (int k = 0; k < chunks && ok; ++k) ok = ctaWaitSignal(dc, engineBackIndex(k), 1);
    }
    if (ok) {
      uint64_t* own = dc.signals[dc.rank];
      for (uint32_t i = threadIdx.x; i < 2u * uint32_t(kMaxEngineChunks); i += blockDim.x)
        *reinterpret_cast<volatile uint64_t*>(own + kEnginePutBase + i) = 0;
    }
  }
  ctaEndCall(dc, e);
}

} // namespace purlin::snac
