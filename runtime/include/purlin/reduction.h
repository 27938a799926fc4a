/// @file reduction.h
/// @brief Reduction classes: which (dtype, op) pairs share one compiled
/// reduction loop. Defined once, for purlinc (which prints the instantiation
/// table of a collective from it) and for the runtime (whose Atom dispatches
/// a call's pair to its class's loop once per contiguous range). Plain C++;
/// no CUDA needed.
///
/// A class is (element type, op family). The five ops fall into three
/// families that differ only in how two accumulators combine:
///   Sum      sum, avg       (avg divides the final sum by n: variant 1)
///   Product  product
///   Extremum max, min       (min compares the other way: variant 1)
/// so one loop per family serves both of its ops, with the variant a value
/// the loop reads, not a template parameter. Pairs whose results are the
/// same bits share a class: the product of i8 is the product of u8 (the low
/// 8 bits of a wrapped product do not depend on the sign), so i8 product
/// runs u8's class. Sums of i8 and u8 would too, but their avgs differ (a
/// signed or an unsigned division) and share the family's loop, so they
/// keep two classes.
#pragma once

#include <cstdint>

#include "purlin/types.h"

/// Host and device (nvcc), host only otherwise.
#if defined(__CUDACC__)
#define PURLIN_REDUCTION_HD __host__ __device__
#else
#define PURLIN_REDUCTION_HD
#endif

namespace purlin {

/// How two accumulators of a reduction combine (see the file comment).
enum class OpFamily : int { Sum = 0, Product = 1, Extremum = 2 };
inline constexpr int kNumOpFamilies = 3;

PURLIN_REDUCTION_HD inline constexpr OpFamily familyOf(RedOp op) {
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg: return OpFamily::Sum;
    case RedOp::Product: return OpFamily::Product;
    case RedOp::Max:
    case RedOp::Min: return OpFamily::Extremum;
  }
  return OpFamily::Sum;
}
/// 1 for avg (divide by n) and min (the other comparison), else 0.
PURLIN_REDUCTION_HD inline constexpr int variantOf(RedOp op) { return op == RedOp::Avg || op == RedOp::Min ? 1 : 0; }
PURLIN_REDUCTION_HD inline constexpr const char* familyName(OpFamily f) {
  return f == OpFamily::Sum ? "sum" : f == OpFamily::Product ? "product" : "extremum";
}

/// The dtype whose loop computes `t` in family `f`: `t` itself, except where
/// another dtype's loop gives the same bits (see the file comment).
PURLIN_REDUCTION_HD inline constexpr DType classDType(DType t, OpFamily f) {
  if (f == OpFamily::Product && t == DType::I8) return DType::U8;
  return t;
}

/// Reduction class index: classDType * kNumOpFamilies + family.
inline constexpr int kNumReductionClasses = kNumDTypes * kNumOpFamilies;
PURLIN_REDUCTION_HD inline constexpr int classIndex(DType t, OpFamily f) { return int(t) * kNumOpFamilies + int(f); }
PURLIN_REDUCTION_HD inline constexpr DType classElement(int cls) { return DType(cls / kNumOpFamilies); }
PURLIN_REDUCTION_HD inline constexpr OpFamily classFamily(int cls) { return OpFamily(cls % kNumOpFamilies); }
PURLIN_REDUCTION_HD inline constexpr uint64_t classBit(DType t, OpFamily f) { return uint64_t(1) << classIndex(t, f); }
static_assert(kNumReductionClasses <= 64, "reduction classes fit a 64-bit set");

/// A call's reduction as the kernels take it: its class and variant.
struct Reduction {
  int cls = 0;
  int variant = 0;
};
PURLIN_REDUCTION_HD inline constexpr Reduction reductionOf(DType t, RedOp op) {
  const OpFamily f = familyOf(op);
  return Reduction{classIndex(classDType(t, f), f), variantOf(op)};
}

/// The classes that reduce every pair of `dtypes` x `ops` (bit sets of
/// dtype and op indices, as a policy's masks): the set a program compiles.
PURLIN_REDUCTION_HD inline constexpr uint64_t reductionClassesOf(unsigned dtypes, unsigned ops) {
  uint64_t set = 0;
  for (int t = 0; t < kNumDTypes; ++t)
    for (int o = 0; o < kNumRedOps; ++o)
      if ((dtypes >> t & 1u) && (ops >> o & 1u)) set |= uint64_t(1) << reductionOf(DType(t), RedOp(o)).cls;
  return set;
}
inline constexpr unsigned kAllDTypesMask = (1u << kNumDTypes) - 1u;
inline constexpr unsigned kAllOpsMask = (1u << kNumRedOps) - 1u;
/// Every pair: what a policy without masks compiles.
inline constexpr uint64_t kAllReductionClasses = reductionClassesOf(kAllDTypesMask, kAllOpsMask);

/// Whether a program compiled for `classes` reduces (t, op).
inline constexpr bool reducesPair(uint64_t classes, DType t, RedOp op) {
  return isValid(t) && isValid(op) && (classes >> reductionOf(t, op).cls & 1u) != 0;
}

/// Specialized kernels. A reduction's kernels are compiled once for every
/// class of its table (kAnyPair: the call's pair read at run time) and,
/// for the pairs a policy names (`reductions.specialize`), once more for
/// that pair alone, its arithmetic inlined and its op a constant (the
/// latency program's code shape and the throughput program's loop as a
/// kernel compiled for the pair: bench/results/2026-12-04-instances). A
/// pair index is dtype * kNumRedOps + op.
inline constexpr int kAnyPair = -1;
inline constexpr int kNumPairs = kNumDTypes * kNumRedOps;
PURLIN_REDUCTION_HD inline constexpr int pairIndex(DType t, RedOp op) { return int(t) * kNumRedOps + int(op); }
PURLIN_REDUCTION_HD inline constexpr DType pairDType(int pair) { return DType(pair / kNumRedOps); }
PURLIN_REDUCTION_HD inline constexpr RedOp pairOp(int pair) { return RedOp(pair % kNumRedOps); }
PURLIN_REDUCTION_HD inline constexpr uint64_t pairBit(DType t, RedOp op) { return uint64_t(1) << pairIndex(t, op); }
static_assert(kNumPairs <= 64, "(dtype, op) pairs fit a 64-bit set");
/// The reduction a kernel for `Pair` computes: the call's, or the pair's
/// (a constant, so its class and variant fold away).
template <int Pair> PURLIN_REDUCTION_HD inline constexpr Reduction kernelReduction(DType t, RedOp op) {
  if constexpr (Pair == kAnyPair) return reductionOf(t, op);
  else return reductionOf(pairDType(Pair), pairOp(Pair));
}
/// The classes a kernel for `Pair` dispatches over: all of the program's
/// (`classes`), or the pair's one.
template <int Pair> PURLIN_REDUCTION_HD inline constexpr uint64_t kernelClasses(uint64_t classes) {
  if constexpr (Pair == kAnyPair) return classes;
  else return uint64_t(1) << reductionOf(pairDType(Pair), pairOp(Pair)).cls;
}

} // namespace purlin
