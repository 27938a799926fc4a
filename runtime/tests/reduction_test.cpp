/// @file reduction_test.cpp
/// @brief Reduction classes (purlin/reduction.h): which (dtype, op) pairs
/// share one compiled loop, and the class sets a policy's masks give.
#include <catch2/catch.hpp>

#include "purlin/reduction.h"

using namespace purlin;

TEST_CASE("reduction: ops of one family share a class; the variant tells them apart") {
  CHECK(reductionOf(DType::F32, RedOp::Sum).cls == reductionOf(DType::F32, RedOp::Avg).cls);
  CHECK(reductionOf(DType::F32, RedOp::Sum).variant == 0);
  CHECK(reductionOf(DType::F32, RedOp::Avg).variant == 1);
  CHECK(reductionOf(DType::BF16, RedOp::Max).cls == reductionOf(DType::BF16, RedOp::Min).cls);
  CHECK(reductionOf(DType::BF16, RedOp::Max).variant == 0);
  CHECK(reductionOf(DType::BF16, RedOp::Min).variant == 1);
  CHECK(reductionOf(DType::F32, RedOp::Product).cls != reductionOf(DType::F32, RedOp::Sum).cls);
  CHECK(reductionOf(DType::F16, RedOp::Sum).cls != reductionOf(DType::BF16, RedOp::Sum).cls);
}

TEST_CASE("reduction: pairs with the same bits share a class, others do not") {
  // The low 8 bits of a wrapped product do not depend on the sign.
  CHECK(reductionOf(DType::I8, RedOp::Product).cls == reductionOf(DType::U8, RedOp::Product).cls);
  CHECK(classElement(reductionOf(DType::I8, RedOp::Product).cls) == DType::U8);
  // Their avgs (signed / unsigned division) and compares differ.
  CHECK(reductionOf(DType::I8, RedOp::Avg).cls != reductionOf(DType::U8, RedOp::Avg).cls);
  CHECK(reductionOf(DType::I8, RedOp::Max).cls != reductionOf(DType::U8, RedOp::Max).cls);
}

TEST_CASE("reduction: the class sets of policy masks") {
  int all = 0;
  for (int c = 0; c < kNumReductionClasses; ++c) all += int(kAllReductionClasses >> c & 1u);
  CHECK(all == 29);  // 10 dtypes x 3 families, less i8 product
  CHECK_FALSE(kAllReductionClasses & classBit(DType::I8, OpFamily::Product));
  const uint64_t bf16Sum = reductionClassesOf(1u << unsigned(DType::BF16), 1u << unsigned(RedOp::Sum));
  CHECK(bf16Sum == classBit(DType::BF16, OpFamily::Sum));
  CHECK(reducesPair(bf16Sum, DType::BF16, RedOp::Sum));
  CHECK(reducesPair(bf16Sum, DType::BF16, RedOp::Avg));  // the same class: avg comes with sum
  CHECK_FALSE(reducesPair(bf16Sum, DType::F32, RedOp::Sum));
  CHECK_FALSE(reducesPair(bf16Sum, DType::BF16, RedOp::Max));
  CHECK_FALSE(reducesPair(kAllReductionClasses, DType(99), RedOp::Sum));
  CHECK_FALSE(reducesPair(kAllReductionClasses, DType::F32, RedOp(9)));
  for (int t = 0; t < kNumDTypes; ++t)
    for (int o = 0; o < kNumRedOps; ++o) CHECK(reducesPair(kAllReductionClasses, DType(t), RedOp(o)));
}
