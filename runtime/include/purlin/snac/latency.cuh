/// @file latency.cuh
/// @brief The latency program (paper §3.2, docs/snac-protocol.md "Latency
/// program"): one kernel of `latencyCtas` CTAs. Push: every 8 payload bytes
/// travel with the call's flag in one 16-byte packet store into the
/// receiver's packet half (e & 1), region src = this rank. Poll: the
/// receiver spins until both flags match, then copies or reduces in
/// ascending rank order (its own contribution read from its input).
///
/// Thread t handles the same words in the push and the consume phase, so
/// the in-place forms are safe (a word is pushed before it is overwritten).
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/snac/elementwise.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

namespace latency_detail {

/// Number of 8-byte words (packets) of `len` bytes.
__device__ __forceinline__ std::size_t words(std::size_t len) { return (len + 7) / 8; }
__device__ __forceinline__ std::size_t wordBytes(std::size_t len, std::size_t w) {
  std::size_t left = len - 8 * w;
  return left < 8 ? left : 8;
}

/// Push phase: the bytes this rank sends to each peer, as packets.
template <CollKind K>
__device__ void push(const DeviceComm& dc, const Plan& pl, const std::byte* in, int half, uint32_t flag,
                     std::size_t t, std::size_t T) {
  const int r = pl.rank;
  if constexpr (K == CollKind::AllGather || K == CollKind::AllReduce) {
    // The whole input goes to every peer (AllReduce: one shot).
    const std::size_t len = K == CollKind::AllGather ? pl.txLen[0] : pl.txOff[pl.n - 1] + pl.txLen[pl.n - 1];
    for (std::size_t w = t; w < words(len); w += T) {
      uint64_t v = loadWord(in + 8 * w, wordBytes(len, w));
      for (int q = 0; q < pl.n; ++q)
        if (q != r) packetPut(packetRegion(dc, q, half, r, pl.packetRegion) + w, v, flag);
    }
  } else {
    // Partition q goes to rank q only.
    for (int i = 1; i < pl.n; ++i) {
      const int q = (r + i) % pl.n;
      Packet* dst = packetRegion(dc, q, half, r, pl.packetRegion);
      const std::byte* src = in + pl.txOff[q];
      const std::size_t len = pl.txLen[q];
      for (std::size_t w = t; w < words(len); w += T)
        packetPut(dst + w, loadWord(src + 8 * w, wordBytes(len, w)), flag);
    }
  }
}

/// Copy consumers (AllGather, AllToAll): peer p's words into output range rx[p].
template <CollKind K>
__device__ bool consumeCopy(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out,
                            int half, uint32_t flag, std::size_t t, std::size_t T) {
  const int r = pl.rank;
  for (int i = 1; i < pl.n; ++i) {
    const int p = (r + pl.n - i) % pl.n;
    const Packet* src = packetRegion(dc, r, half, p, pl.packetRegion);
    std::byte* dst = out + pl.rxOff[p];
    const std::size_t len = pl.rxLen[p];
    for (std::size_t w = t; w < words(len); w += T) {
      uint64_t v;
      if (!packetPoll(dc, src + w, flag, uint32_t(p * pl.packetRegion + w), v)) return false;
      storeWord(dst + 8 * w, v, wordBytes(len, w));
    }
  }
  // Own contribution, straight from the input (skipped when already in place).
  const std::byte* own = in + (K == CollKind::AllGather ? 0 : pl.txOff[r]);
  std::byte* dst = out + pl.rxOff[r];
  if (own != dst) {
    const std::size_t len = pl.rxLen[r];
    for (std::size_t w = t; w < words(len); w += T)
      storeWord(dst + 8 * w, loadWord(own + 8 * w, wordBytes(len, w)), wordBytes(len, w));
  }
  return true;
}

/// Reduce consumers (ReduceScatter, one-shot AllReduce): every word of this
/// rank's result, accumulated over ranks 0..n-1 in order.
template <CollKind K, class E, RedOp Op>
__device__ bool consumeReduce(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out,
                              int half, uint32_t flag, std::size_t t, std::size_t T) {
  const int r = pl.rank;
  const std::size_t len = K == CollKind::AllReduce ? pl.txOff[pl.n - 1] + pl.txLen[pl.n - 1] : pl.txLen[r];
  const std::byte* own = in + (K == CollKind::AllReduce ? 0 : pl.txOff[r]);
  for (std::size_t w = t; w < words(len); w += T) {
    const std::size_t nb = wordBytes(len, w);
    WordAcc<E, Op> acc;
    for (int p = 0; p < pl.n; ++p) {
      uint64_t v;
      if (p == r) {
        v = loadWord(own + 8 * w, nb);
      } else if (!packetPoll(dc, packetRegion(dc, r, half, p, pl.packetRegion) + w, flag,
                             uint32_t(p * pl.packetRegion + w), v)) {
        return false;
      }
      if (p == 0) acc.first(v); else acc.next(v);
    }
    storeWord(out + 8 * w, acc.result(), nb);
  }
  return true;
}

} // namespace latency_detail

/// The latency kernel of collective K (E, Op matter for reductions only).
/// Launch: grid = plan.latencyCtas, block = plan.latencyThreads, no dynamic
/// shared memory.
template <CollKind K, class E, RedOp Op>
__global__ void latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {
  const uint64_t e = ctaBeginCall(dc);
  const int half = parityHalf(e);
  const uint32_t flag = packetFlag(e);
  const std::size_t T = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  latency_detail::push<K>(dc, pl, in, half, flag, t, T);
  if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll)
    latency_detail::consumeCopy<K>(dc, pl, in, out, half, flag, t, T);
  else
    latency_detail::consumeReduce<K, E, Op>(dc, pl, in, out, half, flag, t, T);
  ctaEndCall(dc, e);
}

} // namespace purlin::snac
