/// @file tp_push.cuh
/// @brief Throughput program, push transfer (docs/snac-protocol.md
/// "Throughput program, push transfer"): the stage role writes each chunk
/// over NVLink into the destination's staging region of this rank; consume
/// and gather roles read only local memory.
///
/// Work distribution: a CTA of a role is split into `L` lanes (L = 1 or 2:
/// Plan::lanes for the stage role, Plan::consumeLanes for the others), each a contiguous group of blockDim/L threads with its own
/// named barrier and its own share of the Atom workspace. A role with C CTAs
/// has C*L workers; worker w = cta*L + lane takes the steps j = w, w + C*L,
/// ... of the role's sequence, each step one whole chunk. So workers stream
/// independently, up to C*L chunks are in flight per role, and while one
/// lane drains its fence before a notify the other lane keeps copying. The
/// last-arriver counter of a chunk would have one arrival, so the worker
/// notifies directly: lane barrier, then its leader thread does
/// fence.acq_rel.sys and st.release.sys.
#pragma once

#include "purlin/atom/atom.cuh"
#include "purlin/snac/primitives.cuh"
#include "purlin/snac/tp_context.cuh"

namespace purlin::snac {

/// The Atom type a lane of an L-lane CTA uses: the same datapath with
/// Stages / L pipeline stages, so L lanes share the CTA's workspace.
/// `supported`: L lanes can share this Atom's workspace (L == 1, or an
/// Atom whose stage count L divides).
template <class A, int L> struct LaneAtomOf {
  static constexpr bool supported = L == 1;
  using type = A;
};
template <class Arch, int S, int SB, int L> struct LaneAtomOf<atom::Atom<Arch, S, SB>, L> {
  static constexpr bool supported = L == 1 || (S % L == 0 && S >= L);
  using type = atom::Atom<Arch, (S % L == 0 && S >= L) ? S / L : S, SB>;
};

/// One lane: which threads, which barrier, which workspace.
template <int L> struct Lane {
  int lane;            ///< 0..L-1
  atom::Slice slice;   ///< this thread within the lane
  std::byte* ws;       ///< the lane's share of the Atom workspace

  __device__ __forceinline__ static Lane make(std::byte* ctaWs, std::size_t wsBytes) {
    const unsigned per = blockDim.x / L;
    const int l = int(threadIdx.x / per);
    return Lane{l, atom::Slice{threadIdx.x % per, per}, ctaWs + std::size_t(l) * (wsBytes / L)};
  }
  __device__ __forceinline__ bool leader() const { return slice.tid == 0; }
  /// Barrier of this lane's threads only (named barrier 1 + lane; L == 1:
  /// the CTA barrier).
  __device__ __forceinline__ void sync() const {
    if constexpr (L == 1) __syncthreads();
    else asm volatile("bar.sync %0, %1;" ::"r"(1 + lane), "r"(slice.nthr) : "memory");
  }
  /// Lane-collective: `ok` of the leader, seen by every thread of the lane
  /// after a lane barrier.
  __device__ __forceinline__ bool agree(int ok) const {
    __shared__ int flag[L];
    if (leader()) flag[lane] = ok;
    sync();
    return flag[lane] != 0;
  }
  /// Lane-collective wait (acquire) on this rank's signal `index`.
  __device__ __forceinline__ bool wait(const DeviceComm& dc, uint32_t index, uint64_t expected) const {
    int ok = 1;
    if (leader()) ok = waitSignal(dc, index, expected);
    return agree(ok);
  }
};

/// Role `stage` (push), worker w of W: steps j = c*(n-1)+m, j mod W == w,
/// chunk c of the bytes for k = (r+1+m) % n: wait for k's CONSUMED of the
/// slot's previous round, copy into k's region r, notify STAGED[r][slot] on k.
template <class AtomL, int L>
__device__ void pushStageRole(const TpContext& cx, const Lane<L>& ln, const std::byte* in, int w, int W) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  for (int j = w; j < J; j += W) {
    const int c = j / (pl.n - 1);
    const int k = cx.pushDest(r, j);
    if (c >= pl.slots) {
      const int prev = c - pl.slots;
      if (!ln.wait(cx.dc, consumedIndex(k, cx.pushSlotOf(prev)), cx.sig(cx.pushRoundOf(prev)))) return;
    }
    const std::size_t len = chunkSize(pl.txLen[k], pl.chunk, c);
    if (len)
      AtomL::copy(cx.pushSlot(k, r, c), in + pl.txOff[k] + chunkBegin(pl.txLen[k], pl.chunk, c), len, ln.ws, ln.slice);
    ln.sync();
    if (ln.leader()) notify(cx.dc, k, stagedIndex(r, cx.pushSlotOf(c)), cx.sig(cx.pushRoundOf(c)));
  }
}

/// Role `consume` (push) of a copy collective (AllGather, AllToAll), worker
/// w of W: step j = c*(n-1)+m receives chunk c from s = (r-1-m) mod n.
/// Before the first source of chunk c (m == 0) the worker copies chunk c of
/// this rank's own contribution input -> output (local work while the chunk
/// arrives; skipped in place). Then: wait STAGED[s][slot], copy own region s
/// -> output partition s, CONSUMED[r][slot] to s if the slot is reused.
template <class AtomL, int L>
__device__ void pushConsumeCopyRole(const TpContext& cx, const Lane<L>& ln, const std::byte* in, std::byte* out,
                                    int w, int W) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  const std::byte* ownSrc = in + (pl.kind == CollKind::AllGather ? 0 : pl.txOff[r]);
  std::byte* ownDst = out + pl.rxOff[r];
  for (int j = w; j < J; j += W) {
    const int c = j / (pl.n - 1);
    if (j % (pl.n - 1) == 0 && ownSrc != ownDst) {
      const std::size_t len = chunkSize(pl.rxLen[r], pl.chunk, c), off = chunkBegin(pl.rxLen[r], pl.chunk, c);
      if (len) AtomL::copy(ownDst + off, ownSrc + off, len, ln.ws, ln.slice);
      ln.sync();  // the Atom workspace is reused by the next copy
    }
    const int s = cx.pushSource(r, j);
    const int slot = cx.pushSlotOf(c);
    if (!ln.wait(cx.dc, stagedIndex(s, slot), cx.sig(cx.pushRoundOf(c)))) return;
    const std::size_t len = chunkSize(pl.rxLen[s], pl.chunk, c);
    if (len)
      AtomL::copy(out + pl.rxOff[s] + chunkBegin(pl.rxLen[s], pl.chunk, c), cx.pushSlot(r, s, c), len, ln.ws, ln.slice);
    ln.sync();
    if (ln.leader() && cx.pushReused(c)) notify(cx.dc, s, consumedIndex(r, slot), cx.sig(cx.pushRoundOf(c)));
  }
}

/// Role `consume` (push) of a reduction, worker w of W: chunk c of
/// partition r for c mod W == w. Wait STAGED[p][slot] from every p != r;
/// reduce in ascending rank order (own input for p == r, own region p
/// otherwise) into output partition r; CONSUMED[r][slot] to every p on slot
/// reuse. `Compose` (AllReduce): then wait the Y slot's previous round
/// GATHERED from every q != r, copy the reduced chunk into q's Y region r,
/// and notify REDUCED[r][yslot] on every q != r.
template <class AtomL, int L, class E, RedOp Op, bool Compose>
__device__ void pushConsumeReduceRole(const TpContext& cx, const Lane<L>& ln, const std::byte* in, std::byte* out,
                                      int w, int W) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  for (int c = w; c < pl.cpp; c += W) {
    const int slot = cx.pushSlotOf(c);
    const uint64_t want = cx.sig(cx.pushRoundOf(c));
    int ok = 1;
    if (ln.leader())
      for (int p = 0; p < pl.n && ok; ++p)
        if (p != r) ok = waitSignal(cx.dc, stagedIndex(p, slot), want);
    if (!ln.agree(ok)) return;
    const std::size_t len = chunkSize(pl.txLen[r], pl.chunk, c);
    const std::size_t off = chunkBegin(pl.txLen[r], pl.chunk, c);
    std::byte* dst = out + pl.rxOff[r] + off;
    if (len) {
      const std::byte* sources[kMaxRanks];
      for (int p = 0; p < pl.n; ++p) sources[p] = p == r ? in + pl.txOff[r] + off : cx.pushSlot(r, p, c);
      AtomL::template reduce<E, Op>(dst, sources, len, pl.n, ln.ws, ln.slice);
    }
    ln.sync();
    if (ln.leader() && cx.pushReused(c)) {
      arch::fenceAcqRelSys();
      for (int p = 0; p < pl.n; ++p)
        if (p != r) arch::stReleaseSys(cx.dc.signals[p] + consumedIndex(r, slot), want);
    }
    if constexpr (Compose) {
      const int ys = cx.ySlotOf(c);
      if (c >= pl.ySlots) {
        const int prev = c - pl.ySlots;
        ok = 1;
        if (ln.leader())
          for (int q = 0; q < pl.n && ok; ++q)
            if (q != r) ok = waitSignal(cx.dc, gatheredIndex(q, ys), cx.sig(cx.yRoundOf(prev)));
        if (!ln.agree(ok)) return;
      }
      for (int q = 0; q < pl.n; ++q) {
        if (q == r) continue;
        if (len) AtomL::copy(cx.pushYSlot(q, r, c), dst, len, ln.ws, ln.slice);
        ln.sync();
      }
      if (ln.leader()) {
        arch::fenceAcqRelSys();
        for (int q = 0; q < pl.n; ++q)
          if (q != r) arch::stReleaseSys(cx.dc.signals[q] + reducedIndex(r, ys), cx.sig(cx.yRoundOf(c)));
      }
    }
  }
}

/// Role `gather` (push, AllReduce's G), worker w of W: step j = c*(n-1)+m
/// receives partition k = (r-1-m) mod n's chunk c: wait REDUCED[k][yslot],
/// copy own Y region k -> output partition k (local), GATHERED[r][yslot] to
/// k when the Y slot is reused.
template <class AtomL, int L>
__device__ void pushGatherRole(const TpContext& cx, const Lane<L>& ln, std::byte* out, int w, int W) {
  const Plan& pl = cx.pl;
  const int r = pl.rank;
  const int J = pl.pushSequence();
  for (int j = w; j < J; j += W) {
    const int c = j / (pl.n - 1);
    const int k = cx.pushSource(r, j);
    const int ys = cx.ySlotOf(c);
    if (!ln.wait(cx.dc, reducedIndex(k, ys), cx.sig(cx.yRoundOf(c)))) return;
    const std::size_t len = chunkSize(pl.rxLen[k], pl.chunk, c);
    if (len)
      AtomL::copy(out + pl.rxOff[k] + chunkBegin(pl.rxLen[k], pl.chunk, c), cx.pushYSlot(r, k, c), len, ln.ws, ln.slice);
    ln.sync();
    if (ln.leader() && cx.yReused(c)) notify(cx.dc, k, gatheredIndex(r, ys), cx.sig(cx.yRoundOf(c)));
  }
}

/// The push program's CTA `b` (roles by CTA range, as for pull): LS lanes
/// per stage CTA, LC per consume / gather CTA (the caller checks
/// LaneAtomOf<AtomT, 2>::supported before instantiating a 2).
template <CollKind K, class AtomT, class E, RedOp Op, int LS, int LC>
__device__ void pushCta(const TpContext& cx, const std::byte* in, std::byte* out, int b) {
  const Plan& pl = cx.pl;
  const int consumeBegin = pl.stageCtas, gatherBegin = pl.stageCtas + pl.consumeCtas;
  if (b < consumeBegin) {
    const Lane<LS> ln = Lane<LS>::make(cx.ws, AtomT::kWorkspaceBytes);
    pushStageRole<typename LaneAtomOf<AtomT, LS>::type, LS>(cx, ln, in, b * LS + ln.lane, pl.stageCtas * LS);
    return;
  }
  using AtomC = typename LaneAtomOf<AtomT, LC>::type;
  const Lane<LC> ln = Lane<LC>::make(cx.ws, AtomT::kWorkspaceBytes);
  if (b < gatherBegin) {
    const int w = (b - consumeBegin) * LC + ln.lane, W = pl.consumeCtas * LC;
    if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll)
      pushConsumeCopyRole<AtomC, LC>(cx, ln, in, out, w, W);
    else
      pushConsumeReduceRole<AtomC, LC, E, Op, K == CollKind::AllReduce>(cx, ln, in, out, w, W);
  } else if constexpr (K == CollKind::AllReduce) {
    pushGatherRole<AtomC, LC>(cx, ln, out, (b - gatherBegin) * LC + ln.lane, pl.gatherCtas * LC);
  }
}

} // namespace purlin::snac
