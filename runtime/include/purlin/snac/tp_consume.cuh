/// @file tp_consume.cuh
/// @brief Throughput program, role `consume` (pull): copy collectives first
/// copy this rank's own contribution input -> output; then wait for STAGED, then
/// read peers' staging with Atom::copy (copy collectives: AllGather into the
/// scattered output, AllToAll into the transposed output) or Atom::reduce
/// (reductions: all n sources in ascending rank order, this rank's own from
/// its input, into the output or, for a compose, into the intermediate Y in
/// this rank's staging). The last arriver of a chunk sends CONSUMED to the
/// sources whose slot is reused later in the call, and (compose) REDUCED to
/// every rank.
#pragma once

#include "purlin/snac/primitives.cuh"
#include "purlin/snac/tp_context.cuh"

namespace purlin::snac {

/// Role `consume` of a copy collective, CTA `i` of `ctas`.
template <class AtomT>
__device__ void consumeCopyRole(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  // First this rank's own contribution, input -> output (skipped in place):
  // local work done while the stage role fills the first slots.
  {
    const std::byte* src = in + (pl.kind == CollKind::AllGather ? 0 : pl.txOff[r]);
    std::byte* dst = out + pl.rxOff[r];
    const std::size_t len = pl.rxLen[r];
    const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);
    if (src != dst && sz) AtomT::copy(dst + b, src + b, sz, cx.ws);
    __syncthreads();  // the Atom workspace is reused by the next copy
  }
  for (int c = 0; c < pl.cpp; ++c) {
    for (int s = 1; s < pl.n; ++s) {
      const int p = (r + pl.n - s) % pl.n;
      const int j = cx.seqIndex(p, r, c);
      const int slot = cx.slotOf(j);
      if (!ctaWaitSignal(cx.dc, stagedIndex(p, slot), cx.sig(cx.roundOf(j)))) return;
      const std::size_t len = chunkSize(pl.rxLen[p], pl.chunk, c);
      const std::byte* src = cx.staging(p) + std::size_t(slot) * pl.chunk;
      std::byte* dst = out + pl.rxOff[p] + chunkBegin(pl.rxLen[p], pl.chunk, c);
      const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);
      if (sz) AtomT::copy(dst + b, src + b, sz, cx.ws);
      const uint32_t counter = kConsumeCounterBase + uint32_t(p) * kMaxSlots + uint32_t(slot);
      if (ctaArriveLast(cx.dc, counter, ctas) && threadIdx.x == 0 && cx.slotReused(j))
        notify(cx.dc, p, consumedIndex(r, slot), cx.sig(cx.roundOf(j)));
    }
  }
}

/// Waits until every rank has gathered the previous round of Y slot of chunk
/// c (compose only). CTA-collective; false if a wait gave up.
__device__ __forceinline__ bool ctaWaitYFree(const TpContext& cx, int c) {
  if (c < cx.pl.ySlots) return true;
  const int prev = c - cx.pl.ySlots;
  int ok = 1;
  if (threadIdx.x == 0)
    for (int q = 0; q < cx.pl.n && ok; ++q)
      ok = waitSignal(cx.dc, gatheredIndex(q, cx.ySlotOf(prev)), cx.sig(cx.yRoundOf(prev)));
  return __syncthreads_and(ok) != 0;
}

/// Role `consume` of a reduction (ReduceScatter, or F of AllReduce when
/// `Compose`), CTA `i` of `ctas`.
template <class AtomT, class E, RedOp Op, bool Compose>
__device__ void consumeReduceRole(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int anchor = (r + 1) % pl.n;  // its slot numbers this rank's counter uses
  for (int c = 0; c < pl.cpp; ++c) {
    int ok = 1;
    if (threadIdx.x == 0)
      for (int p = 0; p < pl.n && ok; ++p) {
        if (p == r) continue;
        const int j = cx.seqIndex(p, r, c);
        ok = waitSignal(cx.dc, stagedIndex(p, cx.slotOf(j)), cx.sig(cx.roundOf(j)));
      }
    if (!__syncthreads_and(ok)) return;
    if (Compose && !ctaWaitYFree(cx, c)) return;
    const std::size_t len = chunkSize(pl.txLen[r], pl.chunk, c);
    const std::size_t off = chunkBegin(pl.txLen[r], pl.chunk, c);
    const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);
    std::byte* dst = Compose ? cx.ySlot(r, c) : out + pl.rxOff[r] + off;
    if (sz) {
      const std::byte* sources[kMaxRanks];
      for (int p = 0; p < pl.n; ++p)
        sources[p] = (p == r ? in + pl.txOff[r] + off
                             : cx.staging(p) + std::size_t(cx.slotOf(cx.seqIndex(p, r, c))) * pl.chunk) + b;
      AtomT::template reduce<E, Op>(dst + b, sources, sz, pl.n, cx.ws);
    }
    const uint32_t counter = kConsumeCounterBase + uint32_t(cx.slotOf(cx.seqIndex(anchor, r, c)));
    if (ctaArriveLast(cx.dc, counter, ctas) && threadIdx.x == 0) {
      arch::fenceAcqRelSys();
      for (int p = 0; p < pl.n; ++p) {
        if (p == r) continue;
        const int j = cx.seqIndex(p, r, c);
        if (cx.slotReused(j)) arch::stReleaseSys(cx.dc.signals[p] + consumedIndex(r, cx.slotOf(j)), cx.sig(cx.roundOf(j)));
      }
      if (Compose) notifyAll(cx.dc, reducedIndex(r, cx.ySlotOf(c)), cx.sig(cx.yRoundOf(c)), true);
    }
  }
}

} // namespace purlin::snac
