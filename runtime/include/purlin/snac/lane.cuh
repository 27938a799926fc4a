/// @file lane.cuh
/// @brief Lanes: a CTA split into L independent workers (L = 1 or 2), each
/// a contiguous group of blockDim/L threads with its own named barrier and
/// its own share of the Atom workspace. The push throughput roles printed
/// by purlinc run one worker per lane (docs/snac-protocol.md "Throughput
/// program, push transfer"): while one lane drains its fence before a
/// notify, the other keeps copying.
#pragma once

#include <cstddef>

#include "purlin/atom/atom.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

/// The Atom type a lane of an L-lane CTA uses: the same datapath with
/// Stages / L pipeline stages, so L lanes share the CTA's workspace.
/// `supported`: L lanes can share this Atom's workspace (L == 1, or an
/// Atom whose stage count L divides: lanesSplitStages, plan.h, the rule
/// makePlan's pushLanes applies too).
template <class A, int L> struct LaneAtomOf {
  static constexpr bool supported = L == 1;
  using type = A;
};
template <class Arch, int S, int SB, int L> struct LaneAtomOf<atom::Atom<Arch, S, SB>, L> {
  static constexpr bool supported = lanesSplitStages(L, S);
  using type = atom::Atom<Arch, lanesSplitStages(L, S) ? S / L : S, SB>;
};
/// A kernel for one (dtype, op) pair: its lanes' Atoms are for the pair too.
template <class A, int Pair, int L> struct LaneAtomOf<atom::PairAtom<A, Pair>, L> {
  static constexpr bool supported = LaneAtomOf<A, L>::supported;
  using type = atom::PairAtom<typename LaneAtomOf<A, L>::type, Pair>;
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

} // namespace purlin::snac
