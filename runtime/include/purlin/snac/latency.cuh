/// @file latency.cuh
/// @brief The latency program (paper §3.2, docs/snac-protocol.md "Latency
/// program"): one kernel of plan.latencyCtas x plan.latencyThreads (sized by
/// the payload, latencyShape). Push: every 504 payload bytes travel in one
/// full/empty packet group of 512 bytes (packet_group.cuh), one 16-byte slot
/// per lane of a warp, into the receiver's packet half (e & 1), region src =
/// this rank. Poll: the receiver's warp spins until every slot of the group
/// is full, empties it, and copies or reduces in ascending rank order (its
/// own contribution from its input).
///
/// Warp w of the grid handles groups g = w + i*Wg (Wg = warps of the grid);
/// lane l of group g carries payload words 63g + 2l and 63g + 2l + 1 (lane
/// 31: only the first; its second word is the collector). A lane loads the
/// input words it will send, pushes them, writes its own contribution (copy
/// collectives) or keeps it in registers (reductions) while the packets
/// travel, then polls. A lane reads every input word it will overwrite before
/// writing it, so NCCL's in-place forms are safe.
///
/// The call's epoch (which packet half) is read only after the lane's first
/// input loads were issued (CallEpoch; a lane with nothing to push reads it
/// after its empty program): both are L2 round trips right after the grid
/// dependency wait, and issued together they overlap instead of adding
/// (bench/NOTES.md E12).
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/snac/elementwise.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/packet_group.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

namespace latency_detail {

/// Number of 8-byte payload words of `len` bytes.
__device__ __forceinline__ std::size_t words(std::size_t len) { return (len + 7) / 8; }
__device__ __forceinline__ std::size_t wordBytes(std::size_t len, std::size_t w) {
  std::size_t left = len - 8 * w;
  return left < 8 ? left : 8;
}

/// The payload words lane `lane` carries in group `g` of a `len`-byte range:
/// j0 = 63g + 2*lane and j0 + 1 (not for lane 31), those below W = words(len).
struct LaneWords {
  std::size_t j0;
  bool has0, has1;
  __device__ __forceinline__ LaneWords(std::size_t g, int lane, std::size_t W)
      : j0(g * kGroupPayloadWords + 2 * std::size_t(lane)), has0(j0 < W), has1(lane < 31 && j0 + 1 < W) {}
};

/// Loads the lane's words of the `len`-byte range at `src` (absent ones 0).
/// W8 (Plan::words8): whole aligned words, one plain load each; otherwise
/// element-aligned with a short tail (elementwise.cuh). The generic path is
/// a separate instantiation so that the fast one stays short (measured:
/// the generic code in line cost ~0.2 us per call at 1 KiB, E11).
template <bool W8>
__device__ __forceinline__ void loadLane(const LaneWords& x, const std::byte* src, std::size_t len, uint64_t& a,
                                         uint64_t& b) {
  if constexpr (W8) {
    const auto* p = reinterpret_cast<const uint64_t*>(src);
    a = x.has0 ? p[x.j0] : 0;
    b = x.has1 ? p[x.j0 + 1] : 0;
  } else {
    a = x.has0 ? loadWord(src + 8 * x.j0, wordBytes(len, x.j0)) : 0;
    b = x.has1 ? loadWord(src + 8 * (x.j0 + 1), wordBytes(len, x.j0 + 1)) : 0;
  }
}

/// Stores the lane's words into the `len`-byte range at `dst`.
template <bool W8>
__device__ __forceinline__ void storeLane(const LaneWords& x, std::byte* dst, std::size_t len, uint64_t a, uint64_t b) {
  if constexpr (W8) {
    auto* p = reinterpret_cast<uint64_t*>(dst);
    if (x.has0) p[x.j0] = a;
    if (x.has1) p[x.j0 + 1] = b;
  } else {
    if (x.has0) storeWord(dst + 8 * x.j0, a, wordBytes(len, x.j0));
    if (x.has1) storeWord(dst + 8 * (x.j0 + 1), b, wordBytes(len, x.j0 + 1));
  }
}

/// The lane's slot of group `g` in a packet region.
__device__ __forceinline__ Packet* laneSlot(Packet* region, std::size_t g, int lane) {
  return region + g * kGroupSlots + std::size_t(lane);
}

/// The peers, packet regions, offsets and lengths of one call, for
/// i = 1..n-1 (regions in half 0; half h is `halfPackets * h` further):
///  - send[i-1]: this rank's region in rank (r+i)%n's packets (push order),
///    tx[i-1] = txOff[(r+i)%n];
///  - from[i-1] = (r+n-i)%n (the poll order of copies), recv[i-1] = rank
///    from[i-1]'s region in this rank's packets, rx[i-1] = rxOff[from[i-1]];
///  - recvFrom[p]: rank p's region (reductions poll in rank order);
///  - ownTx / ownRx: this rank's offsets; len: the bytes each source sends
///    in collective K (its whole input for the one-shot AllReduce).
/// They depend on the kernel's parameters only, so ctaRegions computes them
/// before the grid dependency wait: their constant-bank loads (indexed by
/// rank: each a miss) and the modulo arithmetic then overlap the previous
/// call (~0.2 us at 1 KiB in place, E11).
struct Regions {
  Packet* send[kMaxRanks - 1];
  Packet* recv[kMaxRanks - 1];
  Packet* recvFrom[kMaxRanks];
  std::size_t tx[kMaxRanks - 1], rx[kMaxRanks - 1], ownTx, ownRx, len, W, G;
  int from[kMaxRanks - 1];
  std::size_t halfPackets;
};

/// CTA-collective: fills `rg` (shared memory) for this rank and collective
/// K; call before gridDependencyWait (reads kernel parameters only). Needs
/// blockDim.x >= n.
template <CollKind K>
__device__ __forceinline__ void ctaRegions(const DeviceComm& dc, const Plan& pl, Regions& rg) {
  const int r = pl.rank, n = pl.n, t = int(threadIdx.x);
  if (t < n) rg.recvFrom[t] = packetRegion(dc, r, 0, t, pl.packetRegion);
  if (t >= 1 && t < n) {
    const int q = (r + t) % n, p = (r + n - t) % n;
    rg.from[t - 1] = p;
    rg.send[t - 1] = packetRegion(dc, q, 0, r, pl.packetRegion);
    rg.recv[t - 1] = packetRegion(dc, r, 0, p, pl.packetRegion);
    rg.tx[t - 1] = pl.txOff[q];
    rg.rx[t - 1] = pl.rxOff[p];
  }
  if (t == 0) {
    rg.halfPackets = dc.packetHalfBytes / sizeof(Packet);
    rg.ownTx = pl.txOff[r];
    rg.ownRx = pl.rxOff[r];
    rg.len = K == CollKind::AllReduce       ? pl.txOff[n - 1] + pl.txLen[n - 1]
             : K == CollKind::ReduceScatter ? pl.txLen[r]
                                            : pl.txLen[0];  // the same for every (source, destination) pair
    rg.W = words(rg.len);
    rg.G = packetGroups(rg.len);
  }
  __syncthreads();
}

/// The sizes of one call's words: bytes each source sends (Regions::len),
/// their 8-byte words W and packet groups G, as ctaRegions computed them
/// before the grid dependency wait (computed after it, the division by 504
/// sat between the wait and the first input load; the compiler sinks
/// register arithmetic past the wait, shared memory it cannot).
struct CallShape {
  std::size_t len, W, G;
  __device__ __forceinline__ explicit CallShape(const Regions& rg) : len(rg.len), W(rg.W), G(rg.G) {}
};

/// The call's epoch and the packet offset of its half, read once per thread
/// by ensure(). Nothing uses the epoch before it. The programs call it
/// right after the loads of their first push were issued, so that the
/// epoch's L2 round trip overlaps theirs (bench/NOTES.md E12: -0.04 to
/// -0.19 us per call); a thread with nothing to push calls it after the
/// program.
/// TriggerOnRead: ensure() also lets the next call's grid be scheduled
/// (griddepcontrol.launch_dependents) right after issuing the epoch load;
/// otherwise the kernel does so right after the wait (AllReduce: with the
/// trigger here it lost its whole gain; the others lost 0.03-0.06 us with
/// it there); measured, not derived. A warp with no group (the launch shape
/// rounds warps up to whole CTAs) skips the program and so calls ensure()
/// right after the wait; a CTA's first launch_dependents is the one that
/// counts, so a CTA with such a warp lets the next grid in right after the
/// wait, as AllReduce does. In the measured rows such warps were only in
/// the last CTAs (warps are numbered CTA by CTA).
template <bool TriggerOnRead>
struct CallEpoch {
  uint64_t e = 0;
  std::size_t h = 0;  ///< packets from a half-0 region to the same region in the call's half
  bool read = false;
  __device__ __forceinline__ void ensure(const DeviceComm& dc, const Regions& rg) {
    if (read) return;
    e = ctaEpoch(dc);
    if constexpr (TriggerOnRead) gridLaunchDependents();
    h = std::size_t(parityHalf(e)) * rg.halfPackets;
    read = true;
  }
};

/// Warp-collective: polls the lane's slot of group `g` of region `src`
/// (source rank `p`) until every slot of the group is full, empties it and
/// returns the lane's payload words. False in every lane if a checked wait
/// gave up. S: the placement of the poll's loads (PollStagger: First for
/// the copy programs, EveryRound for the reduce programs, measured).
template <PollStagger S>
__device__ __forceinline__ bool pollLane(const DeviceComm& dc, const Plan& pl, Packet* src, int p, std::size_t g,
                                         int lane, uint64_t& a, uint64_t& b) {
  Packet* slot = laneSlot(src, g, lane);
  SlotWords w;
  if (!warpPollSlot<S>(dc, slot, uint32_t(std::size_t(p) * pl.packetRegion + g * kGroupSlots + std::size_t(lane)), w))
    return false;
  groupUnpack(w, lane, a, b);
  return true;
}

/// Warp-collective: pushes group `g` to every peer i = 1..n-1 in push order,
/// loading each peer's words from in + tx[i-1] (AllGather: tx = 0, the same
/// input for every peer) and reading the call's epoch right after the first
/// load is issued (CallEpoch). (a, b) end as the last peer's words. Loading
/// once per peer measured 0.04-0.09 us faster per call for AllGather than
/// loading once and putting the packed slot to every peer (E12 run 22).
template <bool W8, class Epoch>
__device__ __forceinline__ void pushPerPeer(const DeviceComm& dc, const Regions& rg, const LaneWords& x, std::size_t g,
                                            int lane, int n, const std::byte* in, std::size_t len, Epoch& ce,
                                            uint64_t& a, uint64_t& b) {
#pragma unroll 1
  for (int i = 1; i < n; ++i) {
    loadLane<W8>(x, in + rg.tx[i - 1], len, a, b);
    ce.ensure(dc, rg);
    slotPut(laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack(a, b, lane));
  }
}

/// AllGather / AllToAll: push this rank's words to every peer, write the own
/// contribution, then copy every peer's words into output range rx[p].
/// Loops over peers are not unrolled (here and in reduceProgram): n is
/// known only at run time, and unrolled copies put the common path behind
/// jumps through kilobytes of code (E11).
template <CollKind K, bool W8, class Epoch>
__device__ void copyProgram(const DeviceComm& dc, const Plan& pl, const Regions& rg, const CallShape& cs,
                            const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp, std::size_t warps) {
  const int n = pl.n, lane = laneId();
  const std::size_t len = cs.len, W = cs.W, G = cs.G;
  const std::byte* own = in + (K == CollKind::AllGather ? 0 : rg.ownTx);
  std::byte* ownDst = out + rg.ownRx;
  for (std::size_t g = warp; g < G; g += warps) {
    const LaneWords x(g, lane, W);
    uint64_t a, b;
    pushPerPeer<W8>(dc, rg, x, g, lane, n, in, len, ce, a, b);
    loadLane<W8>(x, own, len, a, b);
    if (own != ownDst) storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place
#pragma unroll 1
    for (int i = 1; i < n; ++i) {
      const int p = rg.from[i - 1];
      if (!pollLane<PollStagger::First>(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b))
        return;  // checked wait gave up
      storeLane<W8>(x, out + rg.rx[i - 1], len, a, b);
    }
  }
}

/// ReduceScatter / one-shot AllReduce: push the words each peer reduces,
/// then accumulate this rank's result over ranks 0..n-1 in order (own
/// contribution kept in registers from the input).
/// N2 (two ranks, chosen at run time by `program`): one poll of the peer,
/// then one reducePair of the two words in rank order, instead of the loop
/// over ranks with WordAcc (the same arithmetic). Measured with the
/// PollStagger::First poll in both (bench/NOTES.md E13 run3):
/// ReduceScatter -0.07 / -0.09 us per call at 64 / 512 KiB (+0.01 at 1-4
/// KiB), AllReduce -0.05 to -0.08 at every size.
template <CollKind K, class E, RedOp Op, bool W8, bool N2, class Epoch>
__device__ void reduceProgram(const DeviceComm& dc, const Plan& pl, const Regions& rg, const CallShape& cs,
                              const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp,
                              std::size_t warps) {
  const int r = pl.rank, n = N2 ? 2 : pl.n, lane = laneId();
  const std::size_t len = cs.len, W = cs.W, G = cs.G;
  const std::byte* own = in + (K == CollKind::AllReduce ? 0 : rg.ownTx);
  for (std::size_t g = warp; g < G; g += warps) {
    const LaneWords x(g, lane, W);
    uint64_t mineA, mineB, a, b;
    if constexpr (K == CollKind::AllReduce) {
      loadLane<W8>(x, in, len, mineA, mineB);
      ce.ensure(dc, rg);
      const SlotWords s = groupPack(mineA, mineB, lane);
#pragma unroll 1
      for (int i = 1; i < n; ++i) slotPut(laneSlot(rg.send[i - 1] + ce.h, g, lane), s);
    } else {
      pushPerPeer<W8>(dc, rg, x, g, lane, n, in, len, ce, a, b);
      loadLane<W8>(x, own, len, mineA, mineB);
    }
    if constexpr (N2) {
      // recv[0]: the peer's region (from[0] = the other rank)
      if (!pollLane<PollStagger::EveryRound>(dc, pl, rg.recv[0] + ce.h, rg.from[0], g, lane, a, b))
        return;  // checked wait gave up
      const bool ownFirst = r == 0;  // ascending rank order
      storeLane<W8>(x, out, len, reducePair<E, Op>(ownFirst ? mineA : a, ownFirst ? a : mineA),
                    reducePair<E, Op>(ownFirst ? mineB : b, ownFirst ? b : mineB));
    } else {
      WordAcc<E, Op> accA, accB;
#pragma unroll 1
      for (int p = 0; p < n; ++p) {
        if (p == r) {
          a = mineA;
          b = mineB;
        } else if (!pollLane<PollStagger::EveryRound>(dc, pl, rg.recvFrom[p] + ce.h, p, g, lane, a, b)) {
          return;  // checked wait gave up
        }
        if (p == 0) {
          accA.first(a);
          accB.first(b);
        } else {
          accA.next(a);
          accB.next(b);
        }
      }
      storeLane<W8>(x, out, len, accA.result(), accB.result());
    }
  }
}

/// The program of collective K on this call's words.
template <CollKind K, class E, RedOp Op, bool W8, class Epoch>
__device__ __forceinline__ void program(const DeviceComm& dc, const Plan& pl, const Regions& rg, const CallShape& cs,
                                        const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp,
                                        std::size_t warps) {
  if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll)
    copyProgram<K, W8>(dc, pl, rg, cs, in, out, ce, warp, warps);
  else if (pl.n == 2)
    reduceProgram<K, E, Op, W8, true>(dc, pl, rg, cs, in, out, ce, warp, warps);
  else
    reduceProgram<K, E, Op, W8, false>(dc, pl, rg, cs, in, out, ce, warp, warps);
}

} // namespace latency_detail

/// The latency kernel of collective K (E, Op matter for reductions only).
/// W8 = Plan::words8: the whole-word instantiation is launched when the
/// call's buffers allow it, the element-granular one otherwise; one kernel
/// per case keeps the launched code short and straight (a run-time branch
/// between the two left the fast path ~0.1-0.3 us slower at 1 KiB, E11).
/// Launch: grid = plan.latencyCtas, block = plan.latencyThreads (both sized
/// by makePlan from the payload, latencyShape in plan_impl.h; threads a
/// multiple of 32: every warp is whole), no dynamic shared memory.
///
/// Programmatic dependent launch (sm_90): gridDependencyWait waits for the
/// previous grid before any memory access (only Regions and CallShape, from
/// the parameters, are computed before it); soon after it this kernel lets
/// the next call's grid be scheduled, so its launch overlaps this call:
/// right after the wait (AllReduce) or once the epoch load is issued (the
/// others). Where the epoch is read: CallEpoch.
template <CollKind K, class E, RedOp Op, bool W8>
__global__ void latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {
  constexpr bool kTriggerOnRead = K != CollKind::AllReduce;  // measured, not derived (CallEpoch, E12)
  __shared__ latency_detail::Regions rg;
  latency_detail::ctaRegions<K>(dc, pl, rg);  // parameters only: before the wait
  const latency_detail::CallShape cs(rg);
  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / 32);
  const std::size_t warp = std::size_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  gridDependencyWait();
  if constexpr (!kTriggerOnRead) gridLaunchDependents();
  latency_detail::CallEpoch<kTriggerOnRead> ce;
  latency_detail::program<K, E, Op, W8>(dc, pl, rg, cs, in, out, ce, warp, warps);
  ce.ensure(dc, rg);  // threads that pushed nothing (a warp without a group)
  ctaEndCall(dc, ce.e);
}

} // namespace purlin::snac
