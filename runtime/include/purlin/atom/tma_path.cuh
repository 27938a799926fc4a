/// @file tma_path.cuh
/// @brief The TMA datapath (`HopperTma`, sm_90+): the staged pipeline of the
/// paper's Algorithm 2 with the stages moved by the tensor-memory-access
/// unit's bulk copies (`cp.async.bulk`) instead of per-thread cp.async.
///
/// Workspace: S slots of SB bytes, then one 16-byte cell per slot holding
/// the slot's two mbarriers, "full" and "empty" (S * (SB + 16) bytes;
/// halving S halves it, so the lanes of a CTA share it as they share the
/// cp.async pipeline's).
///
/// copy: one thread of the slice (its leader) moves everything: a bulk load
/// of stage j into slot j mod S completes on the slot's mbarrier; the leader
/// waits for it and issues a bulk store of the slot to the destination
/// (bulk-group completion); the slot of stage j-1 is refilled with stage
/// j-1+S once that store has read it (wait_group.read 1). Up to S loads
/// and one store per thread in flight; the other threads return at once.
/// Before returning, the leader waits until every store's writes are
/// performed, so the caller's barrier and fence publish them as usual.
///
/// reduce: the leader bulk-loads stage j (SB/n bytes of each of the n
/// sources, completing on the slot's full barrier, expect_tx of the total);
/// every thread of the slice waits on it, reduces its 16-byte pieces from
/// the slot in fp32 and stores them (as the cp.async pipeline's process
/// step); each warp then arrives on the slot's empty barrier. One stage
/// later (after its own stage j+1) the leader waits for stage j's empty
/// phase and refills the slot with stage j+S, so the other warps never wait
/// for a refill, only for data.
///
/// Slices: the whole CTA, or a lane of a 2-lane CTA (lane.cuh: threads
/// threadIdx.x / nthr, named barrier 1 + lane); any other slice takes the
/// register datapath. Requests smaller than S
/// full stages go through registers, as in the cp.async pipeline.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/arch/arch.cuh"
#include "purlin/atom/pipeline.cuh"
#include "purlin/atom/register_path.cuh"
#include "purlin/limits.h"

namespace purlin::atom {

#if defined(__CUDACC__)

namespace detail {

/// Bytes of the mbarrier cell each TMA slot adds to the workspace.
inline constexpr std::size_t kTmaBarrierCellBytes = 16;

/// Whether slice s can synchronize on its own (see the file comment): the
/// whole CTA, or one of the two lanes of a 2-lane CTA (lane.cuh), which
/// already owns named barrier 1 + lane.
__device__ __forceinline__ bool tmaSliceUsable(Slice s) {
  const unsigned cta = blockDim.x * blockDim.y * blockDim.z;
  if (s.nthr == cta) return true;
  return blockDim.y == 1 && blockDim.z == 1 && 2u * s.nthr == cta && s.nthr % 32u == 0 && threadIdx.x % s.nthr == s.tid;
}

/// Barrier of the slice's threads (tmaSliceUsable): the CTA barrier, or the
/// lane's named barrier.
__device__ __forceinline__ void tmaSliceSync(Slice s) {
  if (s.nthr == blockDim.x * blockDim.y * blockDim.z) __syncthreads();
  else asm volatile("bar.sync %0, %1;" ::"r"(1u + threadIdx.x / s.nthr), "r"(s.nthr) : "memory");
}

/// The shared address of slot k's full mbarrier in a workspace of S slots
/// of SB bytes (its empty mbarrier is the next 8 bytes).
__device__ __forceinline__ uint32_t tmaBarrier(std::byte* ws, std::size_t slotBytes, int S, int k) {
  return arch::smemAddr(ws + std::size_t(S) * slotBytes + std::size_t(k) * kTmaBarrierCellBytes);
}

/// Leader: initializes the S slots' full barriers (one arrival per phase:
/// the leader's expect_tx) and, when `emptyArrivals` > 0, their empty
/// barriers (that many arrivals per phase), and makes them visible to the
/// async proxy. (Templates, like the wrappers: compiled only where used,
/// never in a pass for an older architecture.)
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void tmaInitBarriers(std::byte* ws, std::size_t slotBytes, int S, unsigned emptyArrivals) {
#pragma unroll 1
  for (int k = 0; k < S; ++k) {
    arch::mbarrierInit<kArch>(tmaBarrier(ws, slotBytes, S, k), 1u);
    if (emptyArrivals) arch::mbarrierInit<kArch>(tmaBarrier(ws, slotBytes, S, k) + 8u, emptyArrivals);
  }
  arch::fenceMbarrierInit<kArch>();
}

/// Leader: invalidates the S slots' barriers (every phase has completed).
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void tmaInvalBarriers(std::byte* ws, std::size_t slotBytes, int S, bool empty) {
#pragma unroll 1
  for (int k = 0; k < S; ++k) {
    arch::mbarrierInval<kArch>(tmaBarrier(ws, slotBytes, S, k));
    if (empty) arch::mbarrierInval<kArch>(tmaBarrier(ws, slotBytes, S, k) + 8u);
  }
}

} // namespace detail

/// The reduction range loops of the TMA datapath with stages of SB bytes,
/// for any depth (a run-time argument): the Atoms of a CTA and of its
/// lanes share them (Atom::reduce<Classes>'s `RangePath`).
template <int SB>
struct TmaReduce {
  static constexpr std::size_t kVecsPerStage = SB / 16;
  template <class E, OpFamily F, int StaticStages = 0>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte* ws, Slice s, int variant, int S) {
    const std::size_t cv = kVecsPerStage / static_cast<std::size_t>(srcs.n);  // vectors per source per stage
    const std::size_t N = nvec / cv;
    const std::size_t done = N < static_cast<std::size_t>(S) || !detail::tmaSliceUsable(s) ? 0 : N * cv;
    if (done != 0) {
      uint4* dst = reinterpret_cast<uint4*>(dstBase + off);
      const uint32_t pieceBytes = static_cast<uint32_t>(cv * 16);
      const bool leader = s.tid == 0;
      auto issue = [&](std::size_t j, int slot) {
        const uint32_t bar = detail::tmaBarrier(ws, SB, S, slot);
        const uint32_t sm = arch::smemAddr(ws + static_cast<std::size_t>(slot) * SB);
        arch::mbarrierArriveExpectTx(bar, pieceBytes * static_cast<uint32_t>(srcs.n));
#pragma unroll 1
        for (int p = 0; p < srcs.n; ++p)
          arch::bulkLoadShared(sm + static_cast<uint32_t>(p) * pieceBytes, srcs.p[p] + off + j * pieceBytes,
                               pieceBytes, bar);
      };
      const unsigned warps = s.nthr / 32u;  // tmaSliceUsable: whole warps
      if (leader) detail::tmaInitBarriers(ws, SB, S, warps);
      detail::tmaSliceSync(s);
      if (leader) {
#pragma unroll 1
        for (int j = 0; j < S; ++j) issue(static_cast<std::size_t>(j), j);
      }
      int slot = 0, prev = S - 1;
      uint32_t parity = 0, prevParity = 1;
#pragma unroll 1
      for (std::size_t j = 0; j < N; ++j) {
        const uint32_t full = detail::tmaBarrier(ws, SB, S, slot);
        arch::mbarrierWaitParity(full, parity);
        const uint4* sm = reinterpret_cast<const uint4*>(ws + static_cast<std::size_t>(slot) * SB);
        detail::reduceSlot<E, F, StoreKind::Plain>(dst + j * cv, sm, cv, srcs.n, s, variant);
        __syncwarp();
        if (s.tid % 32u == 0) arch::mbarrierArrive(full + 8u);  // this warp is done with the slot
        if (leader && j >= 1 && j - 1 + S < N) {  // stage j-1's slot, once every warp is done with it
          arch::mbarrierWaitParity(detail::tmaBarrier(ws, SB, S, prev) + 8u, prevParity);
          arch::fenceProxyAsyncShared();
          issue(j - 1 + S, prev);
        }
        prev = slot, prevParity = parity;
        if (++slot == S) slot = 0, parity ^= 1u;
      }
      detail::tmaSliceSync(s);  // every wait has returned: the barriers may go
      if (leader) detail::tmaInvalBarriers(ws, SB, S, true);
    }
    detail::reduceVec16<E, F>(dstBase, srcs, off + done * 16, nvec - done, s, variant);
  }
};

/// The TMA datapath: S stages of SB bytes moved by bulk copies.
template <int S, int SB>
struct TmaPath {
  static_assert(S >= 1 && S <= limits::kMaxPipelineStages, "Atom TMA pipeline: Stages must be in 1..16");
  static_assert(SB >= limits::kStageBytesUnit && SB % limits::kStageBytesUnit == 0,
                "Atom TMA pipeline: StageBytes must be a positive multiple of 512");
  static constexpr std::size_t kWorkspaceBytes = static_cast<std::size_t>(S) * (SB + detail::kTmaBarrierCellBytes);
  static_assert(static_cast<long>(kWorkspaceBytes) <= limits::kMaxAtomWorkspaceBytes,
                "Atom TMA pipeline: Stages * (StageBytes + 16) exceeds the 227 KiB of shared memory one CTA may use");
  static constexpr int kMinArch = 900;
  static constexpr std::size_t kVecsPerStage = SB / 16;

  /// dst[0..nvec) = src[0..nvec) (16-byte vectors, both 16-byte aligned),
  /// by the slice's leader (see the file comment).
  __device__ static void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, std::byte* ws, Slice s) {
    const std::size_t N = nvec / kVecsPerStage;
    if (N < static_cast<std::size_t>(S) || !detail::tmaSliceUsable(s)) {
      detail::copyVec16(dst, src, nvec, s);
      return;
    }
    const std::size_t done = N * kVecsPerStage;
    if (s.tid == 0) {
      auto load = [&](std::size_t j, int slot) {
        const uint32_t bar = detail::tmaBarrier(ws, SB, S, slot);
        arch::mbarrierArriveExpectTx(bar, SB);
        arch::bulkLoadShared(arch::smemAddr(ws + static_cast<std::size_t>(slot) * SB), src + j * kVecsPerStage, SB,
                             bar);
      };
      detail::tmaInitBarriers(ws, SB, S, 0);
#pragma unroll 1
      for (int j = 0; j < S; ++j) load(static_cast<std::size_t>(j), j);
      int slot = 0, prev = S - 1;
      uint32_t parity = 0;
#pragma unroll 1
      for (std::size_t j = 0; j < N; ++j) {
        arch::mbarrierWaitParity(detail::tmaBarrier(ws, SB, S, slot), parity);
        arch::bulkStoreGlobal(dst + j * kVecsPerStage, arch::smemAddr(ws + static_cast<std::size_t>(slot) * SB), SB);
        arch::bulkCommit();
        if (j >= 1 && j - 1 + S < N) {  // stage j-1's store has read its slot: refill it
          arch::bulkWaitRead<1>();
          load(j - 1 + S, prev);
        }
        prev = slot;
        if (++slot == S) slot = 0, parity ^= 1u;
      }
      arch::bulkWait<0>();  // every store's writes performed
      detail::tmaInvalBarriers(ws, SB, S, false);
    }
    detail::copyVec16(dst + done, src + done, nvec - done, s);
  }

  using RangePath = TmaReduce<SB>;
  static constexpr int kStages = S;
  template <class E, OpFamily F>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte* ws, Slice s, int variant) {
    RangePath::template reduceVec16<E, F, S>(dstBase, srcs, off, nvec, ws, s, variant, S);
  }
};

#endif // __CUDACC__

} // namespace purlin::atom
