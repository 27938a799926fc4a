/// @file register_path.cuh
/// @brief The register datapath: unrolled 16-byte vector loads into registers
/// and stores from them (several independent loads in flight per thread),
/// plus element/unit loops for heads, tails and non-co-aligned pointers.
/// This is the Generic Atom and the small-request path of the pipelined ones.
///
/// Loads use L1::no_allocate (or .cg for narrow units): data read through the
/// Atom is typically a peer's, published by a release the caller acquired,
/// and must not be served from a stale L1 line.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/atom/elem.cuh"
#include "purlin/atom/slice.cuh"

namespace purlin::atom {
/// Most destinations of a one-to-many copy and pairs of a many-pairs copy.
inline constexpr int kMaxDests = 8;
/// Destinations of Atom::copyToMany: p[0..n), n <= kMaxDests.
struct Dests {
  std::byte* p[kMaxDests];
  int n;
};
/// Pairs of Atom::copyPairs: dst[k] receives src[k], k < n <= kMaxDests.
struct CopyPairs {
  std::byte* dst[kMaxDests];
  const std::byte* src[kMaxDests];
  int n;
};
} // namespace purlin::atom

#if defined(__CUDACC__)

namespace purlin::atom::detail {

/// Vectors in flight per thread in the register copy loop.
inline constexpr int kCopyUnroll = 8;
/// Vectors in flight per thread and source in the register reduce loop.
inline constexpr int kReduceUnroll = 4;
/// ... for class (E, F) in reduceVec16: half as many where a vector holds
/// 16 accumulators (1-byte elements, but a packed extremum: 64 accumulator
/// registers at 4 vectors): the AllReduce throughput unit took 18.5 s of
/// nvcc at 4, 16.1 s at 2; its four fp8 sum and product classes alone had
/// cost ptxas about 6 s at 4 (bench/results/2026-12-07-s15-compile).
template <class E, OpFamily F>
inline constexpr int kReduceUnrollOf = sizeof(E) == 1 && !kPackedExtremum<E, F> ? kReduceUnroll / 2 : kReduceUnroll;

/// dst[i] = src[i] for i < nvec (16-byte vectors), spread over the slice:
/// thread t handles i = t + k*nthr. Preconditions: both 16-byte aligned.
__device__ __forceinline__ void copyVec16(uint4* dst, const uint4* src, std::size_t nvec, Slice s) {
  constexpr int U = kCopyUnroll;
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < nvec; i += step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = arch::ldGlobal16NoAlloc(src + i + u * s.nthr);
#pragma unroll
    for (int u = 0; u < U; ++u) arch::stGlobal16(dst + i + u * s.nthr, v[u]);
  }
  for (; i < nvec; i += s.nthr) arch::stGlobal16(dst + i, arch::ldGlobal16NoAlloc(src + i));
}


/// dst_k[i] = src[i] for every destination k and i < nvec (16-byte
/// vectors): each vector is loaded once and stored to every destination
/// (the direct program's AllGather writes its input to all ranks' outputs
/// this way). Preconditions: all pointers 16-byte aligned, dsts.n >= 1.
__device__ __forceinline__ void copyVec16ToMany(const Dests& dsts, const uint4* src, std::size_t nvec, Slice s) {
  auto dst = [&](int k) { return reinterpret_cast<uint4*>(dsts.p[k]); };
  constexpr int U = kCopyUnroll;
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < nvec; i += step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = arch::ldGlobal16NoAlloc(src + i + u * s.nthr);
#pragma unroll 1
    for (int k = 0; k < dsts.n; ++k) {
      uint4* d = dst(k);
#pragma unroll
      for (int u = 0; u < U; ++u) arch::stGlobal16(d + i + u * s.nthr, v[u]);
    }
  }
  for (; i < nvec; i += s.nthr) {
    const uint4 v = arch::ldGlobal16NoAlloc(src + i);
#pragma unroll 1
    for (int k = 0; k < dsts.n; ++k) arch::stGlobal16(dst(k) + i, v);
  }
}


/// dst_k[i] = src_k[i] for every pair k and i < nvec (16-byte vectors),
/// the pairs interleaved per unrolled step, so copies to different
/// destinations (a peer over NVLink, this GPU's memory) proceed together
/// instead of one after the other. Preconditions: all pointers 16-byte aligned.
__device__ __forceinline__ void copyVec16Pairs(const CopyPairs& pr, std::size_t nvec, Slice s) {
  auto dst = [&](int k) { return reinterpret_cast<uint4*>(pr.dst[k]); };
  auto src = [&](int k) { return reinterpret_cast<const uint4*>(pr.src[k]); };
  constexpr int U = kCopyUnroll / 2;
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < nvec; i += step) {
#pragma unroll 1
    for (int k = 0; k < pr.n; ++k) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = arch::ldGlobal16NoAlloc(src(k) + i + u * s.nthr);
#pragma unroll
      for (int u = 0; u < U; ++u) arch::stGlobal16(dst(k) + i + u * s.nthr, v[u]);
    }
  }
  for (; i < nvec; i += s.nthr)
#pragma unroll 1
    for (int k = 0; k < pr.n; ++k) arch::stGlobal16(dst(k) + i, arch::ldGlobal16NoAlloc(src(k) + i));
}

/// dst0[i] = op(a[i], b[i]) (class (E, F) with `variant`, a first) for i <
/// nvec 16-byte vectors of E, also stored to dst1[i] when dst1 != nullptr.
/// dst0 may alias a or b (each vector is read before it is written, by the
/// same thread). Preconditions: all pointers 16-byte aligned.
template <class E, OpFamily F>
__device__ __forceinline__ void reduceVec16Pair(uint4* dst0, uint4* dst1, const uint4* a, const uint4* b,
                                                std::size_t nvec, Slice s, int variant) {
  constexpr int U = kReduceUnroll;
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < nvec; i += step) {
    uint4 va[U], vb[U];
#pragma unroll
    for (int u = 0; u < U; ++u) va[u] = arch::ldGlobal16NoAlloc(a + i + u * s.nthr);
#pragma unroll
    for (int u = 0; u < U; ++u) vb[u] = arch::ldGlobal16NoAlloc(b + i + u * s.nthr);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      VecAcc<E, F> acc;
      vecLoad<E, F>(acc, va[u]);
      vecAccumulate<E, F>(acc, vb[u], variant);
      va[u] = vecStore<E, F>(acc, 2, variant);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) arch::stGlobal16(dst0 + i + u * s.nthr, va[u]);
    if (dst1 != nullptr) {
#pragma unroll
      for (int u = 0; u < U; ++u) arch::stGlobal16(dst1 + i + u * s.nthr, va[u]);
    }
  }
  for (; i < nvec; i += s.nthr) {
    VecAcc<E, F> acc;
    vecLoad<E, F>(acc, arch::ldGlobal16NoAlloc(a + i));
    vecAccumulate<E, F>(acc, arch::ldGlobal16NoAlloc(b + i), variant);
    const uint4 v = vecStore<E, F>(acc, 2, variant);
    arch::stGlobal16(dst0 + i, v);
    if (dst1 != nullptr) arch::stGlobal16(dst1 + i, v);
  }
}

/// Reads one unit of type T (1, 2, 4 or 8 bytes) bypassing L1.
template <class T>
__device__ __forceinline__ T ldUnit(const T* p) {
  if constexpr (sizeof(T) == 1) return static_cast<T>(__ldcg(reinterpret_cast<const unsigned char*>(p)));
  else if constexpr (sizeof(T) == 2) return static_cast<T>(__ldcg(reinterpret_cast<const unsigned short*>(p)));
  else if constexpr (sizeof(T) == 4) return static_cast<T>(__ldcg(reinterpret_cast<const unsigned int*>(p)));
  else return static_cast<T>(__ldcg(reinterpret_cast<const unsigned long long*>(p)));
}

/// dst[i] = src[i] for i < n units of T (1, 2, 4 or 8 bytes), unrolled.
/// Preconditions: both pointers aligned to sizeof(T).
template <class T>
__device__ __forceinline__ void copyUnits(T* dst, const T* src, std::size_t n, Slice s) {
  constexpr int U = 8;
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < n; i += step) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ldUnit(src + i + u * s.nthr);
#pragma unroll
    for (int u = 0; u < U; ++u) dst[i + u * s.nthr] = v[u];
  }
  for (; i < n; i += s.nthr) dst[i] = ldUnit(src + i);
}

/// Sources of a reduce, copied into registers once (n <= kMaxSources).
struct Sources {
  const std::byte* p[kMaxSources];
  int n;
};

/// dst[i] = op over p of src_p[i] for i < nvec 16-byte vectors of E, where
/// src_p = srcs.p[p] + off and dst = dstBase + off (byte offset `off`).
/// Preconditions: all of those 16-byte aligned.
template <class E, OpFamily F>
__device__ __forceinline__ void reduceVec16(std::byte* dstBase, const Sources& srcs, std::size_t off,
                                            std::size_t nvec, Slice s, int variant) {
  constexpr int U = kReduceUnrollOf<E, F>;
  uint4* dst = reinterpret_cast<uint4*>(dstBase + off);
  auto src = [&](int p) { return reinterpret_cast<const uint4*>(srcs.p[p] + off); };
  std::size_t i = s.tid;
  const std::size_t step = static_cast<std::size_t>(U) * s.nthr;
  for (; i + static_cast<std::size_t>(U - 1) * s.nthr < nvec; i += step) {
    VecAcc<E, F> acc[U];
    {
      uint4 v[U];
      const uint4* s0 = src(0);
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = arch::ldGlobal16NoAlloc(s0 + i + u * s.nthr);
#pragma unroll
      for (int u = 0; u < U; ++u) vecLoad<E, F>(acc[u], v[u]);
    }
#pragma unroll 1
    for (int p = 1; p < srcs.n; ++p) {
      uint4 v[U];
      const uint4* sp = src(p);
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = arch::ldGlobal16NoAlloc(sp + i + u * s.nthr);
#pragma unroll
      for (int u = 0; u < U; ++u) vecAccumulate<E, F>(acc[u], v[u], variant);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) arch::stGlobal16(dst + i + u * s.nthr, vecStore<E, F>(acc[u], srcs.n, variant));
  }
  for (; i < nvec; i += s.nthr) {
    VecAcc<E, F> acc;
    vecLoad<E, F>(acc, arch::ldGlobal16NoAlloc(src(0) + i));
#pragma unroll 1
    for (int p = 1; p < srcs.n; ++p) vecAccumulate<E, F>(acc, arch::ldGlobal16NoAlloc(src(p) + i), variant);
    arch::stGlobal16(dst + i, vecStore<E, F>(acc, srcs.n, variant));
  }
}

/// Element-by-element reduce of `count` elements starting at byte offset
/// `off` (heads, tails, and pointers that are not co-aligned). Preconditions:
/// all pointers aligned to sizeof(E).
template <class E, OpFamily F>
__device__ __forceinline__ void reduceElems(std::byte* dstBase, const Sources& srcs, std::size_t off,
                                            std::size_t count, Slice s, int variant) {
  using Raw = std::conditional_t<sizeof(E) == 1, uint8_t,
                                 std::conditional_t<sizeof(E) == 2, uint16_t,
                                                    std::conditional_t<sizeof(E) == 4, uint32_t, uint64_t>>>;
  E* dst = reinterpret_cast<E*>(dstBase + off);
  for (std::size_t i = s.tid; i < count; i += s.nthr) {
    auto elem = [&](int p) {
      Raw r = ldUnit(reinterpret_cast<const Raw*>(srcs.p[p] + off) + i);
      E e;
      memcpy(&e, &r, sizeof(E));
      return e;
    };
    AccOf<E> acc = toAcc(elem(0));
#pragma unroll 1
    for (int p = 1; p < srcs.n; ++p) acc = Arith<E, F>::combine(acc, toAcc(elem(p)), variant);
    dst[i] = Arith<E, F>::finish(acc, srcs.n, variant);
  }
}

} // namespace purlin::atom::detail

#endif // __CUDACC__
