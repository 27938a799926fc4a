/// @file packet_lane.cuh
/// @brief Primitives of the latency (packet) programs, for the role code
/// purlinc prints from the SNAC IR (docs/codegen.md "Latency program"):
/// the payload words a warp lane carries in a packet group, their loads and
/// stores, the call's packet regions per peer (computed before the grid
/// dependency wait), the call's epoch read, and the lane's poll of a group.
/// Nothing here knows a collective: the emitted role decides which words go
/// where and in which order (docs/snac-protocol.md "Latency program").
///
/// Packet groups (packet_group.cuh): every 496 payload bytes travel in one
/// full/empty group of 512 bytes, one 16-byte slot per lane of a warp. Lane
/// l < 31 of group g carries payload words 62g + 2l and 62g + 2l + 1; lane
/// 31 the group's header and collector.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/snac/elementwise.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/packet_group.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac::packet {

/// Number of 8-byte payload words of `len` bytes.
__device__ __forceinline__ std::size_t words(std::size_t len) { return (len + 7) / 8; }
__device__ __forceinline__ std::size_t wordBytes(std::size_t len, std::size_t w) {
  std::size_t left = len - 8 * w;
  return left < 8 ? left : 8;
}

/// The payload words lane `lane` carries in group `g` of a `len`-byte range:
/// j0 = 62g + 2*lane and j0 + 1 (none for lane 31, the header lane), those
/// below W = words(len).
struct LaneWords {
  std::size_t j0;
  bool has0, has1;
  __device__ __forceinline__ LaneWords(std::size_t g, int lane, std::size_t W)
      : j0(g * kGroupPayloadWords + 2 * std::size_t(lane)),
        has0(lane != kHeaderLane && j0 < W),
        has1(lane != kHeaderLane && j0 + 1 < W) {}
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

/// How a latency kernel's lanes move words (its first template argument):
/// whole aligned words (Whole: Plan::words8), a range of any length
/// (Partial), or Plan::words8 read at run time (Either: one body for both,
/// a uniform branch per load and store; the kernel of every reduction pair
/// for three and more ranks, whose body is the largest: purlinc's
/// instantiation table).
enum class WordForm : int { Partial = 0, Whole = 1, Either = 2 };
/// Which rank counts a reduction's latency kernel serves: two only, three
/// and more only (the launch picks the kernel by Plan::n), or any (the
/// kernel picks its two-rank form by Plan::n).
enum class RankForm : int { Any = 0, Two = 2, Many = 3 };

/// loadLane / storeLane of word form F; `whole` (Plan::words8) is read by
/// WordForm::Either only.
template <WordForm F>
__device__ __forceinline__ void loadLane(const LaneWords& x, const std::byte* src, std::size_t len, uint64_t& a,
                                         uint64_t& b, bool whole) {
  if constexpr (F == WordForm::Either) {
    if (whole) loadLane<true>(x, src, len, a, b);
    else loadLane<false>(x, src, len, a, b);
  } else {
    (void)whole;
    loadLane<F == WordForm::Whole>(x, src, len, a, b);
  }
}
template <WordForm F>
__device__ __forceinline__ void storeLane(const LaneWords& x, std::byte* dst, std::size_t len, uint64_t a, uint64_t b,
                                          bool whole) {
  if constexpr (F == WordForm::Either) {
    if (whole) storeLane<true>(x, dst, len, a, b);
    else storeLane<false>(x, dst, len, a, b);
  } else {
    (void)whole;
    storeLane<F == WordForm::Whole>(x, dst, len, a, b);
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
///    (Plan::packetFlowBytes: the whole input for a one-shot reduction);
///  - V forms only (ctaRegions<true>): tagTo[i-1], the tag of the flow to
///    rank (r+i)%n, and tagFrom[p], the tag expected on the flow from rank
///    p (Plan::flowTagTo / flowTagFrom; with the epoch they make the
///    groups' headers, protocol.h packetHeader). The fixed-size collectives
///    have one tag for every flow (Plan::flowTagTo[0]), read where used:
///    filling these here cost their kernels ~1-2% at 1-4 KiB (measured on
///    one H200, bench/results/2026-12-05-s10-device).
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
  uint32_t tagTo[kMaxRanks - 1], tagFrom[kMaxRanks];
  std::size_t halfPackets;
  /// V forms only (ctaRegions<true>; flows differ in length): the bytes of
  /// send flow i-1 (pl.txLen[(r+i)%n]), of receive flow i-1
  /// (pl.rxLen[from[i-1]]) and of this rank's own partition (pl.rxLen[r]);
  /// `len` is then the longest flow of any rank (Plan::packetFlowBytes).
  std::size_t sendLen[kMaxRanks - 1], recvLen[kMaxRanks - 1], ownLen;
};

/// CTA-collective: fills `rg` (shared memory) for this rank; call before
/// gridDependencyWait (reads kernel parameters only). Needs blockDim.x >= n.
/// len = Plan::packetFlowBytes, the bytes every source sends every
/// destination (makePlan); Variable (the V forms): the longest flow, and
/// each flow's own length in sendLen / recvLen / ownLen.
template <bool Variable = false>
__device__ __forceinline__ void ctaRegions(const DeviceComm& dc, const Plan& pl, Regions& rg) {
  const int r = pl.rank, n = pl.n, t = int(threadIdx.x);
  if (t < n) rg.recvFrom[t] = packetRegion(dc, r, 0, t, pl.packetRegion);
  if constexpr (Variable)
    if (t < n) rg.tagFrom[t] = pl.flowTagFrom[t];
  if (t >= 1 && t < n) {
    const int q = (r + t) % n, p = (r + n - t) % n;
    rg.from[t - 1] = p;
    rg.send[t - 1] = packetRegion(dc, q, 0, r, pl.packetRegion);
    rg.recv[t - 1] = packetRegion(dc, r, 0, p, pl.packetRegion);
    rg.tx[t - 1] = pl.txOff[q];
    rg.rx[t - 1] = pl.rxOff[p];
    if constexpr (Variable) {
      rg.tagTo[t - 1] = pl.flowTagTo[q];
      rg.sendLen[t - 1] = pl.txLen[q];
      rg.recvLen[t - 1] = pl.rxLen[p];
    }
  }
  if constexpr (Variable)
    if (t == 0) rg.ownLen = pl.rxLen[r];
  if (t == 0) {
    rg.halfPackets = dc.packetHalfBytes / sizeof(Packet);
    rg.ownTx = pl.txOff[r];
    rg.ownRx = pl.rxOff[r];
    rg.len = pl.packetFlowBytes;
    rg.W = words(rg.len);
    rg.G = packetGroups(rg.len);
  }
  __syncthreads();
}

/// Packet groups a flow of `len` bytes travels in: a zero-byte flow (a V
/// form's empty partition) still sends its first group, full and without
/// payload, so that its receiver polls it (docs/snac-protocol.md: the
/// marker that keeps the causal chain from sender to receiver).
__device__ __forceinline__ std::size_t flowGroups(std::size_t len) { return len ? packetGroups(len) : 1; }

/// The sizes of one call's words: bytes each source sends (Regions::len),
/// their 8-byte words W and packet groups G, as ctaRegions computed them
/// before the grid dependency wait (computed after it, the division by 496
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
  /// The header of this call's groups on a flow of tag `tag` (after ensure).
  __device__ __forceinline__ uint64_t header(uint32_t tag) const { return packetHeader(e, tag); }
};

/// Warp-collective: polls the lane's slot of group `g` of region `src`
/// (source rank `p`) until every slot of the group is full, empties it,
/// checks the group's header against `header` (CallEpoch::header of the
/// flow's tag) and returns the lane's payload words. False in every lane if
/// a wait gave up or the header differs: the group was written by another
/// call, or by a rank that called something else (kind, counts, dtype, op,
/// root); that records WaitErrorKind::PacketMismatch and fails the
/// communicator on every rank (recordWaitError), so the group is never
/// read as data. S: the placement of the poll's loads (PollStagger: First
/// for the copy programs, EveryRound for the reduce programs, measured).
template <PollStagger S>
__device__ __forceinline__ bool pollLane(const DeviceComm& dc, const Plan& pl, Packet* src, int p, std::size_t g,
                                         int lane, uint64_t& a, uint64_t& b, uint64_t header) {
  Packet* slot = laneSlot(src, g, lane);
  SlotWords w;
  if (!warpPollSlot<S>(dc, slot, uint32_t(std::size_t(p) * pl.packetRegion + g * kGroupSlots + std::size_t(lane)), w))
    return false;
  if (const uint64_t seen = groupHeader(w); seen != header) {
    if (lane == 0) recordWaitError(dc, WaitErrorKind::PacketMismatch, uint32_t(p), header, seen);
    return false;
  }
  groupUnpack(w, lane, a, b);
  return true;
}

} // namespace purlin::snac::packet
