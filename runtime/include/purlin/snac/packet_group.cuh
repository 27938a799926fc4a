/// @file packet_group.cuh
/// @brief Full/empty packet groups: how the latency program carries payload
/// and readiness together in its NVLink stores (docs/snac-protocol.md
/// "Latency program"; constants in protocol.h).
///
/// A group is 64 8-byte words (512 bytes) of a packet region, written by the
/// 32 lanes of one warp, lane l storing words 2l and 2l+1 (slot l) with one
/// 16-byte store of two 8-byte elements. It carries 63 payload words (504
/// bytes): payload word j < 63 travels in word j with its bit 63 replaced by
/// the full bit; word 63, the collector, carries bit 63 of payload word 2l in
/// bit l and of payload word 2l+1 in bit 32+l (l < 31), and the full bit.
///
/// Why this is enough to know a word holds this call's payload:
///  - each 8-byte element is single-copy atomic (arch::stVolatile2x64), so a
///    reader sees a word whole-old or whole-new;
///  - a word is written full (bit 63 = 1) and nothing else writes it until
///    its reader has polled it and cleared it (0 = empty), in the same call;
///  - the writer's next write of that word is in call e+2 (halves by epoch
///    parity), which is causally after the reader's call e+1 started, hence
///    after the reader's call e ended, clear included (the same chain that
///    lets a half be reused at all).
///  So a full word is always the current call's, whatever sizes earlier
///  calls had, and there is no flag value to wrap. Payload per 16 bytes on
///  the link: 15.75 bytes (the previous {d0, f, d1, f} format carried 8).
#pragma once

#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/snac/protocol.h"

namespace purlin::snac {

/// The two words of one lane's 16-byte slot of a group.
struct SlotWords {
  uint64_t lo, hi;
};

static_assert(kGroupSlots == 32 && kGroupPayloadWords == 2 * kGroupSlots - 1,
              "a group is one warp's 32 slots: 63 payload words and one collector word");

/// Lane index within the warp.
__device__ __forceinline__ int laneId() { return int(threadIdx.x & 31u); }

/// Warp-collective (all 32 lanes, converged): the slot words of lane `lane`
/// for its payload words a (group word 2*lane) and b (2*lane+1; lane 31's b
/// is not payload and is ignored: lane 31 sends the collector there).
__device__ __forceinline__ SlotWords groupPack(uint64_t a, uint64_t b, int lane) {
  const uint32_t topA = __ballot_sync(~0u, (a >> 63) != 0);
  const uint32_t topB = __ballot_sync(~0u, (b >> 63) != 0);
  const uint64_t collector = uint64_t(topA) | (uint64_t(topB & 0x7fffffffu) << 32);
  return {a | kFullBit, (lane == 31 ? collector : b) | kFullBit};
}

/// True once both words of a slot are full.
__device__ __forceinline__ bool slotFull(SlotWords w) { return ((w.lo & w.hi) >> 63) != 0; }

/// Warp-collective inverse of groupPack, once every lane holds its full
/// slot: the lane's payload words a and b (lane 31's b is meaningless).
__device__ __forceinline__ void groupUnpack(SlotWords w, int lane, uint64_t& a, uint64_t& b) {
  const uint64_t collector = __shfl_sync(~0u, w.hi, 31);
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
