/// @file tp_push.cuh
/// @brief Throughput program, push transfer (docs/snac-protocol.md
/// "Throughput program, push transfer"): the stage role writes each chunk
/// over NVLink into the destination's staging region of this rank; consume
/// and gather roles read only local memory. Every chunk belongs to ONE CTA
/// of its role (step j goes to CTA j mod ctas), so the CTAs of a role stream
/// independently and up to `ctas` chunks are in flight per role; the
/// last-arriver counter of a chunk would have one arrival, so the arriving
/// CTA notifies directly (after __syncthreads, fence.acq_rel.sys, then
/// st.release.sys by thread 0).
#pragma once

#include "purlin/snac/primitives.cuh"
#include "purlin/snac/tp_context.cuh"

namespace purlin::snac {

/// Role `stage` (push), CTA `i` of `ctas`: for each step j = c*(n-1)+m
/// with j mod ctas == i, chunk c of the bytes for k = (r+1+m) % n: wait for
/// k's CONSUMED of the slot's previous round, copy into k's region r, notify
/// STAGED[r][slot] on k.
template <class AtomT>
__device__ void pushStageRole(const TpContext& cx, const std::byte* in, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  for (int j = i; j < J; j += ctas) {
    const int c = j / (pl.n - 1);
    const int k = cx.pushDest(r, j);
    if (c >= pl.slots) {
      const int prev = c - pl.slots;
      if (!ctaWaitSignal(cx.dc, consumedIndex(k, cx.pushSlotOf(prev)), cx.sig(cx.pushRoundOf(prev)))) return;
    }
    const std::size_t len = chunkSize(pl.txLen[k], pl.chunk, c);
    if (len) AtomT::copy(cx.pushSlot(k, r, c), in + pl.txOff[k] + chunkBegin(pl.txLen[k], pl.chunk, c), len, cx.ws);
    __syncthreads();
    if (threadIdx.x == 0) notify(cx.dc, k, stagedIndex(r, cx.pushSlotOf(c)), cx.sig(cx.pushRoundOf(c)));
  }
}

/// Role `consume` (push) of a copy collective (AllGather, AllToAll), CTA
/// `i` of `ctas`: step j = c*(n-1)+m receives chunk c from s = (r-1-m) mod n.
/// Before the first source of chunk c (m == 0) the CTA copies chunk c of its
/// own contribution input -> output (local work while the chunk arrives;
/// skipped in place). Then: wait STAGED[s][slot], copy own region s ->
/// output partition s, CONSUMED[r][slot] to s if the slot is reused.
template <class AtomT>
__device__ void pushConsumeCopyRole(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  const std::byte* ownSrc = in + (pl.kind == CollKind::AllGather ? 0 : pl.txOff[r]);
  std::byte* ownDst = out + pl.rxOff[r];
  for (int j = i; j < J; j += ctas) {
    const int c = j / (pl.n - 1);
    if (j % (pl.n - 1) == 0 && ownSrc != ownDst) {
      const std::size_t len = chunkSize(pl.rxLen[r], pl.chunk, c), off = chunkBegin(pl.rxLen[r], pl.chunk, c);
      if (len) AtomT::copy(ownDst + off, ownSrc + off, len, cx.ws);
      __syncthreads();  // the Atom workspace is reused by the next copy
    }
    const int s = cx.pushSource(r, j);
    const int slot = cx.pushSlotOf(c);
    if (!ctaWaitSignal(cx.dc, stagedIndex(s, slot), cx.sig(cx.pushRoundOf(c)))) return;
    const std::size_t len = chunkSize(pl.rxLen[s], pl.chunk, c);
    if (len) AtomT::copy(out + pl.rxOff[s] + chunkBegin(pl.rxLen[s], pl.chunk, c), cx.pushSlot(r, s, c), len, cx.ws);
    __syncthreads();
    if (threadIdx.x == 0 && cx.pushReused(c)) notify(cx.dc, s, consumedIndex(r, slot), cx.sig(cx.pushRoundOf(c)));
  }
}

/// Role `consume` (push) of a reduction, CTA `i` of `ctas`: chunk c of
/// partition r for c mod ctas == i. Wait STAGED[p][slot] from every p != r;
/// reduce in ascending rank order (own input for p == r, own region p
/// otherwise) into output partition r; CONSUMED[r][slot] to every p on slot
/// reuse. `Compose` (AllReduce): then wait the Y slot's previous round
/// GATHERED from every q != r, copy the reduced chunk into q's Y region r,
/// and notify REDUCED[r][yslot] on every q != r.
template <class AtomT, class E, RedOp Op, bool Compose>
__device__ void pushConsumeReduceRole(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  for (int c = i; c < pl.cpp; c += ctas) {
    const int slot = cx.pushSlotOf(c);
    const uint64_t want = cx.sig(cx.pushRoundOf(c));
    int ok = 1;
    if (threadIdx.x == 0)
      for (int p = 0; p < pl.n && ok; ++p)
        if (p != r) ok = waitSignal(cx.dc, stagedIndex(p, slot), want);
    if (!__syncthreads_and(ok)) return;
    const std::size_t len = chunkSize(pl.txLen[r], pl.chunk, c);
    const std::size_t off = chunkBegin(pl.txLen[r], pl.chunk, c);
    std::byte* dst = out + pl.rxOff[r] + off;
    if (len) {
      const std::byte* sources[kMaxRanks];
      for (int p = 0; p < pl.n; ++p) sources[p] = p == r ? in + pl.txOff[r] + off : cx.pushSlot(r, p, c);
      AtomT::template reduce<E, Op>(dst, sources, len, pl.n, cx.ws);
    }
    __syncthreads();
    if (threadIdx.x == 0 && cx.pushReused(c)) {
      arch::fenceAcqRelSys();
      for (int p = 0; p < pl.n; ++p)
        if (p != r) arch::stReleaseSys(cx.dc.signals[p] + consumedIndex(r, slot), want);
    }
    if constexpr (Compose) {
      const int ys = cx.ySlotOf(c);
      if (c >= pl.ySlots) {
        const int prev = c - pl.ySlots;
        ok = 1;
        if (threadIdx.x == 0)
          for (int q = 0; q < pl.n && ok; ++q)
            if (q != r) ok = waitSignal(cx.dc, gatheredIndex(q, ys), cx.sig(cx.yRoundOf(prev)));
        if (!__syncthreads_and(ok)) return;
      }
      for (int q = 0; q < pl.n; ++q) {
        if (q == r) continue;
        if (len) AtomT::copy(cx.pushYSlot(q, r, c), dst, len, cx.ws);
        __syncthreads();
      }
      if (threadIdx.x == 0) {
        arch::fenceAcqRelSys();
        for (int q = 0; q < pl.n; ++q)
          if (q != r) arch::stReleaseSys(cx.dc.signals[q] + reducedIndex(r, ys), cx.sig(cx.yRoundOf(c)));
      }
    }
  }
}

/// Role `gather` (push, AllReduce's G), CTA `i` of `ctas`: step j =
/// c*(n-1)+m receives partition k = (r-1-m) mod n's chunk c: wait
/// REDUCED[k][yslot], copy own Y region k -> output partition k (local),
/// GATHERED[r][yslot] to k when the Y slot is reused.
template <class AtomT>
__device__ void pushGatherRole(const TpContext& cx, std::byte* out, int i, int ctas) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  for (int j = i; j < J; j += ctas) {
    const int c = j / (pl.n - 1);
    const int k = cx.pushSource(r, j);
    const int ys = cx.ySlotOf(c);
    if (!ctaWaitSignal(cx.dc, reducedIndex(k, ys), cx.sig(cx.yRoundOf(c)))) return;
    const std::size_t len = chunkSize(pl.rxLen[k], pl.chunk, c);
    if (len) AtomT::copy(out + pl.rxOff[k] + chunkBegin(pl.rxLen[k], pl.chunk, c), cx.pushYSlot(r, k, c), len, cx.ws);
    __syncthreads();
    if (threadIdx.x == 0 && cx.yReused(c)) notify(cx.dc, k, gatheredIndex(r, ys), cx.sig(cx.yRoundOf(c)));
  }
}

} // namespace purlin::snac
