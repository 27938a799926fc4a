/// @file latency.cuh
/// @brief The latency program (paper §3.2, docs/snac-protocol.md "Latency
/// program"): one kernel of plan.latencyCtas x plan.latencyThreads (sized by
/// the payload, latencyShape). Push: every 8 payload bytes travel with the
/// call's flag in one 16-byte packet store into the receiver's packet half
/// (e & 1), region src = this rank. Poll: the receiver spins until both flags
/// match, then copies or reduces in ascending rank order (its own
/// contribution from its input).
///
/// Thread t handles words w = t + i*T (T = threads of the grid) in batches
/// of kLatencyBatch: it loads all of a batch's input words at once, pushes
/// them, writes its own contribution (copy collectives) or keeps it in
/// registers (reductions) while the packets travel, then polls all of the
/// batch's packets together. A thread reads every input word it will
/// overwrite before writing it, so NCCL's in-place forms are safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"
#include "purlin/snac/elementwise.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"

namespace purlin::snac {

/// Words a thread of the latency program keeps in flight at once. Measured
/// on 2xH200 (bench/NOTES.md E5): 4 cost ~0.3 us at 1-64 KiB (126 registers
/// instead of ~50) and gained nothing above, where more threads win; so 1.
inline constexpr int kLatencyBatch = 1;

namespace latency_detail {

/// Number of 8-byte words (packets) of `len` bytes.
__device__ __forceinline__ std::size_t words(std::size_t len) { return (len + 7) / 8; }
__device__ __forceinline__ std::size_t wordBytes(std::size_t len, std::size_t w) {
  std::size_t left = len - 8 * w;
  return left < 8 ? left : 8;
}

/// One thread's batch: words base + k*T for k < kLatencyBatch, those < W.
struct Batch {
  std::size_t base, T, W;
  __device__ __forceinline__ std::size_t word(int k) const { return base + std::size_t(k) * T; }
  __device__ __forceinline__ bool has(int k) const { return word(k) < W; }
};

/// Loads the batch's words of the `len`-byte range at `src`.
__device__ __forceinline__ void loadBatch(const Batch& b, const std::byte* src, std::size_t len,
                                          uint64_t (&v)[kLatencyBatch]) {
#pragma unroll
  for (int k = 0; k < kLatencyBatch; ++k)
    if (b.has(k)) v[k] = loadWord(src + 8 * b.word(k), wordBytes(len, b.word(k)));
}

/// Stores the batch's words into the `len`-byte range at `dst`.
__device__ __forceinline__ void storeBatch(const Batch& b, std::byte* dst, std::size_t len,
                                           const uint64_t (&v)[kLatencyBatch]) {
#pragma unroll
  for (int k = 0; k < kLatencyBatch; ++k)
    if (b.has(k)) storeWord(dst + 8 * b.word(k), v[k], wordBytes(len, b.word(k)));
}

/// Pushes the batch's words as packets with `flag` into region `dst`.
__device__ __forceinline__ void putBatch(const Batch& b, Packet* dst, uint32_t flag, const uint64_t (&v)[kLatencyBatch]) {
#pragma unroll
  for (int k = 0; k < kLatencyBatch; ++k)
    if (b.has(k)) packetPut(dst + b.word(k), v[k], flag);
}

/// Polls the batch's packets of region `src` (source rank `p`): every round
/// issues the loads of all still-missing packets before checking any, so the
/// batch costs one round trip. Returns false if the wait gave up (checked mode).
__device__ __forceinline__ bool pollBatch(const DeviceComm& dc, const Plan& pl, const Batch& b, const Packet* src, int p,
                                          uint32_t flag, uint64_t (&v)[kLatencyBatch]) {
  unsigned pending = 0;
#pragma unroll
  for (int k = 0; k < kLatencyBatch; ++k)
    if (b.has(k)) pending |= 1u << k;
  SpinBound bound;
  while (pending) {
    uint4 x[kLatencyBatch];
#pragma unroll
    for (int k = 0; k < kLatencyBatch; ++k)
      if (pending & (1u << k)) x[k] = arch::ldVolatile16(src + b.word(k));
    // Only compile-time indices into x (a runtime index would put it in local memory).
    std::size_t missWord = 0;
    uint64_t missSeen = 0;
#pragma unroll
    for (int k = kLatencyBatch - 1; k >= 0; --k)
      if (pending & (1u << k)) {
        if (x[k].y == flag && x[k].w == flag) {
          v[k] = uint64_t(x[k].x) | (uint64_t(x[k].z) << 32);
          pending &= ~(1u << k);
        } else {
          missWord = b.word(k);
          missSeen = uint64_t(x[k].y) | (uint64_t(x[k].w) << 32);
        }
      }
    if (pending && !bound.step(dc, WaitKind::Packet, uint32_t(std::size_t(p) * pl.packetRegion + missWord), flag, missSeen))
      return false;
  }
  return true;
}

/// AllGather / AllToAll: push this rank's words to every peer, write the own
/// contribution, then copy every peer's words into output range rx[p].
template <CollKind K>
__device__ bool copyProgram(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out, int half,
                            uint32_t flag, std::size_t t, std::size_t T) {
  const int r = pl.rank, n = pl.n;
  const std::size_t len = pl.txLen[0];  // the same for every (source, destination) pair
  const std::size_t W = words(len);
  const std::byte* own = in + (K == CollKind::AllGather ? 0 : pl.txOff[r]);
  std::byte* ownDst = out + pl.rxOff[r];
  for (std::size_t base = t; base < W; base += T * kLatencyBatch) {
    const Batch b{base, T, W};
    uint64_t v[kLatencyBatch];
    if constexpr (K == CollKind::AllGather) {
      loadBatch(b, in, len, v);
      for (int i = 1; i < n; ++i) putBatch(b, packetRegion(dc, (r + i) % n, half, r, pl.packetRegion), flag, v);
    } else {
      for (int i = 1; i < n; ++i) {
        const int q = (r + i) % n;
        loadBatch(b, in + pl.txOff[q], len, v);
        putBatch(b, packetRegion(dc, q, half, r, pl.packetRegion), flag, v);
      }
      loadBatch(b, own, len, v);
    }
    if (own != ownDst) storeBatch(b, ownDst, len, v);  // skipped when in place
    for (int i = 1; i < n; ++i) {
      const int p = (r + n - i) % n;
      if (!pollBatch(dc, pl, b, packetRegion(dc, r, half, p, pl.packetRegion), p, flag, v)) return false;
      storeBatch(b, out + pl.rxOff[p], len, v);
    }
  }
  return true;
}

/// ReduceScatter / one-shot AllReduce: push the words each peer reduces,
/// then accumulate this rank's result over ranks 0..n-1 in order (own
/// contribution kept in registers from the input).
template <CollKind K, class E, RedOp Op>
__device__ bool reduceProgram(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out, int half,
                              uint32_t flag, std::size_t t, std::size_t T) {
  const int r = pl.rank, n = pl.n;
  const std::size_t len = K == CollKind::AllReduce ? pl.txOff[n - 1] + pl.txLen[n - 1] : pl.txLen[r];
  const std::size_t W = words(len);
  const std::byte* own = in + (K == CollKind::AllReduce ? 0 : pl.txOff[r]);
  for (std::size_t base = t; base < W; base += T * kLatencyBatch) {
    const Batch b{base, T, W};
    uint64_t mine[kLatencyBatch], v[kLatencyBatch];
    if constexpr (K == CollKind::AllReduce) {
      loadBatch(b, in, len, mine);
      for (int i = 1; i < n; ++i) putBatch(b, packetRegion(dc, (r + i) % n, half, r, pl.packetRegion), flag, mine);
    } else {
      for (int i = 1; i < n; ++i) {
        const int q = (r + i) % n;
        loadBatch(b, in + pl.txOff[q], len, v);
        putBatch(b, packetRegion(dc, q, half, r, pl.packetRegion), flag, v);
      }
      loadBatch(b, own, len, mine);
    }
    WordAcc<E, Op> acc[kLatencyBatch];
    for (int p = 0; p < n; ++p) {
      if (p == r) {
#pragma unroll
        for (int k = 0; k < kLatencyBatch; ++k) v[k] = mine[k];
      } else if (!pollBatch(dc, pl, b, packetRegion(dc, r, half, p, pl.packetRegion), p, flag, v)) {
        return false;
      }
#pragma unroll
      for (int k = 0; k < kLatencyBatch; ++k)
        if (b.has(k)) {
          if (p == 0) acc[k].first(v[k]);
          else acc[k].next(v[k]);
        }
    }
#pragma unroll
    for (int k = 0; k < kLatencyBatch; ++k) v[k] = acc[k].result();
    storeBatch(b, out, len, v);
  }
  return true;
}

} // namespace latency_detail

/// The latency kernel of collective K (E, Op matter for reductions only).
/// Launch: grid = plan.latencyCtas, block = plan.latencyThreads (both sized
/// by makePlan from the payload, latencyShape in plan_impl.h), no dynamic
/// shared memory.
///
/// Programmatic dependent launch (sm_90): ctaBeginCall waits for the previous
/// grid before any memory access; right after it this kernel lets the next
/// call's grid be scheduled, so its launch overlaps this call.
template <CollKind K, class E, RedOp Op>
__global__ void latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {
  const uint64_t e = ctaBeginCall(dc);
  gridLaunchDependents();
  const int half = parityHalf(e);
  const uint32_t flag = packetFlag(e);
  const std::size_t T = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll)
    latency_detail::copyProgram<K>(dc, pl, in, out, half, flag, t, T);
  else
    latency_detail::reduceProgram<K, E, Op>(dc, pl, in, out, half, flag, t, T);
  ctaEndCall(dc, e);
}

} // namespace purlin::snac
