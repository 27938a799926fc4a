/// @file tp_stage.cuh
/// @brief Throughput program, role `stage` (paper Algorithm 1 lines 1-5):
/// copy this rank's input chunks into its staging half with Atom::copy
/// (slices across the stage CTAs), the last arriver notifying STAGED — to
/// every peer for a packed input (AllGather), to the partition's owner for a
/// scattered/transposed input. A slot is reused only after every consumer
/// of its previous round sent CONSUMED. (A rank's own contribution is never
/// staged: see tp_consume.cuh.)
#pragma once

#include "purlin/snac/primitives.cuh"
#include "purlin/snac/tp_context.cuh"

namespace purlin::snac {

/// Waits until every consumer of the chunk that used slot (j % slots) in the
/// previous round has released it. CTA-collective; false if a wait gave up.
__device__ __forceinline__ bool ctaWaitSlotFree(const TpContext& cx, int j) {
  const int prev = j - cx.pl.slots;
  if (prev < 0) return true;
  const int slot = cx.slotOf(prev);
  const uint64_t want = cx.sig(cx.roundOf(prev));
  const int r = cx.pl.rank;
  int ok = 1;
  if (threadIdx.x == 0) {
    if (cx.pl.kind == CollKind::AllGather) {
      for (int q = 0; q < cx.pl.n && ok; ++q)
        if (q != r) ok = waitSignal(cx.dc, consumedIndex(q, slot), want);
    } else {
      const int k = cx.stageDest(r, prev % cx.pl.stageParts());
      ok = waitSignal(cx.dc, consumedIndex(k, slot), want);
    }
  }
  return __syncthreads_and(ok) != 0;
}

/// Role `stage`, CTA `i` of `ctas`.
template <class AtomT>
__device__ void stageRole(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.stageSequence();
  std::byte* mine = cx.staging(r);
  for (int j = 0; j < J; ++j) {
    const int c = j / pl.stageParts();
    const int k = pl.kind == CollKind::AllGather ? r : cx.stageDest(r, j % pl.stageParts());
    if (!ctaWaitSlotFree(cx, j)) return;
    const std::size_t len = chunkSize(pl.txLen[k], pl.chunk, c);
    const std::byte* src = in + pl.txOff[k] + chunkBegin(pl.txLen[k], pl.chunk, c);
    std::byte* dst = mine + std::size_t(cx.slotOf(j)) * pl.chunk;
    const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);
    if (sz) AtomT::copy(dst + b, src + b, sz, cx.ws);
    if (ctaArriveLast(cx.dc, kStageCounterBase + uint32_t(cx.slotOf(j)), ctas) && threadIdx.x == 0) {
      const uint32_t idx = stagedIndex(r, cx.slotOf(j));
      if (pl.kind == CollKind::AllGather) notifyAll(cx.dc, idx, cx.sig(cx.roundOf(j)), false);
      else notify(cx.dc, k, idx, cx.sig(cx.roundOf(j)));
    }
  }
}

} // namespace purlin::snac
