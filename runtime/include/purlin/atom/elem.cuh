/// @file elem.cuh
/// @brief Element arithmetic of every reduction: each dtype's accumulator and
/// conversions (ElemTraits, from types.def's Element column), the five ops
/// on an accumulator, the arithmetic of a reduction class (Arith: one op
/// family, purlin/reduction.h), the accumulator of one 16-byte vector
/// (VecAcc, used by Atom::reduce and the direct programs), and the dispatch
/// of a call's class to the loop compiled for it (withReductionClass).
///
/// Semantics (docs/runtime.md "Element arithmetic"): an element's result is
/// acc = A(x0); acc = op(acc, A(xp)) for p = 1..n-1 in ascending rank order;
/// result = E(finalize(acc)), rounded to nearest even once. A = float for
/// f32, f16, bf16 and both fp8 formats, double for f64; integers compute in
/// a register-wide type with two's-complement wrap-around (the result is
/// the exact one modulo 2^bits, as NCCL's). avg = the sum divided by n
/// (floats: in A; integers: the wrapped sum, truncated toward zero). max
/// and min of floats return the other operand when one is NaN (fmaxf).
/// No fused operations, so results are bitwise reproducible and match a
/// host (or torch) reference that does the same.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "purlin/reduction.h"
#include "purlin/types.h"

namespace purlin::atom {

/// The C++ element type of a dtype (purlin/types.def).
template <DType T> struct ElementOf;
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element)                                         \
  template <> struct ElementOf<DType::Name> {                                                    \
    using type = Element;                                                                        \
    static_assert(sizeof(Element) == (bytes), "types.def: " #name " has the size of " #Element); \
  };
#include "purlin/types.def"

/// Accumulator type and conversions of element type E.
template <class E> struct ElemTraits;
template <> struct ElemTraits<float> {
  using Acc = float;
  __host__ __device__ static float toAcc(float x) { return x; }
  __host__ __device__ static float fromAcc(float a) { return a; }
};
template <> struct ElemTraits<__half> {
  using Acc = float;
  __host__ __device__ static float toAcc(__half x) { return __half2float(x); }
  __host__ __device__ static __half fromAcc(float a) { return __float2half_rn(a); }
};
template <> struct ElemTraits<__nv_bfloat16> {
  using Acc = float;
  __host__ __device__ static float toAcc(__nv_bfloat16 x) { return __bfloat162float(x); }
  __host__ __device__ static __nv_bfloat16 fromAcc(float a) { return __float2bfloat16_rn(a); }
};
template <> struct ElemTraits<double> {
  using Acc = double;
  __host__ __device__ static double toAcc(double x) { return x; }
  __host__ __device__ static double fromAcc(double a) { return a; }
};
/// fp8: exact to fp32; back with round to nearest even and no saturation
/// (e4m3: out of range is NaN; e5m2: infinity), as torch converts, bitwise
/// CUDA's __NV_NOSAT conversions. Those are software routines (through
/// double, with a normalization loop per e4m3 element back to float): on
/// sm_89+ the conversions are the hardware's (cvt.rn.satfinite, with the
/// out-of-range cases put back); below, and on the host, the 32-bit
/// integer forms below (fp8FromFloatSoft, fp8E4M3ToFloatSoft), a dozen
/// instructions each. reduce_pair_test compares both forms with __NV_NOSAT
/// for all 2^32 floats, elem_test the soft ones on the host.
template <__nv_fp8_interpretation_t Kind> struct Fp8Format {
  static constexpr int kMantissaBits = Kind == __NV_E4M3 ? 3 : 2;
  static constexpr int kBias = Kind == __NV_E4M3 ? 7 : 15;
  /// The largest finite value plus half an ulp: |a| above it (e4m3: 448 +
  /// 16 = 464 itself rounds to 448, even) or from it on (e5m2: 57344 + 4096
  /// = 61440 rounds to 65536, even) is out of range.
  static constexpr float kHalfUlpPastLargest = Kind == __NV_E4M3 ? 464.0f : 61440.0f;
  /// Whether a finite |a| (or NaN: false) rounds to a finite fp8 value.
  __host__ __device__ static constexpr bool inRange(float m) {
    return Kind == __NV_E4M3 ? m <= kHalfUlpPastLargest : m < kHalfUlpPastLargest;
  }
  /// The smallest normal value, 2^(1 - bias), as float bits.
  static constexpr uint32_t kMinNormalBits = uint32_t(127 + 1 - kBias) << 23;
  /// 2^(bias - 1 + mantissa bits): a subnormal's integer significand per unit.
  static constexpr float kSubnormalScale = float(1u << (kBias - 1 + kMantissaBits));
  /// NaN's encoding (either sign), and out of range's (with the sign).
  static constexpr uint32_t kNaN = 0x7Fu;
  static constexpr uint32_t kOverflow = Kind == __NV_E4M3 ? 0x7Fu : 0x7Cu;
};
__host__ __device__ __forceinline__ uint32_t floatBits(float a) {
  uint32_t u;
  std::memcpy(&u, &a, sizeof u);
  return u;
}
__host__ __device__ __forceinline__ float floatOfBits(uint32_t u) {
  float a;
  std::memcpy(&a, &u, sizeof a);
  return a;
}
/// float -> fp8 (round to nearest even, no saturation) in 32-bit integer
/// arithmetic: normal results round the float's significand at the fp8's
/// last bit (a carry moves into the exponent); subnormal ones are the
/// value times 2^(bias - 1 + mantissa bits), rounded to an integer by
/// adding 2^23 (exact: the product is a power-of-two scaling below 2^23).
template <__nv_fp8_interpretation_t Kind> __host__ __device__ __forceinline__ __nv_fp8_storage_t fp8FromFloatSoft(float a) {
  using F = Fp8Format<Kind>;
  const uint32_t u = floatBits(a);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t mag = u & 0x7FFFFFFFu;
  uint32_t r;
  if (mag > 0x7F800000u) return __nv_fp8_storage_t(F::kNaN);
  if (!F::inRange(floatOfBits(mag))) {
    r = F::kOverflow;
  } else if (mag < F::kMinNormalBits) {
    r = floatBits(floatOfBits(mag) * F::kSubnormalScale + 8388608.0f) - 0x4B000000u;
  } else {
    constexpr int drop = 23 - F::kMantissaBits;
    const uint32_t rounded = mag + ((1u << (drop - 1)) - 1u) + ((mag >> drop) & 1u);
    r = (rounded >> drop) - (uint32_t(127 - F::kBias) << F::kMantissaBits);
  }
  return __nv_fp8_storage_t(r | sign);
}
/// e4m3 -> float, exact: the 7 magnitude bits placed at the top of a
/// float's exponent and significand are the value times 2^-120 (subnormals
/// included: a float subnormal then), so one exact multiply by 2^120.
/// 0x7F and 0xFF are NaN.
__host__ __device__ __forceinline__ float fp8E4M3ToFloatSoft(__nv_fp8_storage_t x) {
  const uint32_t mag = uint32_t(x) & 0x7Fu;
  if (mag == 0x7Fu) return floatOfBits(0x7FFFFFFFu);
  const float m = floatOfBits(mag << 20) * 0x1p120f;
  return floatOfBits(floatBits(m) | (uint32_t(x) & 0x80u) << 24);
}
template <__nv_fp8_interpretation_t Kind> __host__ __device__ __forceinline__ __nv_fp8_storage_t fp8FromFloat(float a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  using F = Fp8Format<Kind>;
  const __nv_fp8_storage_t sat = __nv_cvt_float_to_fp8(a, __NV_SATFINITE, Kind);
  if (F::inRange(fabsf(a))) return sat;
  if (a != a) return __nv_fp8_storage_t(F::kNaN);
  const unsigned sign = a < 0.0f ? 0x80u : 0u;
  return __nv_fp8_storage_t(F::kOverflow | sign);
#else
  return fp8FromFloatSoft<Kind>(a);
#endif
}
/// fp8FromFloat of N floats (N a multiple of 8), one element per step,
/// always the front one: the values shift down a register and the bytes a
/// place (static indices, so everything stays in registers: no local
/// memory, no stack frame), each converted by the one fp8FromFloat site.
/// The slow path of fromAccs (a group with a NaN or an out-of-range value).
template <__nv_fp8_interpretation_t Kind, int N>
__host__ __device__ __forceinline__ void fp8FromFloats(const float (&a)[N], __nv_fp8_storage_t (&r)[N]) {
  static_assert(N % 8 == 0, "fp8FromFloats: whole 8-byte words");
  constexpr int W = N / 8;
  float t[N];
#pragma unroll
  for (int i = 0; i < N; ++i) t[i] = a[i];
  uint64_t w[W] = {};
#pragma unroll 1
  for (int i = 0; i < N; ++i) {
    const uint64_t b = fp8FromFloat<Kind>(t[0]);
#pragma unroll
    for (int k = 0; k + 1 < W; ++k) w[k] = (w[k] >> 8) | (w[k + 1] << 56);
    w[W - 1] = (w[W - 1] >> 8) | (b << 56);
#pragma unroll
    for (int k = 0; k + 1 < N; ++k) t[k] = t[k + 1];
  }
  std::memcpy(&r[0], &w[0], N);  // element i in byte i (little endian)
}
template <class F8, __nv_fp8_interpretation_t Kind> struct Fp8Traits {
  using Acc = float;
  static constexpr __nv_fp8_interpretation_t kKind = Kind;
  __host__ __device__ static float toAcc(F8 x) {
#if !(defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890)
    if constexpr (Kind == __NV_E4M3) return fp8E4M3ToFloatSoft(x.__x);
#endif
    return float(x);  // e5m2 is f16's top byte: one cvt.f32.f16
  }
  __host__ __device__ static F8 fromAcc(float a) {
    F8 r;
    r.__x = fp8FromFloat<Kind>(a);
    return r;
  }
};
template <> struct ElemTraits<__nv_fp8_e4m3> : Fp8Traits<__nv_fp8_e4m3, __NV_E4M3> {};
template <> struct ElemTraits<__nv_fp8_e5m2> : Fp8Traits<__nv_fp8_e5m2, __NV_E5M2> {};
/// Integers: a 32-bit register (64 for i64); fromAcc truncates (wraps).
template <class I, class A> struct IntTraits {
  using Acc = A;
  __host__ __device__ static A toAcc(I x) { return A(x); }
  __host__ __device__ static I fromAcc(A a) { return I(a); }
};
template <> struct ElemTraits<int8_t> : IntTraits<int8_t, int32_t> {};
template <> struct ElemTraits<uint8_t> : IntTraits<uint8_t, uint32_t> {};
template <> struct ElemTraits<int32_t> : IntTraits<int32_t, int32_t> {};
template <> struct ElemTraits<int64_t> : IntTraits<int64_t, int64_t> {};

template <class E> using AccOf = typename ElemTraits<E>::Acc;

/// The element types a reduction computes on (types.def).
template <class E> inline constexpr bool kIsElement = false;
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) template <> inline constexpr bool kIsElement<Element> = true;
#include "purlin/types.def"

/// Element -> accumulator (exact).
template <class E> __host__ __device__ __forceinline__ AccOf<E> toAcc(E x) { return ElemTraits<E>::toAcc(x); }
/// Accumulator -> element, rounded to nearest even (integers: wrapped).
template <class E> __host__ __device__ __forceinline__ E fromAcc(AccOf<E> a) { return ElemTraits<E>::fromAcc(a); }

/// op(a, b) on an accumulator. Integer sums and products wrap (unsigned
/// arithmetic of the accumulator's width: no undefined overflow).
template <RedOp Op, class A> __host__ __device__ __forceinline__ A applyOp(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if constexpr (Op == RedOp::Sum || Op == RedOp::Avg) return a + b;
    else if constexpr (Op == RedOp::Product) return a * b;
    else if constexpr (Op == RedOp::Max) {
      if constexpr (std::is_same_v<A, float>) return fmaxf(a, b);
      else return fmax(a, b);
    } else {
      static_assert(Op == RedOp::Min, "RedOp of types.def");
      if constexpr (std::is_same_v<A, float>) return fminf(a, b);
      else return fmin(a, b);
    }
  } else {
    using U = std::make_unsigned_t<A>;
    if constexpr (Op == RedOp::Sum || Op == RedOp::Avg) return A(U(a) + U(b));
    else if constexpr (Op == RedOp::Product) return A(U(a) * U(b));
    else if constexpr (Op == RedOp::Max) return a < b ? b : a;
    else { static_assert(Op == RedOp::Min, "RedOp of types.def"); return b < a ? b : a; }
  }
}

/// The accumulator after the last of `n` contributions: avg divides by n
/// (integers: the sum wrapped to E, then truncated toward zero); the other
/// ops leave it. fromAcc then rounds (or wraps) once.
template <class E, RedOp Op> __host__ __device__ __forceinline__ AccOf<E> finalize(AccOf<E> a, int n) {
  using A = AccOf<E>;
  if constexpr (Op != RedOp::Avg) {
    (void)n;
    return a;
  } else if constexpr (std::is_floating_point_v<A>) {
    return a / A(n);
  } else {
    return A(A(fromAcc<E>(a)) / A(n));
  }
}

/// Host reference of one element: the contributions `xs[0..n-1]` in rank
/// order (tests; the device computes the same).
template <class E, RedOp Op> __host__ __device__ E referenceReduce(const E* xs, int n) {
  AccOf<E> acc = toAcc(xs[0]);
  for (int p = 1; p < n; ++p) acc = applyOp<Op>(acc, toAcc(xs[p]));
  return fromAcc<E>(finalize<E, Op>(acc, n));
}

/// The arithmetic of reduction class (E, F) (purlin/reduction.h): one loop
/// compiled per class serves both ops of its family, the op's variant read
/// at run time (avg divides the sum by n; min compares the other way). The
/// same operations as applyOp / finalize of the op, so results are bitwise
/// those of a loop compiled for the op alone.
template <class E, OpFamily F> struct Arith {
  using A = AccOf<E>;
  __host__ __device__ static __forceinline__ A combine(A a, A b, int variant) {
    if constexpr (F == OpFamily::Sum) {
      (void)variant;
      return applyOp<RedOp::Sum>(a, b);
    } else if constexpr (F == OpFamily::Product) {
      (void)variant;
      return applyOp<RedOp::Product>(a, b);
    } else {
      return variant ? applyOp<RedOp::Min>(a, b) : applyOp<RedOp::Max>(a, b);
    }
  }
  /// The accumulator after the last of `n` contributions (avg: divided),
  /// before rounding.
  __host__ __device__ static __forceinline__ A last(A a, int n, int variant) {
    if constexpr (F == OpFamily::Sum) return variant ? finalize<E, RedOp::Avg>(a, n) : a;
    else {
      (void)n;
      (void)variant;
      return a;
    }
  }
  /// The element after the last of `n` contributions, rounded once.
  __host__ __device__ static __forceinline__ E finish(A a, int n, int variant) {
    return fromAcc<E>(last(a, n, variant));
  }
};

/// Avg's last step over the accumulators of one vector or word (the
/// branch on n is taken once for all of them): each element becomes
/// finalize<E, RedOp::Avg>(a, n), bitwise. For n a power of two (2, 4, 8
/// ranks) without a division per element (a floating-point division is a
/// subroutine, and its slow path takes zeros and subnormals): floating point
/// multiplies by 1/n, which is exact, so the product is the same real
/// quotient rounded once; integers shift the wrapped sum, rounding toward
/// zero as the division does (a negative sum adds n - 1 first). Other n
/// divide (inline: an out-of-line call would put the accumulators of every
/// loop using this in local memory; measured, bench/results/2026-12-04-units;
/// a loop over a local copy instead, one division site per vector, made
/// ptxas spill in every sum class loop: bench/results/2026-12-06-s14-device).
template <class E, int N> __host__ __device__ __forceinline__ void avgLast(AccOf<E> (&a)[N], int n) {
  using A = AccOf<E>;
  if (n > 0 && (n & (n - 1)) == 0) {
    if constexpr (std::is_floating_point_v<A>) {
      const A inv = A(1) / A(n);  // exact: n = 2^k
#pragma unroll
      for (int i = 0; i < N; ++i) a[i] = a[i] * inv;
    } else {
#if defined(__CUDA_ARCH__)
      const int k = __ffs(n) - 1;
#else
      const int k = __builtin_ctz(unsigned(n));
#endif
#pragma unroll
      for (int i = 0; i < N; ++i) {
        A x = A(fromAcc<E>(a[i]));  // the wrapped sum, as finalize divides it
        if constexpr (std::is_signed_v<A>) x = A(x + ((x >> (sizeof(A) * 8 - 1)) & A((A(1) << k) - 1)));
        a[i] = A(x >> k);
      }
    }
  } else if constexpr (std::is_integral_v<A> && sizeof(E) == 1) {
    // 8-bit elements: the wrapped sum is below 2^8 in magnitude, so one
    // float multiply by RN(1/n) truncates to the quotient exactly: 1/n
    // rounds up for n = 3, 5, 6, 7, the product's error is far below 2^-8,
    // and a quotient's fraction is a multiple of 1/n (elem_test compares
    // every wrapped sum and n with the division). One multiply per element
    // instead of an integer division's instruction sequence.
    static_assert(kMaxRanks <= 8, "avgLast: the 8-bit quotient is exact for n <= 8 (1/n rounded up)");
    const float inv = 1.0f / float(n);
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = A(int32_t(float(A(fromAcc<E>(a[i]))) * inv));  // truncation toward zero
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = finalize<E, RedOp::Avg>(a[i], n);
  }
}

/// Element types Atom::reduce takes.
template <class E> inline constexpr bool kIsReduceElem = kIsElement<E>;

/// Number of elements of type E in a 16-byte vector.
template <class E>
inline constexpr int kVecElems = 16 / static_cast<int>(sizeof(E));

#if defined(__CUDACC__)

/// True for the two fp8 formats (their ElemTraits know the format: kKind).
template <class E> inline constexpr bool kIsFp8 = std::is_same_v<E, __nv_fp8_e4m3> || std::is_same_v<E, __nv_fp8_e5m2>;

/// The elements of a vector or word to accumulators and back, N at a time:
/// toAcc and fromAcc of each element, bitwise. fp8 on sm_89+ converts two
/// elements per instruction (cvt.rn.f16x2.e4m3x2 / e5m2x2 in, then two
/// cvt.f32.f16; out, cvt.rn.satfinite.e4m3x2.f32): per element, half the
/// conversions of toAcc/fromAcc. The saturating conversion back is
/// fp8FromFloat's result wherever |a| rounds to a finite fp8 value; where
/// one of the N does not (NaN, out of range: rare), one branch per group
/// takes a loop, not unrolled, of fp8FromFloat over the group, so the
/// fix-ups are compiled once per group, not once per element.
template <class E, int N> __device__ __forceinline__ void toAccs(const E (&e)[N], AccOf<E> (&a)[N]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (kIsFp8<E> && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      __nv_fp8x2_storage_t two;
      memcpy(&two, &e[i], sizeof two);
      const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(two, ElemTraits<E>::kKind);
      const float2 f = __half22float2(__half2(h));
      a[i] = f.x;
      a[i + 1] = f.y;
    }
  } else
#endif
  {
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = toAcc(e[i]);
  }
}
template <class E, int N> __device__ __forceinline__ void fromAccs(const AccOf<E> (&a)[N], E (&e)[N]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (kIsFp8<E> && N % 8 == 0) {  // whole words (fp8FromFloats)
    constexpr __nv_fp8_interpretation_t Kind = ElemTraits<E>::kKind;
    bool finite = true;
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      const __nv_fp8x2_storage_t two = __nv_cvt_float2_to_fp8x2(make_float2(a[i], a[i + 1]), __NV_SATFINITE, Kind);
      memcpy(&e[i], &two, sizeof two);
      finite &= Fp8Format<Kind>::inRange(fabsf(a[i])) & Fp8Format<Kind>::inRange(fabsf(a[i + 1]));
    }
    if (!finite) fp8FromFloats<Kind>(a, *reinterpret_cast<__nv_fp8_storage_t(*)[N]>(&e));
  } else
#endif
  {
#pragma unroll
    for (int i = 0; i < N; ++i) e[i] = fromAcc<E>(a[i]);
  }
}

/// Extremum in a 16-bit format. max and min return one of their operands
/// (both NaN: the canonical NaN), so for f16, bf16 and fp8 every
/// intermediate of an extremum is exact in f16 (bf16: in bf16) and the
/// result is the fp32 path's, bit for bit: the accumulators stay packed two
/// to a register (max.f16x2 / max.bf16x2, or min, on sm_80+), with no
/// conversion for f16 and bf16 and one instruction per element pair each
/// way for e4m3 (cvt.rn.f16x2.e4m3x2 in; cvt.rn.satfinite.e4m3x2.f16x2
/// out, exact for values that came in as e4m3). e5m2 is f16's high byte: a
/// byte permutation each way, infinities and NaN included. fp8 on sm_89+
/// (below, the soft conversions keep the fp32 path). reduce_pair_test
/// compares it with the fp32 path for every pair of operands and every
/// single one. (Below sm_80 the f16 and bf16 max and min are the headers'
/// emulation, with the same rules.)
template <class E>
inline constexpr bool kPackedExtremumElem = std::is_same_v<E, __half> || std::is_same_v<E, __nv_bfloat16>
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
                                            || kIsFp8<E>
#endif
    ;
template <class E, OpFamily F>
inline constexpr bool kPackedExtremum = F == OpFamily::Extremum && kPackedExtremumElem<E>;

/// Elements 2k and 2k+1 of `e` as packed pair k (kPackedExtremumElem).
template <class E, int N> __device__ __forceinline__ void toPacked(const E (&e)[N], uint32_t (&p)[N / 2]) {
  static_assert(kPackedExtremumElem<E> && N % 2 == 0, "toPacked: packed pairs of f16, bf16 or fp8");
#pragma unroll
  for (int k = 0; k < N / 2; ++k) {
    if constexpr (kIsFp8<E>) {
      __nv_fp8x2_storage_t two;
      memcpy(&two, &e[2 * k], sizeof two);
      if constexpr (ElemTraits<E>::kKind == __NV_E5M2) {
        p[k] = __byte_perm(uint32_t(two), 0u, 0x1404);  // each byte the high byte of a half
      } else {
        const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(two, __NV_E4M3);
        memcpy(&p[k], &h, sizeof p[k]);
      }
    } else {
      memcpy(&p[k], &e[2 * k], sizeof p[k]);
    }
  }
}
/// The inverse of toPacked, for values that came in as E.
template <class E, int N> __device__ __forceinline__ void fromPacked(const uint32_t (&p)[N / 2], E (&e)[N]) {
  static_assert(kPackedExtremumElem<E> && N % 2 == 0, "fromPacked: packed pairs of f16, bf16 or fp8");
#pragma unroll
  for (int k = 0; k < N / 2; ++k) {
    if constexpr (kIsFp8<E>) {
      __nv_fp8x2_storage_t two;
      if constexpr (ElemTraits<E>::kKind == __NV_E5M2) {
        two = __nv_fp8x2_storage_t(__byte_perm(p[k], 0u, 0x4431));  // the halves' high bytes
      } else {
        __half2_raw h;
        memcpy(&h, &p[k], sizeof h);
        two = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E4M3);
      }
      memcpy(&e[2 * k], &two, sizeof two);
    } else {
      memcpy(&e[2 * k], &p[k], sizeof p[k]);
    }
  }
}
/// max (variant 0) or min (1) of two packed pairs, lane-wise (fmaxf's and
/// fminf's rules: a NaN operand yields the other).
template <class E> __device__ __forceinline__ uint32_t packedExtremum(uint32_t a, uint32_t b, int variant) {
  using P = std::conditional_t<std::is_same_v<E, __nv_bfloat16>, __nv_bfloat162, __half2>;
  P x, y;
  memcpy(&x, &a, sizeof x);
  memcpy(&y, &b, sizeof y);
  const P r = variant ? __hmin2(x, y) : __hmax2(x, y);
  uint32_t u;
  memcpy(&u, &r, sizeof u);
  return u;
}

/// The packed accumulators after `n` contributions: a single one goes
/// through max(x, x), which is x except that a NaN becomes the canonical
/// NaN, as the fp32 path's conversion back makes it (n >= 2: max and min
/// already return the canonical NaN when both operands are NaN).
template <class E, int P> __device__ __forceinline__ void packedFinish(uint32_t (&p)[P], int n) {
  if (n == 1) {
#pragma unroll
    for (int k = 0; k < P; ++k) p[k] = packedExtremum<E>(p[k], p[k], 0);
  }
}

/// Accumulators of one 16-byte vector of E in class (E, F): one per
/// element, or (kPackedExtremum) the packed pairs.
template <class E, OpFamily F> struct VecAcc {
  static constexpr bool kPacked = kPackedExtremum<E, F>;
  std::conditional_t<kPacked, uint32_t[kVecElems<E> / 2], AccOf<E>[kVecElems<E>]> v;
};

/// Unpacks a 16-byte vector of E into its accumulators (first contribution).
template <class E, OpFamily F>
__device__ __forceinline__ void vecLoad(VecAcc<E, F>& acc, uint4 raw) {
  const auto& e = *reinterpret_cast<const E(*)[kVecElems<E>]>(&raw);
  if constexpr (VecAcc<E, F>::kPacked) toPacked<E>(e, acc.v);
  else toAccs<E>(e, acc.v);
}

/// acc = op(acc, raw) elementwise (a later contribution).
template <class E, OpFamily F>
__device__ __forceinline__ void vecAccumulate(VecAcc<E, F>& acc, uint4 raw, int variant) {
  const auto& e = *reinterpret_cast<const E(*)[kVecElems<E>]>(&raw);
  if constexpr (VecAcc<E, F>::kPacked) {
    uint32_t x[kVecElems<E> / 2];
    toPacked<E>(e, x);
#pragma unroll
    for (int k = 0; k < kVecElems<E> / 2; ++k) acc.v[k] = packedExtremum<E>(acc.v[k], x[k], variant);
  } else if constexpr (kIsFp8<E>) {  // two elements per conversion
    AccOf<E> x[kVecElems<E>];
    toAccs<E>(e, x);
#pragma unroll
    for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = Arith<E, F>::combine(acc.v[i], x[i], variant);
  } else {
#pragma unroll
    for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = Arith<E, F>::combine(acc.v[i], toAcc(e[i]), variant);
  }
}

/// Packs the results of `n` contributions back into a 16-byte vector of E
/// (rounded once): Arith::finish of each element, with avg's last step
/// (avgLast) behind one branch per vector, not one per element.
template <class E, OpFamily F>
__device__ __forceinline__ uint4 vecStore(const VecAcc<E, F>& acc, int n, int variant) {
  if constexpr (VecAcc<E, F>::kPacked) {
    uint32_t last[kVecElems<E> / 2];
#pragma unroll
    for (int k = 0; k < kVecElems<E> / 2; ++k) last[k] = acc.v[k];
    packedFinish<E>(last, n);
    uint4 raw;
    fromPacked<E>(last, *reinterpret_cast<E(*)[kVecElems<E>]>(&raw));
    return raw;
  } else {
    VecAcc<E, F> last = acc;
    if constexpr (F == OpFamily::Sum) {
      if (variant) avgLast<E>(last.v, n);
    }
    uint4 raw;
    fromAccs<E>(last.v, *reinterpret_cast<E(*)[kVecElems<E>]>(&raw));
    return raw;
  }
}

/// The class (E, F) of a dispatch: f(ClassTag<E, F>{}) is the range loop
/// compiled for it.
template <class E, OpFamily F> struct ClassTag {
  using Elem = E;
  static constexpr OpFamily family = F;
};

namespace detail {
/// The classes of `Classes` with index in [Lo, Hi).
template <uint64_t Classes, int Lo, int Hi> inline constexpr uint64_t kClassesIn =
    Hi - Lo >= 64 ? Classes >> Lo : (Classes >> Lo) & ((uint64_t(1) << (Hi - Lo)) - 1);
/// The index splitting the classes of [Lo, Hi) into halves of equal count.
template <uint64_t Classes, int Lo, int Hi> __host__ __device__ constexpr int classSplit() {
  int count = 0;
  for (int c = Lo; c < Hi; ++c) count += int(Classes >> c & 1u);
  int seen = 0;
  for (int c = Lo; c < Hi; ++c)
    if ((Classes >> c & 1u) && ++seen > count / 2) return c;
  return Hi;
}
/// A binary search over the classes of [Lo, Hi) in `Classes`: compare and
/// branch on `cls` (uniform), no table in constant memory.
template <uint64_t Classes, int Lo, int Hi, class F> __device__ __forceinline__ void classTree(int cls, F& f) {
  constexpr uint64_t present = kClassesIn<Classes, Lo, Hi>;
  if constexpr (present == 0) {
    return;
  } else if constexpr ((present & (present - 1)) == 0) {  // one class: Lo + its bit's position
    constexpr int c = Lo + __builtin_ctzll(present);
    if (cls == c) f(ClassTag<typename ElementOf<DType(c / kNumOpFamilies)>::type, OpFamily(c % kNumOpFamilies)>{});
  } else {
    constexpr int mid = classSplit<Classes, Lo, Hi>();
    if (cls < mid)
      classTree<Classes, Lo, mid>(cls, f);
    else
      classTree<Classes, mid, Hi>(cls, f);
  }
}
} // namespace detail

/// f(ClassTag<E, F>{}) for the class `cls` of a call's Reduction, among the
/// classes in `Classes` (a set of purlin/reduction.h class bits: what
/// purlinc's instantiation table lists for the program). One dispatch per
/// contiguous range, a binary search of compares and uniform branches
/// (detail::classTree; the switch it replaces became jump tables in
/// constant memory, and the latency kernels of every pair ran 1-4% slower
/// with them, bench/results/2026-12-07-s20-device): the callee is the loop
/// compiled for that class. A class outside the set does nothing (the
/// launcher refused the call).
template <uint64_t Classes, class F> __device__ __forceinline__ void withReductionClass(int cls, F&& f) {
  detail::classTree<Classes, 0, kNumReductionClasses>(cls, f);
}

#endif // __CUDACC__

} // namespace purlin::atom
