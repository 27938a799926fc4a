/// @file elem.cuh
/// @brief Element arithmetic of every reduction: each dtype's accumulator and
/// conversions (ElemTraits, from types.def's Element column), the five ops
/// on an accumulator, the accumulator of one 16-byte vector (VecAcc, used
/// by Atom::reduce and the direct programs), and DynElem<N>: an element of
/// N bytes whose dtype and op are chosen at run time (bindElement), so that
/// one instantiation of a program reduces every dtype of that size.
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
/// (e4m3: out of range is NaN; e5m2: infinity), as torch converts.
template <class F8, __nv_fp8_interpretation_t Kind> struct Fp8Traits {
  using Acc = float;
  __host__ __device__ static float toAcc(F8 x) { return float(x); }
  __host__ __device__ static F8 fromAcc(float a) {
    F8 r;
    r.__x = __nv_cvt_float_to_fp8(a, __NV_NOSAT, Kind);
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

/// The element types a reduction computes on (types.def), and DynElem.
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

/// An element of N bytes whose dtype and op the kernel binds at run time
/// (bindElement): the programs instantiated with it reduce every dtype of
/// that size with every op. Its arithmetic dispatches once per vector or
/// word on the bound (dtype, op), a branch uniform over the CTA.
template <int N> struct alignas(N) DynElem {
  unsigned char raw[N];
};
template <class E> inline constexpr bool kIsDynElem = false;
template <int N> inline constexpr bool kIsDynElem<DynElem<N>> = true;
/// Element types Atom::reduce takes.
template <class E> inline constexpr bool kIsReduceElem = kIsElement<E> || kIsDynElem<E>;

/// Number of elements of type E in a 16-byte vector.
template <class E>
inline constexpr int kVecElems = 16 / static_cast<int>(sizeof(E));

#if defined(__CUDACC__)

/// The (dtype, op) DynElem computes in this CTA: one shared-memory word
/// (dtype << 8 | op), written by bindElement at the start of every kernel
/// instantiated with a DynElem.
__device__ __forceinline__ uint32_t& boundElement() {
  __shared__ uint32_t code;
  return code;
}
/// Binds the call's dtype and op for DynElem's arithmetic; CTA-collective
/// (a barrier), called before any reduction. A no-op for static E.
template <class E> __device__ __forceinline__ void bindElement(DType dtype, RedOp op) {
  if constexpr (kIsDynElem<E>) {
    if (threadIdx.x == 0) boundElement() = (uint32_t(dtype) << 8) | uint32_t(op);
    __syncthreads();
  } else {
    (void)dtype;
    (void)op;
  }
}

namespace detail {
template <class T> struct TypeTag { using type = T; };
template <RedOp Op> struct OpTag { static constexpr RedOp value = Op; };
/// f(TypeTag<Element>) for dtype `t` among those of N bytes.
template <int N, class F> __device__ __forceinline__ void withElementOfSize(DType t, F&& f) {
  switch (t) {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  case DType::Name:                                     \
    if constexpr ((bytes) == N) f(TypeTag<Element>{});  \
    break;
#include "purlin/types.def"
  }
}
/// f(OpTag<op>) for op `op`.
template <class F> __device__ __forceinline__ void withOpTag(RedOp op, F&& f) {
  switch (op) {
#define PURLIN_REDOP(Name, name, CNAME) \
  case RedOp::Name: f(OpTag<RedOp::Name>{}); break;
#include "purlin/types.def"
  }
}
/// An accumulator held in a 32-bit (64-bit for 8-byte elements) register.
template <class L, class A> __device__ __forceinline__ L toLane(A a) {
  static_assert(sizeof(A) <= sizeof(L), "an accumulator fits its lane");
  if constexpr (sizeof(A) == sizeof(L)) {
    L l;
    memcpy(&l, &a, sizeof(L));
    return l;
  } else {
    return L(a);
  }
}
template <class A, class L> __device__ __forceinline__ A fromLane(L l) {
  if constexpr (sizeof(A) == sizeof(L)) {
    A a;
    memcpy(&a, &l, sizeof(A));
    return a;
  } else {
    return A(l);
  }
}
} // namespace detail

/// Accumulators of K elements of DynElem<N> (a vector, a word or one
/// element), each in a 32-bit (64-bit) lane, with the bound (dtype, op)
/// read once. load, accumulate and store are out of line (__noinline__):
/// their switch over (dtype, op) is compiled once per translation unit
/// instead of at every inlined reduce site of every program, which made
/// the reduction files 3.6x slower to compile (allreduce.cu, sm_90: 633 s
/// against 177 s); the lanes then live in local memory (L1) during a call.
template <int N, int K> struct DynAcc {
  using Lane = std::conditional_t<N == 8, uint64_t, uint32_t>;
  Lane v[K];
  int count = 0;
  DType dtype;
  RedOp op;
  __device__ __forceinline__ DynAcc() {
    const uint32_t code = boundElement();
    dtype = DType(code >> 8);
    op = RedOp(code & 0xffu);
  }
  /// The first contribution: K elements at `raw`.
  __device__ __noinline__ void load(const void* raw) {
    count = 1;
    detail::withElementOfSize<N>(dtype, [&](auto t) {
      using E = typename decltype(t)::type;
      const E* e = static_cast<const E*>(raw);
#pragma unroll
      for (int i = 0; i < K; ++i) v[i] = detail::toLane<Lane>(toAcc(e[i]));
    });
  }
  /// A later contribution.
  __device__ __noinline__ void accumulate(const void* raw) {
    ++count;
    detail::withElementOfSize<N>(dtype, [&](auto t) {
      using E = typename decltype(t)::type;
      using A = AccOf<E>;
      const E* e = static_cast<const E*>(raw);
      detail::withOpTag(op, [&](auto o) {
#pragma unroll
        for (int i = 0; i < K; ++i)
          v[i] = detail::toLane<Lane>(applyOp<decltype(o)::value>(detail::fromLane<A>(v[i]), toAcc(e[i])));
      });
    });
  }
  /// The K results, rounded once, to `raw`.
  __device__ __noinline__ void store(void* raw) const {
    detail::withElementOfSize<N>(dtype, [&](auto t) {
      using E = typename decltype(t)::type;
      using A = AccOf<E>;
      E* e = static_cast<E*>(raw);
      detail::withOpTag(op, [&](auto o) {
#pragma unroll
        for (int i = 0; i < K; ++i)
          e[i] = fromAcc<E>(finalize<E, decltype(o)::value>(detail::fromLane<A>(v[i]), count));
      });
    });
  }
};

/// Accumulators of one 16-byte vector of E (DynElem: the bound dtype's).
template <class E> struct VecAcc {
  AccOf<E> v[kVecElems<E>];
  int count;
};
template <int N> struct VecAcc<DynElem<N>> {
  DynAcc<N, 16 / N> d;
};

/// Unpacks a 16-byte vector of E into its accumulators (first contribution).
template <class E>
__device__ __forceinline__ void vecLoad(VecAcc<E>& acc, uint4 raw) {
  if constexpr (kIsDynElem<E>) {
    acc.d.load(&raw);
  } else {
    const E* e = reinterpret_cast<const E*>(&raw);
    acc.count = 1;
#pragma unroll
    for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = toAcc(e[i]);
  }
}

/// acc = op(acc, raw) elementwise (a later contribution).
template <class E, RedOp Op>
__device__ __forceinline__ void vecAccumulate(VecAcc<E>& acc, uint4 raw) {
  if constexpr (kIsDynElem<E>) {
    acc.d.accumulate(&raw);
  } else {
    const E* e = reinterpret_cast<const E*>(&raw);
    ++acc.count;
#pragma unroll
    for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = applyOp<Op>(acc.v[i], toAcc(e[i]));
  }
}

/// Packs the results back into a 16-byte vector of E (rounded once).
template <class E, RedOp Op>
__device__ __forceinline__ uint4 vecStore(const VecAcc<E>& acc) {
  uint4 raw;
  if constexpr (kIsDynElem<E>) {
    acc.d.store(&raw);
  } else {
    E* e = reinterpret_cast<E*>(&raw);
#pragma unroll
    for (int i = 0; i < kVecElems<E>; ++i) e[i] = fromAcc<E>(finalize<E, Op>(acc.v[i], acc.count));
  }
  return raw;
}

#endif // __CUDACC__

} // namespace purlin::atom
