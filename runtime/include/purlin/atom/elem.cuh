/// @file elem.cuh
/// @brief Element arithmetic of Atom::reduce: conversion of fp32/fp16/bf16 to
/// and from the fp32 accumulator, the reduction operators, and the same on a
/// 16-byte vector (4 floats or 8 halves/bf16).
///
/// Semantics: an element's result is acc = float(x0); acc = op(acc, float(xp))
/// for p = 1..n-1 in ascending order; result = E(acc) rounded to nearest even.
/// No fused operations, so results are bitwise reproducible and match a host
/// reference that does the same.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "purlin/types.h"

namespace purlin::atom {

template <class E>
inline constexpr bool kIsReduceElem =
    std::is_same_v<E, float> || std::is_same_v<E, __half> || std::is_same_v<E, __nv_bfloat16>;

/// Element -> fp32 (exact for all three types).
template <class E>
__host__ __device__ __forceinline__ float toFloat(E x) {
  static_assert(kIsReduceElem<E>, "Atom::reduce supports float, __half and __nv_bfloat16");
  if constexpr (std::is_same_v<E, float>) return x;
  else if constexpr (std::is_same_v<E, __half>) return __half2float(x);
  else return __bfloat162float(x);
}

/// fp32 -> element, round to nearest even.
template <class E>
__host__ __device__ __forceinline__ E fromFloat(float x) {
  static_assert(kIsReduceElem<E>, "Atom::reduce supports float, __half and __nv_bfloat16");
  if constexpr (std::is_same_v<E, float>) return x;
  else if constexpr (std::is_same_v<E, __half>) return __float2half_rn(x);
  else return __float2bfloat16_rn(x);
}

/// The reduction operator on the fp32 accumulator. Max/Min use fmaxf/fminf
/// (a NaN operand yields the other operand).
template <RedOp Op>
__host__ __device__ __forceinline__ float applyOp(float a, float b) {
  if constexpr (Op == RedOp::Sum) return a + b;
  else if constexpr (Op == RedOp::Max) return fmaxf(a, b);
  else { static_assert(Op == RedOp::Min, "RedOp must be Sum, Max or Min"); return fminf(a, b); }
}

/// Number of elements of type E in a 16-byte vector.
template <class E>
inline constexpr int kVecElems = 16 / static_cast<int>(sizeof(E));

/// fp32 accumulators of one 16-byte vector.
template <class E>
struct VecAcc {
  float v[kVecElems<E>];
};

#if defined(__CUDACC__)

/// Unpacks a 16-byte vector of E into fp32 (first contribution).
template <class E>
__device__ __forceinline__ void vecLoad(VecAcc<E>& acc, uint4 raw) {
  const E* e = reinterpret_cast<const E*>(&raw);
#pragma unroll
  for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = toFloat(e[i]);
}

/// acc = op(acc, raw) elementwise (a later contribution).
template <class E, RedOp Op>
__device__ __forceinline__ void vecAccumulate(VecAcc<E>& acc, uint4 raw) {
  const E* e = reinterpret_cast<const E*>(&raw);
#pragma unroll
  for (int i = 0; i < kVecElems<E>; ++i) acc.v[i] = applyOp<Op>(acc.v[i], toFloat(e[i]));
}

/// Packs the accumulators back into a 16-byte vector of E.
template <class E>
__device__ __forceinline__ uint4 vecStore(const VecAcc<E>& acc) {
  uint4 raw;
  E* e = reinterpret_cast<E*>(&raw);
#pragma unroll
  for (int i = 0; i < kVecElems<E>; ++i) e[i] = fromFloat<E>(acc.v[i]);
  return raw;
}

#endif // __CUDACC__

} // namespace purlin::atom
