/// @file pipeline.cuh
/// @brief The cp.async shared-memory pipeline of the paper's Algorithm 2,
/// for copy and reduce, with compile-time tuning knobs (the Ampere and Hopper
/// datapaths are two tunings of it).
///
/// Shape: `S` slots of `SB` bytes in the workspace (dynamic shared memory).
/// A transfer of N >= S full stages runs
///   prime:   fetch stage j into slot j, j < S                (cp.async, commit)
///   steady:  for j = S..N-1: wait for stage j-S (the oldest), read its slot
///            into registers and process it (store a copy / reduce and
///            store), then fetch stage j into the same slot
///   drain:   wait for and process the last S stages.
/// Each thread fetches, waits for and reads only its own 16-byte pieces of a
/// slot (piece i belongs to thread i mod nthr), so no barrier is needed: a
/// thread's cp.async.wait_group covers exactly the bytes it then reads. The
/// slot is processed before it is refetched (the stores consume the shared
/// loads' registers before the next cp.async issues), so no write-after-read
/// race on a slot exists. Mapping onto CUTLASS's pipeline vocabulary:
/// fetch = producer_acquire + producer_commit, wait = consumer_wait, the
/// refetch of the slot = consumer_release, all per thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/arch/arch.cuh"
#include "purlin/limits.h"
#include "purlin/atom/register_path.cuh"

namespace purlin::atom {

/// How stores of the pipeline's process step are issued.
enum class StoreKind : int { Plain = 0, Streaming = 1, NoAlloc = 2 };

/// Compile-time knobs of the pipeline. kL2Hint256: cp.async with the
/// L2::256B prefetch hint. kStore: store flavour. kBulkPrefetch: thread 0
/// asks the source's L2 (sm_90 bulk prefetch) for stage j+S when fetching
/// stage j. kMinArch: the oldest __CUDA_ARCH__ the tuning compiles for.
template <bool L2Hint256, StoreKind Store, bool BulkPrefetch, int MinArch>
struct Tuning {
  static constexpr bool kL2Hint256 = L2Hint256;
  static constexpr StoreKind kStore = Store;
  static constexpr bool kBulkPrefetch = BulkPrefetch;
  static constexpr int kMinArch = MinArch;
};

#if defined(__CUDACC__)

namespace detail {

template <StoreKind K>
__device__ __forceinline__ void store16(void* p, uint4 v) {
  if constexpr (K == StoreKind::Plain) arch::stGlobal16(p, v);
  else if constexpr (K == StoreKind::Streaming) arch::stGlobal16Streaming(p, v);
  else arch::stGlobal16NoAlloc(p, v);
}

template <bool Hint>
__device__ __forceinline__ void fetch16(uint32_t smem, const void* g) {
  if constexpr (Hint) arch::cpAsync16L2Prefetch256(smem, g);
  else arch::cpAsync16(smem, g);
}

/// Algorithm 2 over N >= S stages. fetch(j, slot) issues this thread's
/// cp.async of stage j into `slot`; process(j, slot) consumes stage j.
template <int S, class Fetch, class Process>
__device__ __forceinline__ void runPipeline(std::size_t N, Fetch&& fetch, Process&& process) {
#pragma unroll 1
  for (int j = 0; j < S; ++j) {  // prime
    fetch(static_cast<std::size_t>(j), j);
    arch::cpAsyncCommit();
  }
  int slot = 0;
#pragma unroll 1
  for (std::size_t j = S; j < N; ++j) {  // steady state
    arch::cpAsyncWait<S - 1>();          // stage j-S, the oldest, has landed
    process(j - S, slot);
    fetch(j, slot);
    arch::cpAsyncCommit();
    slot = slot + 1 == S ? 0 : slot + 1;
  }
#pragma unroll 1
  for (int k = 0; k < S; ++k) {  // drain: stage N-S+k is in `slot`
    arch::cpAsyncWaitDyn<S - 1>(S - 1 - k);
    process(N - S + k, slot);
    slot = slot + 1 == S ? 0 : slot + 1;
  }
}

} // namespace detail

/// The pipelined datapath: S stages of SB bytes, tuning T.
template <class T, int S, int SB>
struct PipelinePath {
  static_assert(S >= 1 && S <= limits::kMaxPipelineStages, "Atom pipeline: Stages must be in 1..16");
  static_assert(SB >= limits::kStageBytesUnit && SB % limits::kStageBytesUnit == 0,
                "Atom pipeline: StageBytes must be a positive multiple of 512");
  static_assert(static_cast<long>(S) * SB <= limits::kMaxAtomWorkspaceBytes,
                "Atom pipeline: Stages * StageBytes exceeds the 227 KiB of shared memory one CTA may use");
  static constexpr std::size_t kWorkspaceBytes = static_cast<std::size_t>(S) * SB;
  static constexpr int kMinArch = T::kMinArch;
  static constexpr std::size_t kVecsPerStage = SB / 16;

  /// dst[0..nvec) = src[0..nvec) (16-byte vectors, both 16-byte aligned).
  /// Requests smaller than the pipeline (S full stages) go through registers.
  __device__ static void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, std::byte* ws, Slice s) {
    const std::size_t N = nvec / kVecsPerStage;
    if (N < static_cast<std::size_t>(S)) {
      detail::copyVec16(dst, src, nvec, s);
      return;
    }
    auto fetch = [&](std::size_t j, int slot) {
      const uint4* g = src + j * kVecsPerStage;
      const uint32_t sm = arch::smemAddr(ws + static_cast<std::size_t>(slot) * SB);
      for (unsigned i = s.tid; i < kVecsPerStage; i += s.nthr) detail::fetch16<T::kL2Hint256>(sm + i * 16u, g + i);
      if constexpr (T::kBulkPrefetch) {
        if (s.tid == 0 && j + S < N) arch::bulkPrefetchL2(src + (j + S) * kVecsPerStage, SB);
      }
    };
    auto process = [&](std::size_t j, int slot) {
      const uint4* sm = reinterpret_cast<const uint4*>(ws + static_cast<std::size_t>(slot) * SB);
      uint4* d = dst + j * kVecsPerStage;
#pragma unroll 4
      for (unsigned i = s.tid; i < kVecsPerStage; i += s.nthr) detail::store16<T::kStore>(d + i, sm[i]);
    };
    detail::runPipeline<S>(N, fetch, process);
    const std::size_t done = N * kVecsPerStage;
    detail::copyVec16(dst + done, src + done, nvec - done, s);
  }

  /// Reduce of nvec 16-byte vectors at byte offset `off` of dst and of every
  /// source (all 16-byte aligned there). A stage holds SB/n bytes of each
  /// source, laid out [source][piece] in its slot.
  template <class E, RedOp Op>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte* ws, Slice s) {
    const std::size_t cv = kVecsPerStage / static_cast<std::size_t>(srcs.n);  // vectors per source per stage
    const std::size_t N = nvec / cv;
    if (N < static_cast<std::size_t>(S)) {
      detail::reduceVec16<E, Op>(dstBase, srcs, off, nvec, s);
      return;
    }
    uint4* dst = reinterpret_cast<uint4*>(dstBase + off);
    auto fetch = [&](std::size_t j, int slot) {
      const uint32_t sm = arch::smemAddr(ws + static_cast<std::size_t>(slot) * SB);
#pragma unroll 1
      for (int p = 0; p < srcs.n; ++p) {
        const uint4* g = reinterpret_cast<const uint4*>(srcs.p[p] + off) + j * cv;
        const uint32_t smp = sm + static_cast<uint32_t>(p * cv * 16);
        for (unsigned i = s.tid; i < cv; i += s.nthr) detail::fetch16<T::kL2Hint256>(smp + i * 16u, g + i);
        if constexpr (T::kBulkPrefetch) {
          if (s.tid == 0 && j + S < N) arch::bulkPrefetchL2(g + S * cv, static_cast<uint32_t>(cv * 16));
        }
      }
    };
    auto process = [&](std::size_t j, int slot) {
      const uint4* sm = reinterpret_cast<const uint4*>(ws + static_cast<std::size_t>(slot) * SB);
      uint4* d = dst + j * cv;
      for (unsigned i = s.tid; i < cv; i += s.nthr) {
        VecAcc<E> acc;
        vecLoad<E>(acc, sm[i]);
#pragma unroll 1
        for (int p = 1; p < srcs.n; ++p) vecAccumulate<E, Op>(acc, sm[p * cv + i]);
        detail::store16<T::kStore>(d + i, vecStore<E, Op>(acc));
      }
    };
    detail::runPipeline<S>(N, fetch, process);
    const std::size_t done = N * cv;
    detail::reduceVec16<E, Op>(dstBase, srcs, off + done * 16, nvec - done, s);
  }
};

/// The register datapath (Generic): no workspace.
struct RegisterPath {
  static constexpr std::size_t kWorkspaceBytes = 0;
  static constexpr int kMinArch = 0;
  __device__ static void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, std::byte*, Slice s) {
    detail::copyVec16(dst, src, nvec, s);
  }
  template <class E, RedOp Op>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte*, Slice s) {
    detail::reduceVec16<E, Op>(dstBase, srcs, off, nvec, s);
  }
};

#endif // __CUDACC__

} // namespace purlin::atom
