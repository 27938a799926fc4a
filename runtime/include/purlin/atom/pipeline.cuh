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

/// The reduce step of one staged slot, for both shared-memory pipelines
/// (cp.async here, TMA in tma_path.cuh): this thread's 16-byte pieces i of
/// the stage (source p's piece i at sm[p * cv + i]), accumulated in fp32 in
/// source order and stored to d[i].
template <class E, OpFamily F, StoreKind K>
__device__ __forceinline__ void reduceSlot(uint4* d, const uint4* sm, std::size_t cv, int n, Slice s, int variant) {
  for (unsigned i = s.tid; i < cv; i += s.nthr) {
    VecAcc<E, F> acc;
    vecLoad<E, F>(acc, sm[i]);
#pragma unroll 1
    for (int p = 1; p < n; ++p) vecAccumulate<E, F>(acc, sm[p * cv + i], variant);
    store16<K>(d + i, vecStore<E, F>(acc, n, variant));
  }
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

/// cp.async.wait_group with a run-time count (0..kMaxPipelineStages-1, the
/// most a pipeline of kMaxPipelineStages stages leaves in flight): one
/// switch, a uniform branch to the immediate form.
__device__ __forceinline__ void cpAsyncWaitPending(int pending) {
  switch (pending) {
#define PURLIN_WAIT_CASE(k) \
  case k: arch::cpAsyncWait<k>(); break;
    PURLIN_WAIT_CASE(0) PURLIN_WAIT_CASE(1) PURLIN_WAIT_CASE(2) PURLIN_WAIT_CASE(3)
    PURLIN_WAIT_CASE(4) PURLIN_WAIT_CASE(5) PURLIN_WAIT_CASE(6) PURLIN_WAIT_CASE(7)
    PURLIN_WAIT_CASE(8) PURLIN_WAIT_CASE(9) PURLIN_WAIT_CASE(10) PURLIN_WAIT_CASE(11)
    PURLIN_WAIT_CASE(12) PURLIN_WAIT_CASE(13) PURLIN_WAIT_CASE(14) PURLIN_WAIT_CASE(15)
#undef PURLIN_WAIT_CASE
    default: arch::cpAsyncWait<0>(); break;
  }
}
static_assert(limits::kMaxPipelineStages == 16, "cpAsyncWaitPending covers 0..kMaxPipelineStages-1 pending groups");

/// Algorithm 2 as one loop, with `process` (and `fetch`) inlined once
/// instead of in the steady state and the drain, and the depth `S` a
/// run-time value (1..kMaxPipelineStages): iteration j processes stage j-S
/// (when j >= S) and fetches stage j (when j < N); the wait for stage j-S
/// lets the stages committed after it stay in flight (S-1 in the steady
/// state, fewer in the drain). The reductions use it where the depth does
/// not divide kMaxPipelineStages (runPipelinePadded otherwise): their process step
/// is the code compiled per reduction class, and one loop serves the Atoms
/// of a CTA and of its lanes (lane.cuh: half the stages).
template <class Fetch, class Process>
__device__ __forceinline__ void runPipelineOnceDyn(std::size_t N, int S, Fetch&& fetch, Process&& process) {
  int slot = 0;
#pragma unroll 1
  for (std::size_t j = 0; j < N + std::size_t(S); ++j) {
    if (j >= static_cast<std::size_t>(S)) {
      const std::size_t oldest = j - S;
      const std::size_t after = N - 1 - oldest;  // stages committed after the oldest
      cpAsyncWaitPending(static_cast<int>(after < std::size_t(S - 1) ? after : std::size_t(S - 1)));
      process(oldest, slot);
    }
    if (j < N) {
      fetch(j, slot);
      arch::cpAsyncCommit();
    }
    slot = slot + 1 == S ? 0 : slot + 1;
  }
}

/// Algorithm 2 with the depth `S` a run-time value, as fast as the
/// compile-time form: every stage commits kMaxPipelineStages / S
/// cp.async groups (one with its copies, the rest empty), so the oldest
/// stage has landed when at most kMaxPipelineStages - 1 groups are pending,
/// whatever S: the steady state waits with one immediate, no switch and
/// no branch per stage. The drain waits for fewer (a switch per stage,
/// S stages per call). S must divide kMaxPipelineStages; other depths take
/// runPipelineOnceDyn.
template <class Fetch, class Process>
__device__ __forceinline__ void runPipelinePadded(std::size_t N, int S, Fetch&& fetch, Process&& process) {
  constexpr int kMax = limits::kMaxPipelineStages;
  const int groups = kMax / S;  // groups per stage
  auto commit = [&] {
#pragma unroll 1
    for (int g = 0; g < groups; ++g) arch::cpAsyncCommit();
  };
#pragma unroll 1
  for (int j = 0; j < S; ++j) {  // prime
    fetch(static_cast<std::size_t>(j), j);
    commit();
  }
  int slot = 0;
#pragma unroll 1
  for (std::size_t j = S; j < N; ++j) {  // steady state
    arch::cpAsyncWait<kMax - 1>();       // stage j-S, the oldest, has landed
    process(j - S, slot);
    fetch(j, slot);
    commit();
    slot = slot + 1 == S ? 0 : slot + 1;
  }
#pragma unroll 1
  for (int k = 0; k < S; ++k) {  // drain: stage N-S+k is in `slot`, kMax-1-k*groups groups after it
    cpAsyncWaitPending(kMax - 1 - k * groups);
    process(N - S + k, slot);
    slot = slot + 1 == S ? 0 : slot + 1;
  }
}

} // namespace detail

/// The reduction range loops of the pipelined datapath with tuning T and
/// stages of SB bytes, for any depth (a run-time argument): what
/// PipelinePath<T, S, SB> reduces with, whatever S. StaticStages > 0 (the
/// loop inlined where the depth is a constant: a kernel for one pair,
/// Atom::reduce<E, Op>) takes Algorithm 2's compile-time form.
template <class T, int SB>
struct PipelineReduce {
  static constexpr std::size_t kVecsPerStage = SB / 16;
  template <class E, OpFamily F, int StaticStages = 0>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte* ws, Slice s, int variant, int S) {
    const std::size_t cv = kVecsPerStage / static_cast<std::size_t>(srcs.n);  // vectors per source per stage
    const std::size_t N = nvec / cv;
    // Requests smaller than the pipeline (S full stages) and the rest after
    // the last full stage go through registers (one inlined register loop).
    const std::size_t done = N < static_cast<std::size_t>(S) ? 0 : N * cv;
    if (done != 0) {
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
        detail::reduceSlot<E, F, T::kStore>(dst + j * cv, sm, cv, srcs.n, s, variant);
      };
      if constexpr (StaticStages > 0) detail::runPipeline<StaticStages>(N, fetch, process);
      else if (limits::kMaxPipelineStages % S == 0) detail::runPipelinePadded(N, S, fetch, process);
      else detail::runPipelineOnceDyn(N, S, fetch, process);
    }
    detail::reduceVec16<E, F>(dstBase, srcs, off + done * 16, nvec - done, s, variant);
  }
};

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
  /// source, laid out [source][piece] in its slot. The loop is the
  /// depth-independent one (PipelineReduce, `RangePath`): the Atoms of a CTA
  /// and of its lanes share it.
  using RangePath = PipelineReduce<T, SB>;
  static constexpr int kStages = S;
  template <class E, OpFamily F>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte* ws, Slice s, int variant) {
    RangePath::template reduceVec16<E, F, S>(dstBase, srcs, off, nvec, ws, s, variant, S);
  }
};

/// The register datapath (Generic): no workspace.
struct RegisterPath {
  static constexpr std::size_t kWorkspaceBytes = 0;
  static constexpr int kMinArch = 0;
  using RangePath = RegisterPath;
  static constexpr int kStages = 0;
  __device__ static void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, std::byte*, Slice s) {
    detail::copyVec16(dst, src, nvec, s);
  }
  template <class E, OpFamily F, int = 0>
  __device__ static void reduceVec16(std::byte* dstBase, const detail::Sources& srcs, std::size_t off,
                                     std::size_t nvec, std::byte*, Slice s, int variant, int = 0) {
    detail::reduceVec16<E, F>(dstBase, srcs, off, nvec, s, variant);
  }
};

#endif // __CUDACC__

} // namespace purlin::atom
