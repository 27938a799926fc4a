/// @file tp_context.cuh
/// @brief What every role of the throughput program shares: the call's
/// epoch and staging half, the chunk -> (slot, round) map of the staging
/// sequence, and the Y slots of a compose's intermediate.
///
/// Staging sequence of rank p (chunk-major): j = c * parts + m stages chunk c
/// of partition k = (p + 1 + m) % n (a packed input: parts = 1, its whole input).
/// Chunk j uses slot j % slots of p's staging half, round j / slots; its
/// STAGED signal carries signalValue(e, round).
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/reduction.h"
#include "purlin/snac/plan.h"
#include "purlin/snac/protocol.h"

namespace purlin::snac {

struct TpContext {
  const DeviceComm& dc;
  const Plan& pl;
  uint64_t epoch;
  std::byte* ws;  ///< this CTA's Atom workspace (dynamic shared memory)
  /// The call's reduction class and variant (purlin/reduction.h): the
  /// reduce sites' dispatch, once per range.
  Reduction red = reductionOf(pl.dtype, pl.op);

  __device__ __forceinline__ int half() const { return parityHalf(epoch); }
  /// Base of rank p's staging half of this call, as mapped here.
  __device__ __forceinline__ std::byte* staging(int p) const {
    return dc.staging[p] + std::size_t(half()) * dc.stagingHalfBytes;
  }
  /// Position m of destination k in source p's staging order.
  __device__ __forceinline__ int stagePos(int p, int k) const {
    return stagePosition(pl.n, hasPackedInput(pl.kind), p, k);
  }
  /// Destination of the m-th staged partition of source p.
  __device__ __forceinline__ int stageDest(int p, int m) const { return stageDestination(pl.n, p, m); }
  /// Sequence index of chunk c that source p stages for destination k.
  __device__ __forceinline__ int seqIndex(int p, int k, int c) const {
    return stageSequence(c, pl.stageParts(), stagePos(p, k));
  }
  __device__ __forceinline__ int slotOf(int j) const { return j % pl.slots; }
  __device__ __forceinline__ uint32_t roundOf(int j) const { return uint32_t(j / pl.slots); }
  /// True when slot j is used again later in this call (so its consumers
  /// must send CONSUMED after reading it).
  __device__ __forceinline__ bool slotReused(int j) const { return j + pl.slots < pl.stageSequence(); }
  __device__ __forceinline__ uint64_t sig(uint32_t round) const { return signalValue(epoch, round); }

  /// Y slot of chunk c of a compose's intermediate (AllReduce).
  __device__ __forceinline__ int ySlotOf(int c) const { return c % pl.ySlots; }
  __device__ __forceinline__ uint32_t yRoundOf(int c) const { return uint32_t(c / pl.ySlots); }
  __device__ __forceinline__ bool yReused(int c) const { return c + pl.ySlots < pl.cpp; }
  __device__ __forceinline__ std::byte* ySlot(int p, int c) const {
    return staging(p) + pl.yOffset + std::size_t(ySlotOf(c)) * pl.chunk;
  }

  // Push transfer: per-source regions; chunk c of the (source, destination)
  // pair uses slot c % slots of the source's region in the destination's
  // half, round c / slots (so push rounds count chunks, not sequence steps).
  /// Number of source s's region in rank k's staging half (0..n-2).
  __device__ __forceinline__ int regionOf(int s, int k) const { return sourceRegion(pl.n, s, k); }
  __device__ __forceinline__ int pushSlotOf(int c) const { return c % pl.slots; }
  __device__ __forceinline__ uint32_t pushRoundOf(int c) const { return uint32_t(c / pl.slots); }
  __device__ __forceinline__ bool pushReused(int c) const { return c + pl.slots < pl.cpp; }
  /// Slot of chunk c from source s in rank k's staging half (as mapped here).
  __device__ __forceinline__ std::byte* pushSlot(int k, int s, int c) const {
    return staging(k) + std::size_t(regionOf(s, k)) * pl.regionBytes + std::size_t(pushSlotOf(c)) * pl.chunk;
  }
  /// Y slot of chunk c of partition owner s in rank k's half (AllReduce push).
  __device__ __forceinline__ std::byte* pushYSlot(int k, int s, int c) const {
    return staging(k) + pl.yOffset + std::size_t(regionOf(s, k)) * pl.yRegionBytes +
           std::size_t(ySlotOf(c)) * pl.chunk;
  }
  /// Push sequence of rank p: step j = c*(n-1) + m is chunk c for destination
  /// (p+1+m) % n. The receiving side walks its sources in the same order:
  /// step j = c*(n-1) + m of rank k receives from (k-1-m) mod n.
  __device__ __forceinline__ int pushDest(int p, int j) const { return (p + 1 + j % (pl.n - 1)) % pl.n; }
  __device__ __forceinline__ int pushSource(int k, int j) const {
    return (k - 1 - j % (pl.n - 1) + 2 * pl.n) % pl.n;
  }
};

} // namespace purlin::snac
