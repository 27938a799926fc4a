/// @file protocol.h
/// @brief The SNAC protocol's arithmetic (docs/snac-protocol.md), shared by
/// host planning, device roles and CPU unit tests: signal indices, signal
/// values from epochs and rounds, packet groups, staging/packet halves by
/// epoch parity, partitions of uneven counts. Plain C++ (host and device).
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/types.h"

#if defined(__CUDACC__)
#define PURLIN_HD __host__ __device__ __forceinline__
#else
#define PURLIN_HD inline
#endif

namespace purlin::snac {

/// Slots per signal region and source rank (index < kSlotsPerSource).
inline constexpr uint32_t kSlotsPerSource = 1024;
/// First index of each signal region (a signal lives in the receiver's array;
/// `src` is the notifying rank).
inline constexpr uint32_t kStagedBase = 0;
inline constexpr uint32_t kReducedBase = 8192;
inline constexpr uint32_t kConsumedBase = 16384;
inline constexpr uint32_t kGatheredBase = 24576;
inline constexpr uint32_t kDoneBase = 32768;
/// Direct program (docs/snac-protocol.md "Direct program"): one signal per
/// (source rank, CTA), index = base + src*kMaxEpochSlots + cta.
/// ARRIVED: the source's CTA has started this call (its stream reached it);
/// PUT: the source's CTA has written round `j` of its data into this rank's
/// output; BACK: (AllReduce) the source's CTA has written round `j` of its
/// reduced partition back into this rank's output.
inline constexpr uint32_t kArrivedBase = 33792;
inline constexpr uint32_t kPutBase = kArrivedBase + uint32_t(kMaxRanks * kMaxEpochSlots);
inline constexpr uint32_t kBackBase = kPutBase + uint32_t(kMaxRanks * kMaxEpochSlots);
/// Copy-engine form of the direct ReduceScatter / AllReduce (n == 2), one
/// flag per chunk k of a partition (< kMaxEngineChunks). Unlike every other
/// signal these are written by stream memory operations, which can only
/// write values fixed at capture time: so they hold 0 or 1 in their low 32
/// bits and their owner resets them to 0 at the end of each call.
/// E_PUT(k): the peer's copy engine has written chunk k of this rank's
/// partition into this rank's output; E_BACK(k): (AllReduce) the peer's
/// copy engine has written chunk k of the peer's reduced partition into
/// this rank's output.
inline constexpr uint32_t kEnginePutBase = kBackBase + uint32_t(kMaxRanks * kMaxEpochSlots);
inline constexpr uint32_t kEngineBackBase = kEnginePutBase + uint32_t(kMaxEngineChunks);
/// Failure (docs/runtime.md "Failure model"): FAILED, one signal per rank,
/// 0 while the communicator is healthy; a rank whose wait gave up, or that
/// was aborted, writes failureCode(itself, kind) into every rank's FAILED
/// (its own too), and every spin-wait polls it, so no rank keeps waiting
/// on a rank that has given up. Never reset: a failed communicator stays
/// failed.
inline constexpr uint32_t kFailedIndex = kEngineBackBase + uint32_t(kMaxEngineChunks);
/// Checked mode: CALL[parity][src], where source `src`'s CTA 0 writes
/// callCheckValue(e, hash) of its call of epoch e (ctaBeginCall), by epoch
/// parity (a peer may be one call ahead, never two).
inline constexpr uint32_t kCallCheckBase = kFailedIndex + 1;
/// Direct program: ARRIVED_TAG[src][cta], written by source `src`'s CTA just
/// before its ARRIVED (the release store orders it), read by this rank's
/// CTA after it saw ARRIVED: packetHeader(e, tag) of the source's call, the
/// tag being its Plan::flowTagTo for this rank (the call check's value,
/// and for an eager registered call the registration and the output's
/// offset in it). A CTA that finds another value writes nothing
/// (direct.cuh waitArrived; every mode; only captured calls take the
/// copy-engine form, whose host-enqueued copies it cannot stop). One slot
/// per source and CTA, not one per epoch parity as CALL: a source cannot
/// write call e+1's tag before this CTA read call e's, because its call-e
/// kernel waits for this CTA's PUT of call e, sent after the read. A direct
/// program without that PUT dependency would need a slot per parity.
inline constexpr uint32_t kArrivedTagBase = kCallCheckBase + uint32_t(2 * kMaxRanks);
/// A V call with counts in device memory (docs/device-counts.md; every
/// mode): its counts kernel first compares each pair's counts through CALL
/// (as the checked mode's call check, CALL[parity][src]), then tells every
/// peer whether it accepts the call through VERDICT[parity][src]
/// (callCheckValue(e, 1) accepted, (e, 2) refused), so that a call refused
/// between any two ranks moves nothing on every rank.
inline constexpr uint32_t kVerdictBase = kArrivedTagBase + uint32_t(kMaxRanks * kMaxEpochSlots);
/// The device API's grid barrier (device_api.cuh ctaGridBarrier,
/// docs/device-api.md): GRID, this rank's own; the last CTA of a call's grid
/// to arrive writes signalValue(e, 0) of the call's epoch e, every CTA
/// waits for it. Monotonic over calls, never reset.
inline constexpr uint32_t kGridBarrierIndex = kVerdictBase + uint32_t(2 * kMaxRanks);
inline constexpr uint32_t kNumSignals = kGridBarrierIndex + 1;
static_assert(kArrivedBase >= kDoneBase + kMaxRanks, "direct signals follow DONE");

/// Largest number of cyclic staging slots one throughput call uses (keeps
/// the last-arriver counters of every role inside DeviceState::counters).
inline constexpr int kMaxSlots = 256;
/// Largest number of cyclic slots of a compose's intermediate Y region.
inline constexpr int kMaxYSlots = 128;
/// Last-arriver counter regions in DeviceState::counters[4096]:
/// stage role by slot, consume role by (source rank, slot), gather role by
/// (partition owner, Y slot).
inline constexpr uint32_t kStageCounterBase = 0;
inline constexpr uint32_t kConsumeCounterBase = kMaxSlots;                          // 256
inline constexpr uint32_t kGatherCounterBase = kConsumeCounterBase + kMaxRanks * kMaxSlots; // 2304
inline constexpr uint32_t kNumCounters = kGatherCounterBase + kMaxRanks * kMaxYSlots;     // 3328
/// After the role counters: the rooted latency programs' DONE arrival
/// (compiler/ir/IR.h kDoneCounter = kNumCounters) and the device API's grid
/// barrier (device_api.cuh ctaGridBarrier).
inline constexpr uint32_t kGridBarrierCounter = kNumCounters + 1;
static_assert(kGridBarrierCounter < 4096, "counters must fit DeviceState::counters");

PURLIN_HD uint32_t stagedIndex(int src, int slot) { return kStagedBase + uint32_t(src) * kSlotsPerSource + uint32_t(slot); }
PURLIN_HD uint32_t reducedIndex(int src, int slot) { return kReducedBase + uint32_t(src) * kSlotsPerSource + uint32_t(slot); }
PURLIN_HD uint32_t consumedIndex(int src, int slot) { return kConsumedBase + uint32_t(src) * kSlotsPerSource + uint32_t(slot); }
PURLIN_HD uint32_t gatheredIndex(int src, int slot) { return kGatheredBase + uint32_t(src) * kSlotsPerSource + uint32_t(slot); }
PURLIN_HD uint32_t doneIndex(int src) { return kDoneBase + uint32_t(src); }
PURLIN_HD uint32_t arrivedIndex(int src, int cta) { return kArrivedBase + uint32_t(src) * uint32_t(kMaxEpochSlots) + uint32_t(cta); }
PURLIN_HD uint32_t arrivedTagIndex(int src, int cta) {
  return kArrivedTagBase + uint32_t(src) * uint32_t(kMaxEpochSlots) + uint32_t(cta);
}
PURLIN_HD uint32_t putIndex(int src, int cta) { return kPutBase + uint32_t(src) * uint32_t(kMaxEpochSlots) + uint32_t(cta); }
PURLIN_HD uint32_t backIndex(int src, int cta) { return kBackBase + uint32_t(src) * uint32_t(kMaxEpochSlots) + uint32_t(cta); }
PURLIN_HD uint32_t enginePutIndex(int chunk) { return kEnginePutBase + uint32_t(chunk); }
PURLIN_HD uint32_t engineBackIndex(int chunk) { return kEngineBackBase + uint32_t(chunk); }
PURLIN_HD uint32_t callCheckIndex(uint64_t epoch, int src) {
  return kCallCheckBase + uint32_t(epoch & 1u) * uint32_t(kMaxRanks) + uint32_t(src);
}
PURLIN_HD uint32_t verdictIndex(uint64_t epoch, int src) {
  return kVerdictBase + uint32_t(epoch & 1u) * uint32_t(kMaxRanks) + uint32_t(src);
}
/// The FAILED value rank `origin` writes: its rank + 1 and the kind of its
/// failure (WaitErrorKind) above bit 8; never 0.
PURLIN_HD uint64_t failureCode(int origin, uint32_t kind) { return (uint64_t(kind) << 8) | uint64_t(origin + 1); }
PURLIN_HD int failureOrigin(uint64_t code) { return int(code & 0xffu) - 1; }
PURLIN_HD uint32_t failureKind(uint64_t code) { return uint32_t(code >> 8); }
/// A CALL value: the low 32 bits of the epoch above the 32-bit call hash.
PURLIN_HD uint64_t callCheckValue(uint64_t epoch, uint64_t callCheck) {
  return (uint64_t(uint32_t(epoch)) << 32) | (callCheck & 0xffffffffu);
}

/// Checked mode: the values one call's check writes into each peer's CALL
/// slot (toPeer[q]) and expects in its own from each peer (fromPeer[p]):
/// plan_impl.h callCheckFor, epoch.cuh callCheckKernel. Their low 32 bits
/// are also the latency flows' tags (packetHeader), in every mode.
struct CallCheck {
  uint64_t toPeer[kMaxRanks] = {};
  uint64_t fromPeer[kMaxRanks] = {};
};

/// Signal value of use `round` (0-based) of a slot in the call of epoch `e`:
/// (e << 20) + round + 1. Strictly increasing over calls and rounds (rounds
/// < 2^20), never 0, so signals are never reset and waits use `>=`.
PURLIN_HD uint64_t signalValue(uint64_t epoch, uint32_t round) {
  return (epoch << 20) + uint64_t(round) + 1;
}
/// Packet groups of the latency program (docs/snac-protocol.md "Latency
/// program"; device side in packet_group.cuh): a group is 64 8-byte words
/// (512 bytes, one 16-byte slot per lane of a warp) and carries 62 payload
/// words (496 bytes) in lanes 0..30. Bit 63 of every word is its full bit;
/// lane 31 carries the group's header (packetHeader: which call and flow
/// wrote it) and the collector (bit 63 of the 62 payload words).
inline constexpr std::size_t kGroupSlots = 32;          ///< 16-byte slots (Packets) per group
inline constexpr std::size_t kGroupPayloadWords = 62;   ///< 8-byte payload words per group
inline constexpr std::size_t kGroupPayloadBytes = 8 * kGroupPayloadWords;
inline constexpr uint64_t kFullBit = uint64_t(1) << 63;
/// Bits of the call's epoch a packet header carries (bits 32..62).
inline constexpr uint64_t kHeaderEpochMask = (uint64_t(1) << 31) - 1;
/// The header of every packet group of one flow (without its full bit):
/// the low 31 bits of the call's epoch in bits 32..62 and the flow's tag in
/// bits 0..31: the call check's value for that flow (Plan::flowTagTo /
/// flowTagFrom: kind, counts, dtype, op, root and, for AllToAllV, both
/// flows' lengths between the two ranks). The receiver compares it with the
/// header it expects (packet::pollLane): a group of another call, or of
/// this call from a rank that called something else, fails the
/// communicator on every rank instead of being read as data
/// (WaitErrorKind::PacketMismatch).
PURLIN_HD uint64_t packetHeader(uint64_t epoch, uint32_t flowTag) {
  return ((epoch & kHeaderEpochMask) << 32) | uint64_t(flowTag);
}
/// Groups that carry `bytes` payload bytes (0 for 0).
PURLIN_HD std::size_t packetGroups(std::size_t bytes) {
  return (bytes + kGroupPayloadBytes - 1) / kGroupPayloadBytes;
}
/// Half (0 or 1) of the staging and packet regions a call of epoch `e` uses.
PURLIN_HD int parityHalf(uint64_t epoch) { return int(epoch & 1u); }

/// The throughput program's staging order (docs/snac-protocol.md), shared by
/// the kernels (tp_context.cuh) and purlinc's IR (Instantiate.cpp): source
/// `src` of n stages, per chunk c, its partitions for k = src+1, ..., src-1
/// (mod n); `packedInput` (AllGather) stages its whole input once per chunk.
/// Position of destination `dst` in that order:
PURLIN_HD int stagePosition(int n, bool packedInput, int src, int dst) {
  return packedInput ? 0 : (dst - src - 1 + 2 * n) % n;
}
/// Destination of position `pos` in src's order (not packed).
PURLIN_HD int stageDestination(int n, int src, int pos) { return (src + 1 + pos) % n; }
/// Index in src's staging sequence of chunk c at position `pos` (chunk-major;
/// `parts` = 1 for a packed input, else n - 1): its slot is seq % slots,
/// its round seq / slots.
PURLIN_HD int stageSequence(int c, int parts, int pos) { return c * parts + pos; }
/// Push transfer: the region of source `src` in rank `owner`'s staging half
/// (0..n-2, ring distance minus one).
PURLIN_HD int sourceRegion(int n, int src, int owner) { return (src - owner - 1 + 2 * n) % n; }

/// Partition k of `count` elements over `n` ranks (AllReduce, Broadcast,
/// Reduce): elements [floor(k*count/n), floor((k+1)*count/n)).
PURLIN_HD std::size_t partitionBegin(std::size_t count, int n, int k) {
  // 128-bit free: count < 2^56 in practice; split to avoid overflow of k*count.
  return (count / std::size_t(n)) * std::size_t(k) + ((count % std::size_t(n)) * std::size_t(k)) / std::size_t(n);
}
PURLIN_HD std::size_t partitionSize(std::size_t count, int n, int k) {
  return partitionBegin(count, n, k + 1) - partitionBegin(count, n, k);
}

/// Chunk c of a partition of `len` bytes cut in chunks of `chunk` bytes:
/// [c*chunk, min((c+1)*chunk, len)), empty when c*chunk >= len.
PURLIN_HD std::size_t chunkBegin(std::size_t len, std::size_t chunk, int c) {
  std::size_t b = std::size_t(c) * chunk;
  return b < len ? b : len;
}
PURLIN_HD std::size_t chunkSize(std::size_t len, std::size_t chunk, int c) {
  std::size_t b = chunkBegin(len, chunk, c);
  std::size_t e = b + chunk;
  return (e < len ? e : len) - b;
}

/// Direct program: bytes per round of a CTA's slice of `sliceLen` bytes
/// (between two PUT notifications): half the slice, within [256 KiB, 4 MiB],
/// a multiple of 16 (each round costs a fence that drains the CTA's NVLink
/// stores, ~8 us measured: bench/NOTES.md E9, so few rounds). Sender and
/// receiver of a partition compute it from the same slice length.
inline constexpr std::size_t kDirectRoundDivisor = 2;
inline constexpr std::size_t kDirectRoundMinBytes = std::size_t(256) << 10;
inline constexpr std::size_t kDirectRoundMaxBytes = std::size_t(4) << 20;
PURLIN_HD std::size_t directRoundBytes(std::size_t sliceLen) {
  std::size_t r = sliceLen / kDirectRoundDivisor;
  if (r < kDirectRoundMinBytes) r = kDirectRoundMinBytes;
  if (r > kDirectRoundMaxBytes) r = kDirectRoundMaxBytes;
  return (r + 15) & ~std::size_t(15);
}
/// Rounds of a slice: ceil(sliceLen / directRoundBytes(sliceLen)), 0 for an empty slice.
PURLIN_HD std::size_t directRounds(std::size_t sliceLen) {
  const std::size_t r = directRoundBytes(sliceLen);
  return (sliceLen + r - 1) / r;
}

/// Copy-engine form of the direct ReduceScatter / AllReduce: smallest chunk
/// of a ReduceScatter partition (bench/NOTES.md E10).
inline constexpr std::size_t kEngineMinChunkBytes = std::size_t(8) << 20;
/// Bytes of chunk k of a partition of `len` bytes whose chunks before k
/// cover `done` bytes (a multiple of 16); 0 once done == len. Each chunk's
/// reduction starts when its copy has landed, so the call's tail is the
/// last chunk's reduction and every chunk costs one copy-node hand-off
/// (~8 us): a form that only reduces halves what is left (at least
/// kEngineMinChunkBytes: 512 MiB -> 256, 128, 64, 32, 16, 8, 8 MiB); a form
/// whose copy branch also carries the reduced chunks back (`twoHalves`:
/// AllReduce's, as purlinc prints it in EmitEngine) cuts the
/// partition in two halves (measured best: bench/NOTES.md E10). A
/// remainder below kEngineMinChunkBytes joins the chunk before it (no
/// hand-off for a few bytes), and the last allowed chunk takes all that is
/// left. Sender and receiver of a partition compute it from the same length.
/// `minChunk`: kEngineMinChunkBytes in every call (purlinc's simulator
/// passes a small one, so that small simulated messages have several chunks).
PURLIN_HD std::size_t engineChunkBytes(bool twoHalves, std::size_t len, std::size_t done, int k,
                                       std::size_t minChunk = kEngineMinChunkBytes) {
  if (done >= len) return 0;
  const std::size_t left = len - done;
  if (k >= (twoHalves ? 1 : kMaxEngineChunks - 1)) return left;
  std::size_t c;
  if (twoHalves) {
    c = ((len / 2) + 15) & ~std::size_t(15);
  } else {
    c = (left / 2) & ~std::size_t(15);
    if (c < minChunk) c = minChunk;
  }
  return c < left && left - c >= minChunk ? c : left;
}
/// Number of chunks of a partition of `len` bytes (0 when empty).
PURLIN_HD int engineChunks(bool twoHalves, std::size_t len, std::size_t minChunk = kEngineMinChunkBytes) {
  int k = 0;
  for (std::size_t done = 0, c; (c = engineChunkBytes(twoHalves, len, done, k, minChunk)) != 0; done += c) ++k;
  return k;
}

/// Slice i of `len` bytes shared by `parts` CTAs: slices are multiples of 16
/// bytes (so element-aligned for every dtype) except the last non-empty one.
PURLIN_HD std::size_t sliceBegin(std::size_t len, int parts, int i) {
  std::size_t per = (len + std::size_t(parts) - 1) / std::size_t(parts);
  per = (per + 15) & ~std::size_t(15);
  std::size_t b = per * std::size_t(i);
  return b < len ? b : len;
}
PURLIN_HD std::size_t sliceSize(std::size_t len, int parts, int i) {
  return sliceBegin(len, parts, i + 1) - sliceBegin(len, parts, i);
}

} // namespace purlin::snac
