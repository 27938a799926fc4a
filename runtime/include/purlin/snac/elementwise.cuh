/// @file elementwise.cuh
/// @brief Element helpers of the latency program: 8-byte words loaded from
/// and stored to element-aligned (not necessarily 8-byte-aligned) addresses,
/// with short tails, and the reduction of one word's lanes in ascending
/// rank order (atom/elem.cuh's arithmetic, the same as Atom::reduce and the
/// host reference: acc = A(x0); acc = op(acc, A(xi)); round once);
/// reducePair, the same result for two ranks in fewer instructions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "purlin/atom/elem.cuh"
#include "purlin/reduction.h"
#include "purlin/types.h"

namespace purlin::snac {

/// Loads `bytes` (1..8) bytes at `p` into the low bytes of a word (rest 0).
__device__ __forceinline__ uint64_t loadWord(const std::byte* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (bytes == 8 && (a & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  uint64_t v = 0;
  if ((a & 3) == 0 && bytes == 8) {
    const auto* q = reinterpret_cast<const uint32_t*>(p);
    return uint64_t(q[0]) | (uint64_t(q[1]) << 32);
  }
  if ((a & 1) == 0 && (bytes & 1) == 0) {
    const auto* q = reinterpret_cast<const uint16_t*>(p);
    for (std::size_t i = 0; i < bytes / 2; ++i) v |= uint64_t(q[i]) << (16 * i);
    return v;
  }
  for (std::size_t i = 0; i < bytes; ++i) v |= uint64_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

/// Stores the low `bytes` (1..8) bytes of `v` at `p`.
__device__ __forceinline__ void storeWord(std::byte* p, uint64_t v, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (bytes == 8 && (a & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  if ((a & 3) == 0 && bytes == 8) {
    auto* q = reinterpret_cast<uint32_t*>(p);
    q[0] = uint32_t(v);
    q[1] = uint32_t(v >> 32);
    return;
  }
  if ((a & 1) == 0 && (bytes & 1) == 0) {
    auto* q = reinterpret_cast<uint16_t*>(p);
    for (std::size_t i = 0; i < bytes / 2; ++i) q[i] = uint16_t(v >> (16 * i));
    return;
  }
  for (std::size_t i = 0; i < bytes; ++i) p[i] = std::byte(uint8_t(v >> (8 * i)));
}

/// The lanes of one 8-byte word of element type E: get(w, i) is lane i's
/// accumulator value (elem.cuh), put(a, i) the element rounded from
/// accumulator value a, shifted into lane i. f32, f16 and bf16 spelled
/// with the intrinsics the latency kernels were measured with.
template <class E> struct ElemBits {
  static constexpr int kLanes = 8 / int(sizeof(E));
  using Acc = atom::AccOf<E>;
  using Unit = std::conditional_t<sizeof(E) == 1, uint8_t,
                                  std::conditional_t<sizeof(E) == 2, uint16_t,
                                                     std::conditional_t<sizeof(E) == 4, uint32_t, uint64_t>>>;
  __device__ static Acc get(uint64_t w, int i) {
    const Unit u = Unit(w >> (8 * sizeof(E) * i));
    E e;
    memcpy(&e, &u, sizeof(E));
    return atom::toAcc(e);
  }
  __device__ static uint64_t put(Acc a, int i) {
    const E e = atom::fromAcc<E>(a);
    Unit u;
    memcpy(&u, &e, sizeof(E));
    return uint64_t(u) << (8 * sizeof(E) * i);
  }
};
template <> struct ElemBits<float> {
  static constexpr int kLanes = 2;
  __device__ static float get(uint64_t w, int i) { return __uint_as_float(uint32_t(w >> (32 * i))); }
  __device__ static uint64_t put(float f, int i) { return uint64_t(__float_as_uint(f)) << (32 * i); }
};
template <> struct ElemBits<__half> {
  static constexpr int kLanes = 4;
  __device__ static float get(uint64_t w, int i) {
    return __half2float(__ushort_as_half(uint16_t(w >> (16 * i))));
  }
  __device__ static uint64_t put(float f, int i) {
    return uint64_t(__half_as_ushort(__float2half_rn(f))) << (16 * i);
  }
};
template <> struct ElemBits<__nv_bfloat16> {
  static constexpr int kLanes = 4;
  __device__ static float get(uint64_t w, int i) {
    return __bfloat162float(__ushort_as_bfloat16(uint16_t(w >> (16 * i))));
  }
  __device__ static uint64_t put(float f, int i) {
    return uint64_t(__bfloat16_as_ushort(__float2bfloat16_rn(f))) << (16 * i);
  }
};

/// Lane-wise accumulator of one 8-byte word over ranks in ascending order
/// in class (E, F) (elem.cuh's arithmetic: the same as Atom::reduce and the
/// host reference). Extremum of f16, bf16 and fp8 keeps the lanes packed
/// two to a register (atom::kPackedExtremum: exact, no fp32).
template <class E, OpFamily F> struct WordAcc {
  static constexpr int kLanes = ElemBits<E>::kLanes;
  static constexpr bool kPacked = atom::kPackedExtremum<E, F>;
  using Lanes = E[kLanes];
  std::conditional_t<kPacked, uint32_t[kLanes / 2], atom::AccOf<E>[kLanes]> acc;
  /// Every lane's accumulator value (fp8: two lanes per conversion, atom::toAccs).
  __device__ __forceinline__ static void lanes(uint64_t w, atom::AccOf<E> (&a)[kLanes]) {
    if constexpr (atom::kIsFp8<E>) {
      atom::toAccs<E>(*reinterpret_cast<const Lanes*>(&w), a);
    } else {
#pragma unroll
      for (int i = 0; i < kLanes; ++i) a[i] = ElemBits<E>::get(w, i);
    }
  }
  __device__ __forceinline__ void first(uint64_t w) {
    if constexpr (kPacked) atom::toPacked<E>(*reinterpret_cast<const Lanes*>(&w), acc);
    else lanes(w, acc);
  }
  __device__ __forceinline__ void next(uint64_t w, int variant) {
    if constexpr (kPacked) {
      uint32_t x[kLanes / 2];
      atom::toPacked<E>(*reinterpret_cast<const Lanes*>(&w), x);
#pragma unroll
      for (int k = 0; k < kLanes / 2; ++k) acc[k] = atom::packedExtremum<E>(acc[k], x[k], variant);
    } else if constexpr (atom::kIsFp8<E>) {
      atom::AccOf<E> x[kLanes];
      lanes(w, x);
#pragma unroll
      for (int i = 0; i < kLanes; ++i) acc[i] = atom::Arith<E, F>::combine(acc[i], x[i], variant);
    } else {
#pragma unroll
      for (int i = 0; i < kLanes; ++i) acc[i] = atom::Arith<E, F>::combine(acc[i], ElemBits<E>::get(w, i), variant);
    }
  }
  /// The word after `n` contributions, each lane rounded once.
  /// Avg's last step (atom::avgLast) sits behind one branch per word.
  __device__ __forceinline__ uint64_t result(int n, int variant) const {
    uint64_t w = 0;
    if constexpr (kPacked) {
      uint32_t last[kLanes / 2];
#pragma unroll
      for (int k = 0; k < kLanes / 2; ++k) last[k] = acc[k];
      atom::packedFinish<E>(last, n);
      atom::fromPacked<E>(last, *reinterpret_cast<Lanes*>(&w));
    } else {
      atom::AccOf<E> last[kLanes];
#pragma unroll
      for (int i = 0; i < kLanes; ++i) last[i] = acc[i];
      if constexpr (F == OpFamily::Sum) {
        if (variant) atom::avgLast<E>(last, n);
      }
      if constexpr (atom::kIsFp8<E>) {
        atom::fromAccs<E>(last, *reinterpret_cast<Lanes*>(&w));
      } else {
#pragma unroll
        for (int i = 0; i < kLanes; ++i) w |= ElemBits<E>::put(last[i], i);
      }
    }
    return w;
  }
};

/// True when reducePair<E, F> of a sum (variant 0) is the packed add (bf16
/// or fp16).
template <class E, OpFamily F>
inline constexpr bool kReducePairPacked =
    F == OpFamily::Sum && (std::is_same_v<E, __nv_bfloat16> || std::is_same_v<E, __half>);

/// op(x, y) of two ranks' words, lane-wise, x the lower rank's: the whole
/// reduction when there are two ranks. Sum of bf16 or fp16
/// (kReducePairPacked, variant 0) is one packed add per element pair (__hadd2; bf16:
/// add.bf16x2 on sm_90, fma.rn.bf16x2 x*1+y on sm_80; fp16: add.f16x2; no
/// flush to zero), rounded once from the exact sum. WordAcc rounds the fp32
/// sum once; the two agree (NaN payloads aside) because fp32's 24 bits are
/// at least 2p + 2 for p = 8 (bf16) and 11 (fp16), so rounding twice is
/// innocuous for one addition (Figueroa), subnormals and overflow included
/// (reduce_pair_test checks all 2^32 pairs of each type). Part of the
/// two-rank reduce path's gain (bench/NOTES.md E13). Other cases: WordAcc.
template <class E, OpFamily F> __device__ __forceinline__ uint64_t reducePair(uint64_t x, uint64_t y, int variant) {
  if constexpr (kReducePairPacked<E, F>) {
    if (variant == 0) {
      using E2 = std::conditional_t<std::is_same_v<E, __half>, __half2, __nv_bfloat162>;
      static_assert(sizeof(E2) == 4, "a packed pair is 4 bytes");
      const uint32_t xs[2] = {uint32_t(x), uint32_t(x >> 32)}, ys[2] = {uint32_t(y), uint32_t(y >> 32)};
      uint32_t rs[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        E2 a, b;
        memcpy(&a, &xs[i], 4);
        memcpy(&b, &ys[i], 4);
        const E2 s = __hadd2(a, b);
        memcpy(&rs[i], &s, 4);
      }
      return uint64_t(rs[0]) | (uint64_t(rs[1]) << 32);
    }
  }
  WordAcc<E, F> acc;
  acc.first(x);
  acc.next(y, variant);
  return acc.result(2, variant);
}

/// The latency program's reduction of one packet group: a lane's two words
/// A and B of every rank p < n (wa[p], wb[p], ascending rank order), reduced
/// in the call's class `red` among `Classes` (purlinc's instantiation
/// table): one uniform dispatch per group, then the class's own arithmetic
/// over all n ranks (n == 2: reducePair). Results in ra, rb.
template <uint64_t Classes>
__device__ __forceinline__ void reduceGroupWords(const Reduction& red, const uint64_t (&wa)[kMaxRanks],
                                                 const uint64_t (&wb)[kMaxRanks], int n, uint64_t& ra,
                                                 uint64_t& rb) {
  atom::withReductionClass<Classes>(red.cls, [&](auto tag) {
    using E = typename decltype(tag)::Elem;
    constexpr OpFamily F = decltype(tag)::family;
    WordAcc<E, F> accA, accB;
    accA.first(wa[0]);
    accB.first(wb[0]);
#pragma unroll
    for (int p = 1; p < kMaxRanks; ++p) {
      if (p >= n) break;
      accA.next(wa[p], red.variant);
      accB.next(wb[p], red.variant);
    }
    ra = accA.result(n, red.variant);
    rb = accB.result(n, red.variant);
  });
}
/// Two ranks: ra = op(xa, ya), rb = op(xb, yb), x the lower rank's.
template <uint64_t Classes>
__device__ __forceinline__ void reduceGroupPair(const Reduction& red, uint64_t xa, uint64_t ya, uint64_t xb,
                                                uint64_t yb, uint64_t& ra, uint64_t& rb) {
  atom::withReductionClass<Classes>(red.cls, [&](auto tag) {
    using E = typename decltype(tag)::Elem;
    constexpr OpFamily F = decltype(tag)::family;
    ra = reducePair<E, F>(xa, ya, red.variant);
    rb = reducePair<E, F>(xb, yb, red.variant);
  });
}

} // namespace purlin::snac
