/// @file atom.cuh
/// @brief The Atom: how bytes move on one GPU generation. `copy` and
/// `reduce<E, op>` device functions, CTA-collective (or over any Slice of
/// threads), for four datapaths selected by a tag:
///   Generic   - 16-byte vector loads/stores through registers, unrolled;
///   Ampere    - the cp.async shared-memory pipeline (paper Algorithm 2);
///   Hopper    - the same pipeline with the tuning measured best on H200;
///   Blackwell - the Hopper pipeline, compiled for sm_100;
///   HopperTma - the pipeline's stages moved by TMA bulk copies (sm_90+,
///               tma_path.cuh).
/// See docs/atom.md for use from one's own kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/atom/pipeline.cuh"
#include "purlin/atom/register_path.cuh"
#include "purlin/atom/tma_path.cuh"

namespace purlin::atom {

/// The datapath tags, one per row of purlin/vocabulary.def (the table
/// purlinc reads too). Native (`Atom` in a .pl) is resolved per compilation
/// pass: Ampere's pipeline on sm_80..sm_89, Hopper's on sm_90..sm_99,
/// Blackwell's on sm_100+, Generic below sm_80. One binary built for several
/// architectures thus runs its own generation's datapath on each GPU. Its
/// workspace is the pipeline's in every pass, so the host launch (which
/// sizes dynamic shared memory) and every device pass agree.
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) struct Name {};
#include "purlin/vocabulary.def"

/// Pipeline tuning of each pipelined datapath. Hopper keeps only what a
/// measurement on 2xH200 supports: bench/micro measured the L2::256B hint,
/// streaming (.cs) and L1::no_allocate stores within +-0.3% of the plain
/// pipeline at every CTA/stage point, and the sm_90 bulk L2 prefetch at
/// 6 GB/s (60x slower), so Hopper is the plain pipeline (docs/atom.md,
/// bench/results/*-h200x2-micro). Blackwell is unmeasured: same as Hopper.
using AmpereTuning = Tuning<false, StoreKind::Plain, false, 800>;
using HopperTuning = Tuning<false, StoreKind::Plain, false, 900>;
using BlackwellTuning = Tuning<false, StoreKind::Plain, false, 1000>;

namespace detail {
template <class Arch, int S, int SB> struct PathOf;
template <int S, int SB> struct PathOf<Generic, S, SB> { using type = RegisterPath; };
template <int S, int SB> struct PathOf<Ampere, S, SB> { using type = PipelinePath<AmpereTuning, S, SB>; };
template <int S, int SB> struct PathOf<Hopper, S, SB> { using type = PipelinePath<HopperTuning, S, SB>; };
template <int S, int SB> struct PathOf<Blackwell, S, SB> { using type = PipelinePath<BlackwellTuning, S, SB>; };
template <int S, int SB> struct PathOf<HopperTma, S, SB> { using type = TmaPath<S, SB>; };
template <int S, int SB> struct NativePath;
template <int S, int SB> struct PathOf<Native, S, SB> { using type = NativePath<S, SB>; };
/// A Tuning in the Arch position selects the pipeline with that tuning
/// (benchmarks and tests of tuning candidates).
template <bool H, StoreKind K, bool B, int M, int S, int SB>
struct PathOf<Tuning<H, K, B, M>, S, SB> { using type = PipelinePath<Tuning<H, K, B, M>, S, SB>; };
} // namespace detail

/// Oldest __CUDA_ARCH__ a datapath compiles for (vocabulary.def's MinArch).
template <class Arch> inline constexpr int kMinArch = 0;
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) template <> inline constexpr int kMinArch<Name> = MinArch;
#include "purlin/vocabulary.def"
template <bool H, StoreKind K, bool B, int M> inline constexpr int kMinArch<Tuning<H, K, B, M>> = M;

#if defined(__CUDACC__)
/// True when the current compilation pass can instantiate datapath Arch
/// (always true in the host pass). Kernels compiled for several
/// architectures guard a datapath with `if constexpr (kCompiled<Arch>)`.
template <class Arch> inline constexpr bool kCompiled = PURLIN_DEVICE_ARCH >= kMinArch<Arch>;

/// The datapath of the architecture this pass compiles for: Ampere for
/// sm_80..sm_89, Hopper for sm_90..sm_99, Blackwell for sm_100+, Generic
/// otherwise (and in the host pass, where no device code is generated).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
using NativeArch = Blackwell;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using NativeArch = Hopper;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
using NativeArch = Ampere;
#else
using NativeArch = Generic;
#endif
#endif

#if defined(__CUDACC__)
namespace detail {
/// Datapath of this pass for Native (see Native).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
template <int S, int SB> using NativePassPath = PipelinePath<BlackwellTuning, S, SB>;
#elif __CUDA_ARCH__ >= 900
template <int S, int SB> using NativePassPath = PipelinePath<HopperTuning, S, SB>;
#elif __CUDA_ARCH__ >= 800
template <int S, int SB> using NativePassPath = PipelinePath<AmpereTuning, S, SB>;
#else
template <int S, int SB> using NativePassPath = RegisterPath;
#endif

template <int S, int SB> struct NativePath {
  static constexpr std::size_t kWorkspaceBytes = static_cast<std::size_t>(S) * SB;
  static constexpr int kMinArch = 0;
  using RangePath = typename NativePassPath<S, SB>::RangePath;
  static constexpr int kStages = S;
  static_assert(NativePassPath<S, SB>::kWorkspaceBytes <= kWorkspaceBytes,
                "the native datapath of this pass needs more workspace than the launch provides");
  __device__ static void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, std::byte* ws, Slice s) {
    NativePassPath<S, SB>::copyVec16(dst, src, nvec, ws, s);
  }
  template <class E, OpFamily F>
  __device__ static void reduceVec16(std::byte* dstBase, const Sources& srcs, std::size_t off, std::size_t nvec,
                                     std::byte* ws, Slice s, int variant) {
    NativePassPath<S, SB>::template reduceVec16<E, F>(dstBase, srcs, off, nvec, ws, s, variant);
  }
};
/// dst[i] = op over p of srcs.p[p][i] for i < count elements of class
/// (E, F) on datapath Path: element loops for a head up to 16-byte alignment,
/// the tail and pointers that are not co-aligned, Path's vector loop for
/// the rest. dst may alias a source elementwise.
template <class RangePath, class E, OpFamily F, int StaticStages = 0>
__device__ __forceinline__ void reduceRangeInline(std::byte* dst, const Sources& srcs, std::size_t count,
                                                  std::byte* workspace, Slice s, int variant, int stages) {
  bool coaligned = true;
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
#pragma unroll
  for (int p = 0; p < kMaxSources; ++p) coaligned &= ((reinterpret_cast<std::uintptr_t>(srcs.p[p]) ^ d) & 15) == 0;
  // Element loops: [0, head) and [tailBegin, count); vectors in between.
  std::size_t head = count, tailBegin = count;
  if (coaligned) {
    head = ((16 - (d & 15)) & 15) / sizeof(E);
    if (head > count) head = count;
    const std::size_t nvec = (count - head) * sizeof(E) / 16;
    RangePath::template reduceVec16<E, F, StaticStages>(dst, srcs, head * sizeof(E), nvec, workspace, s, variant,
                                                        stages);
    tailBegin = head + nvec * 16 / sizeof(E);
  }
  // One element loop for both ends (compiled once per class, not three times).
#pragma unroll 1
  for (int end = 0; end < 2; ++end) {
    const std::size_t b = end == 0 ? 0 : tailBegin, e = end == 0 ? head : count;
    if (e > b) reduceElems<E, F>(dst, srcs, b * sizeof(E), e - b, s, variant);
  }
}

/// The range loop of one class, compiled once per translation unit,
/// datapath and pipeline depth, not at every reduce site: Atom::reduce's
/// dispatch calls it once per contiguous range (a chunk's slice), so the
/// call costs nothing measurable against the range and the loop inside is
/// the class's own. StaticStages: the calling Atom's depth, a constant, so
/// the loop is Algorithm 2's compile-time form as in a kernel of one pair
/// (measured: eager ReduceScatter at 0.976x, AllReduce 0.991x the loop with
/// the depth at run time, bench/results/2026-12-07-s19-device); a kernel
/// whose lanes reduce with half the stages compiles the loops once more.
/// 0 (RangePath's any-depth form, `stages` at run time) where no Atom's
/// depth is known. The 8- and 16-bit sums unswitch the variant: sum
/// (variant 0) runs a loop with it a constant, as a kernel of one pair
/// folds it, avg the loop with it at run time (measured: eager
/// ReduceScatter's f16, i8 and f8e4m3 sums at 1.07-1.11x of their own
/// kernels before, 1.03-1.06x after; f32 and f64 sums and max / min gained
/// nothing, so their one loop stays; bench/results/2026-12-07-s19-device,
/// call 13, and 2026-12-07-s20-device).
template <class RangePath, class E, OpFamily F, int StaticStages = 0>
__device__ __noinline__ void reduceRange(std::byte* dst, Sources srcs, std::size_t count, std::byte* workspace,
                                         Slice s, int variant, int stages) {
  if constexpr (F == OpFamily::Sum && sizeof(E) <= 2) {
    if (variant == 0) {
      reduceRangeInline<RangePath, E, F, StaticStages>(dst, srcs, count, workspace, s, 0, stages);
      return;
    }
  }
  reduceRangeInline<RangePath, E, F, StaticStages>(dst, srcs, count, workspace, s, variant, stages);
}
/// The two-operand loop of one class (register datapath), compiled once per
/// translation unit: Atom::reducePair calls it once per range.
template <class E, OpFamily F>
__device__ __noinline__ void reducePairRange(uint4* dst0, uint4* dst1, const uint4* a, const uint4* b,
                                             std::size_t nvec, Slice s, int variant) {
  reduceVec16Pair<E, F>(dst0, dst1, a, b, nvec, s, variant);
}
} // namespace detail
#endif

template <class Arch, int Stages = 8, int StageBytes = 16384>
struct Atom {
  using Path = typename detail::PathOf<Arch, Stages, StageBytes>::type;
  static constexpr int kStages = Stages;
  static constexpr int kStageBytes = StageBytes;
  /// Dynamic shared memory one CTA must pass as `workspace` (16-byte
  /// aligned; 0 for Generic, which ignores it).
  static constexpr std::size_t kWorkspaceBytes = Path::kWorkspaceBytes;
  /// Oldest __CUDA_ARCH__ this datapath compiles for.
  static constexpr int kMinArch = Path::kMinArch;

#if defined(__CUDACC__)
  /// Copies `bytes` from src to dst (local or peer memory). CTA-collective:
  /// every thread of the CTA calls with the same arguments. Any byte count
  /// and alignment; no barrier inside: before another thread reads dst (or
  /// before a notify), the caller synchronizes (__syncthreads / fence).
  /// src and dst must not overlap.
  __device__ static void copy(std::byte* dst, const std::byte* src, std::size_t bytes, std::byte* workspace) {
    copy(dst, src, bytes, workspace, ctaSlice());
  }

  /// As copy, by the threads of Slice s only. Each slice that runs
  /// concurrently needs its own workspace of kWorkspaceBytes.
  __device__ static void copy(std::byte* dst, const std::byte* src, std::size_t bytes, std::byte* workspace, Slice s) {
    static_assert(PURLIN_DEVICE_ARCH >= Path::kMinArch,
                  "this Atom datapath needs a newer GPU architecture than the one compiled for "
                  "(guard it with `if constexpr (purlin::atom::kCompiled<Arch>)`)");
    if (bytes == 0) return;
    const auto d = reinterpret_cast<std::uintptr_t>(dst);
    const auto x = d ^ reinterpret_cast<std::uintptr_t>(src);
    if ((x & 15) == 0) {  // co-aligned: bytes head, 16-byte body, bytes tail
      const std::size_t head = ((16 - (d & 15)) & 15) < bytes ? ((16 - (d & 15)) & 15) : bytes;
      detail::copyUnits(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), head, s);
      const std::size_t nvec = (bytes - head) / 16;
      Path::copyVec16(reinterpret_cast<uint4*>(dst + head), reinterpret_cast<const uint4*>(src + head), nvec,
                      workspace, s);
      const std::size_t done = head + nvec * 16;
      detail::copyUnits(reinterpret_cast<uint8_t*>(dst + done), reinterpret_cast<const uint8_t*>(src + done),
                        bytes - done, s);
    } else if ((x & 7) == 0) {
      copyCoaligned<uint64_t>(dst, src, bytes, s);
    } else if ((x & 3) == 0) {
      copyCoaligned<uint32_t>(dst, src, bytes, s);
    } else if ((x & 1) == 0) {
      copyCoaligned<uint16_t>(dst, src, bytes, s);
    } else {
      detail::copyUnits(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), bytes, s);
    }
  }

  /// dst[i] = op(sources[0][i], ..., sources[n-1][i]) over bytes/sizeof(E)
  /// elements, accumulated in fp32 in ascending source order (bitwise
  /// deterministic). CTA-collective. 1 <= n <= 8; element-aligned pointers;
  /// dst may alias a source elementwise (in place). Trailing bytes that do
  /// not form a whole element are not touched. The loop is inlined here,
  /// compiled for (E, Op) alone (a user's kernel of one pair).
  template <class E, RedOp Op>
  __device__ static void reduce(std::byte* dst, const std::byte* const* sources, std::size_t bytes, int n,
                                std::byte* workspace) {
    reduce<E, Op>(dst, sources, bytes, n, workspace, ctaSlice());
  }

  /// As reduce, by the threads of Slice s only.
  template <class E, RedOp Op>
  __device__ static void reduce(std::byte* dst, const std::byte* const* sources, std::size_t bytes, int n,
                                std::byte* workspace, Slice s) {
    static_assert(kIsReduceElem<E>, "Atom::reduce takes the element types of purlin/types.def");
    checkArch();
    const std::size_t count = bytes / sizeof(E);
    if (count == 0 || n < 1) return;
    const detail::Sources srcs = sourcesOf(sources, n);
    // Inlined: the pipeline depth is a constant here (Algorithm 2's static form).
    detail::reduceRangeInline<typename Path::RangePath, E, familyOf(Op), Path::kStages>(
        dst, srcs, count, workspace, s, variantOf(Op), Path::kStages);
  }

  /// As reduce, for the (dtype, op) of a call: `red` (reductionOf, purlin/reduction.h)
  /// picks the range loop of its class among `Classes` (the set purlinc's
  /// instantiation table lists) once, for the whole range; the loops are
  /// compiled once per translation unit (detail::reduceRange), not here.
  /// A class outside `Classes` reduces nothing (the launcher refuses it).
  template <uint64_t Classes>
  __device__ static void reduce(const Reduction& red, std::byte* dst, const std::byte* const* sources,
                                std::size_t bytes, int n, std::byte* workspace) {
    reduce<Classes>(red, dst, sources, bytes, n, workspace, ctaSlice());
  }
  template <uint64_t Classes>
  __device__ static void reduce(const Reduction& red, std::byte* dst, const std::byte* const* sources,
                                std::size_t bytes, int n, std::byte* workspace, Slice s) {
    checkArch();
    if (bytes == 0 || n < 1) return;
    const detail::Sources srcs = sourcesOf(sources, n);
    withReductionClass<Classes>(red.cls, [&](auto tag) {
      using E = typename decltype(tag)::Elem;
      const std::size_t count = bytes / sizeof(E);
      if (count != 0)
        detail::reduceRange<typename Path::RangePath, E, decltype(tag)::family, Path::kStages>(
            dst, srcs, count, workspace, s, red.variant, Path::kStages);
    });
  }

  /// Workspace-free operations, for programs launched without shared
  /// memory (the direct and copy-engine programs): 16-byte vectors through
  /// registers, several in flight per thread. By the threads of Slice s;
  /// no barrier inside. Preconditions: every pointer 16-byte aligned,
  /// `bytes` a multiple of 16.
  ///
  /// Every destination of `d` (1 <= d.n <= kMaxDests) gets src's bytes;
  /// src is read once.
  __device__ static void copyToMany(const Dests& d, const std::byte* src, std::size_t bytes, Slice s) {
    detail::copyVec16ToMany(d, reinterpret_cast<const uint4*>(src), bytes / 16, s);
  }
  /// pr.dst[k] gets pr.src[k]'s bytes for every pair k < pr.n, the pairs
  /// interleaved per unrolled step (copies to different destinations, a
  /// peer over NVLink and this GPU's memory, proceed together).
  __device__ static void copyPairs(const CopyPairs& pr, std::size_t bytes, Slice s) {
    detail::copyVec16Pairs(pr, bytes / 16, s);
  }
  /// dst0 = op(a, b) elementwise (a first: ascending rank order), also
  /// stored to dst1 when not null, for the call's reduction `red` among
  /// `Classes`: one dispatch for the range into the class's loop, compiled
  /// once per translation unit (detail::reducePairRange). dst0 may alias a
  /// or b. A class outside `Classes` reduces nothing (the launcher refused
  /// the call).
  template <uint64_t Classes>
  __device__ static void reducePair(const Reduction& red, std::byte* dst0, std::byte* dst1, const std::byte* a,
                                    const std::byte* b, std::size_t bytes, Slice s) {
    const std::size_t nvec = bytes / 16;
    if (nvec == 0) return;
    withReductionClass<Classes>(red.cls, [&](auto tag) {
      detail::reducePairRange<typename decltype(tag)::Elem, decltype(tag)::family>(
          reinterpret_cast<uint4*>(dst0), reinterpret_cast<uint4*>(dst1), reinterpret_cast<const uint4*>(a),
          reinterpret_cast<const uint4*>(b), nvec, s, red.variant);
    });
  }

 private:
  __device__ static void checkArch() {
    static_assert(PURLIN_DEVICE_ARCH >= Path::kMinArch,
                  "this Atom datapath needs a newer GPU architecture than the one compiled for "
                  "(guard it with `if constexpr (purlin::atom::kCompiled<Arch>)`)");
  }
  __device__ static detail::Sources sourcesOf(const std::byte* const* sources, int n) {
    detail::Sources srcs;
    srcs.n = n < kMaxSources ? n : kMaxSources;
#pragma unroll
    for (int p = 0; p < kMaxSources; ++p) srcs.p[p] = p < srcs.n ? sources[p] : sources[0];
    return srcs;
  }
  /// Copy with units of T where dst and src agree modulo sizeof(T) but not 16.
  template <class T>
  __device__ static void copyCoaligned(std::byte* dst, const std::byte* src, std::size_t bytes, Slice s) {
    const auto d = reinterpret_cast<std::uintptr_t>(dst);
    std::size_t head = (sizeof(T) - (d % sizeof(T))) % sizeof(T);
    if (head > bytes) head = bytes;
    detail::copyUnits(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), head, s);
    const std::size_t n = (bytes - head) / sizeof(T);
    detail::copyUnits(reinterpret_cast<T*>(dst + head), reinterpret_cast<const T*>(src + head), n, s);
    const std::size_t done = head + n * sizeof(T);
    detail::copyUnits(reinterpret_cast<uint8_t*>(dst + done), reinterpret_cast<const uint8_t*>(src + done),
                      bytes - done, s);
  }
#endif // __CUDACC__
};

template <class Arch> using DefaultAtom = Atom<Arch>;

#if defined(__CUDACC__)
/// Atom A in a kernel specialized for one (dtype, op) pair (purlin/
/// reduction.h, `Pair`): its reduce is the pair's own loop, inlined at the
/// reduce site with the op a constant (Atom::reduce<E, Op>), instead of a
/// dispatch over the program's classes into out-of-line loops. Everything
/// else is A's. What purlinc's printed programs instantiate for the pairs a
/// policy specializes (AtomFor).
template <class A, int Pair> struct PairAtom : A {
  static_assert(Pair >= 0 && Pair < kNumPairs, "PairAtom: a (dtype, op) pair index (purlin/reduction.h)");
  using A::reduce;
  template <uint64_t Classes>
  __device__ static void reduce(const Reduction& red, std::byte* dst, const std::byte* const* sources,
                                std::size_t bytes, int n, std::byte* workspace) {
    reduce<Classes>(red, dst, sources, bytes, n, workspace, ctaSlice());
  }
  template <uint64_t Classes>
  __device__ static void reduce(const Reduction&, std::byte* dst, const std::byte* const* sources,
                                std::size_t bytes, int n, std::byte* workspace, Slice s) {
    static_assert((Classes & kernelClasses<Pair>(~uint64_t(0))) != 0,
                  "PairAtom: the pair's class is not among the program's (the policy's masks)");
    A::template reduce<typename ElementOf<pairDType(Pair)>::type, pairOp(Pair)>(dst, sources, bytes, n, workspace,
                                                                                  s);
  }
  /// As A::reducePair, the pair's loop inlined with its op a constant.
  template <uint64_t Classes>
  __device__ static void reducePair(const Reduction&, std::byte* dst0, std::byte* dst1, const std::byte* a,
                                    const std::byte* b, std::size_t bytes, Slice s) {
    constexpr Reduction pr = kernelReduction<Pair>(DType::F32, RedOp::Sum);
    static_assert((Classes >> pr.cls & 1u) != 0, "PairAtom::reducePair: the pair's class is not among the program's");
    const std::size_t nvec = bytes / 16;
    if (nvec == 0) return;
    detail::reduceVec16Pair<typename ElementOf<classElement(pr.cls)>::type, classFamily(pr.cls)>(
        reinterpret_cast<uint4*>(dst0), reinterpret_cast<uint4*>(dst1), reinterpret_cast<const uint4*>(a),
        reinterpret_cast<const uint4*>(b), nvec, s, pr.variant);
  }
};
/// The Atom of a kernel for `Pair`: A itself for kAnyPair.
template <class A, int Pair> struct AtomForPair { using type = PairAtom<A, Pair>; };
template <class A> struct AtomForPair<A, kAnyPair> { using type = A; };
template <class A, int Pair> using AtomFor = typename AtomForPair<A, Pair>::type;
#endif

#if defined(__CUDACC__)
/// True when the current pass can instantiate Atom type A (see kCompiled).
template <class A> inline constexpr bool kAtomCompiled = PURLIN_DEVICE_ARCH >= A::kMinArch;
#endif

} // namespace purlin::atom
