/// @file tp_gather.cuh
/// @brief Throughput program, role `gather` of a compose (AllReduce's
/// AllGather, paper Algorithm 1 lines 12-16): for each chunk and partition
/// owner k, wait REDUCED from k, copy k's intermediate Y_k[c] (in k's
/// staging) into output partition k with Atom::copy; the last arriver sends
/// GATHERED to k when k reuses that Y slot later in the call.
#pragma once

#include "purlin/snac/primitives.cuh"
#include "purlin/snac/tp_context.cuh"

namespace purlin::snac {

/// Role `gather`, CTA `i` of `ctas`.
template <class AtomT>
__device__ void gatherRole(const TpContext& cx, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  for (int c = 0; c < pl.cpp; ++c) {
    for (int s = 0; s < pl.n; ++s) {
      const int k = (r + s) % pl.n;
      const int ys = cx.ySlotOf(c);
      if (!ctaWaitSignal(cx.dc, reducedIndex(k, ys), cx.sig(cx.yRoundOf(c)))) return;
      const std::size_t len = chunkSize(pl.rxLen[k], pl.chunk, c);
      std::byte* dst = out + pl.rxOff[k] + chunkBegin(pl.rxLen[k], pl.chunk, c);
      const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);
      if (sz) AtomT::copy(dst + b, cx.ySlot(k, c) + b, sz, cx.ws);
      const uint32_t counter = kGatherCounterBase + uint32_t(k) * kMaxYSlots + uint32_t(ys);
      if (ctaArriveLast(cx.dc, counter, ctas) && threadIdx.x == 0 && cx.yReused(c))
        notify(cx.dc, k, gatheredIndex(r, ys), cx.sig(cx.yRoundOf(c)));
    }
  }
}

} // namespace purlin::snac
