/// @file packet_group.cuh
/// @brief Full/empty packet groups: how the latency program carries payload
/// and readiness together in its NVLink stores (docs/snac-protocol.md
/// "Latency program"; constants in protocol.h).
///
/// A group is 64 8-byte words (512 bytes) of a packet region, written by the
/// 32 lanes of one warp, lane l storing words 2l and 2l+1 (slot l) with one
/// 16-byte store of two 8-byte elements. It carries 62 payload words (496
/// bytes) in lanes 0..30: payload word j travels in word j with its bit 63
/// replaced by the full bit. Lane 31 carries the header (word 62: which
/// call and flow wrote the group, protocol.h packetHeader) and the
/// collector (word 63: bit 63 of payload word 2l in bit l and of payload
/// word 2l+1 in bit 32+l, l < 31), each with its full bit.
///
/// Why a full word read with a matching header is this call's payload:
///  - each 8-byte element is single-copy atomic (arch::stVolatile2x64), so a
///    reader sees a word whole-old or whole-new;
///  - a word is written full (bit 63 = 1) and nothing else writes it until
///    its reader has polled it and cleared it (0 = empty), in the same call;
///  - the writer's next write of that word is in call e+2 (halves by epoch
///    parity), which is causally after the reader's call e+1 started, hence
///    after the reader's call e ended, clear included (the same chain that
///    lets a half be reused at all).
///  That holds while every rank reads every group sent to it. A call whose
///  ranks disagree (kind, counts, root) can leave groups no one reads; the
///  header names the call (epoch) and the flow (the call check's value for
///  it), so the receiver of any group of such a call, in that call or a
///  later one, finds the mismatch (packet::pollLane) and the communicator
///  fails on every rank. Only lane 31's word is proven fresh: a call
///  already enqueued on a failed communicator can still read a group whose
///  other lanes are a leftover while its new stores land (the narrow race
///  of docs/snac-protocol.md "Latency program").
///  Payload per 16 bytes on the link: 15.5 bytes.
#pragma once

#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/snac/protocol.h"

namespace purlin::snac {

/// The two words of one lane's 16-byte slot of a group.
struct SlotWords {
  uint64_t lo, hi;
};

static_assert(kGroupSlots == 32 && kGroupPayloadWords == 2 * kGroupSlots - 2,
              "a group is one warp's 32 slots: 62 payload words, the header and the collector");

/// The lane that carries a group's header and collector.
inline constexpr int kHeaderLane = 31;

/// Lane index within the warp.
__device__ __forceinline__ int laneId() { return int(threadIdx.x & 31u); }

/// Warp-collective (all 32 lanes, converged): the slot words of lane `lane`
/// for its payload words a (group word 2*lane) and b (2*lane+1); lane 31's
/// a and b are not payload (pass 0): it sends `header` (packetHeader) and
/// the collector.
__device__ __forceinline__ SlotWords groupPack(uint64_t a, uint64_t b, int lane, uint64_t header) {
  const uint32_t topA = __ballot_sync(~0u, (a >> 63) != 0);
  const uint32_t topB = __ballot_sync(~0u, (b >> 63) != 0);
  const uint64_t collector = uint64_t(topA & 0x7fffffffu) | (uint64_t(topB & 0x7fffffffu) << 32);
  return lane == kHeaderLane ? SlotWords{header | kFullBit, collector | kFullBit} : SlotWords{a | kFullBit, b | kFullBit};
}

/// The slot words `s` (groupPack) with another header: one group put to
/// several peers whose flows have their own headers.
__device__ __forceinline__ SlotWords withHeader(SlotWords s, int lane, uint64_t header) {
  if (lane == kHeaderLane) s.lo = header | kFullBit;
  return s;
}

/// Warp-collective: the header of a full group (without its full bit), in
/// every lane.
__device__ __forceinline__ uint64_t groupHeader(SlotWords w) {
  return __shfl_sync(~0u, w.lo, kHeaderLane) & ~kFullBit;
}

/// True once both words of a slot are full.
__device__ __forceinline__ bool slotFull(SlotWords w) { return ((w.lo & w.hi) >> 63) != 0; }

/// Warp-collective inverse of groupPack, once every lane holds its full
/// slot: the lane's payload words a and b (lane 31's are meaningless).
__device__ __forceinline__ void groupUnpack(SlotWords w, int lane, uint64_t& a, uint64_t& b) {
  const uint64_t collector = __shfl_sync(~0u, w.hi, kHeaderLane);
  a = (w.lo & ~kFullBit) | (((collector >> lane) & 1u) << 63);
  b = (w.hi & ~kFullBit) | (((collector >> (32 + lane)) & 1u) << 63);
}

/// Writes a lane's slot (one 16-byte store; each word single-copy atomic).
__device__ __forceinline__ void slotPut(void* slot, SlotWords w) { arch::stVolatile2x64(slot, w.lo, w.hi); }

/// Reads a lane's slot as it is now.
__device__ __forceinline__ SlotWords slotLoad(const void* slot) {
  SlotWords w;
  arch::ldVolatile2x64(slot, w.lo, w.hi);
  return w;
}

/// Empties a lane's slot after its words were read (the reader's store, in
/// program order after its loads of the same address).
__device__ __forceinline__ void slotClear(void* slot) { arch::stVolatile2x64(slot, 0, 0); }

} // namespace purlin::snac
