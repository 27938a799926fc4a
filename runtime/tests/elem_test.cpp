/// @file elem_test.cpp
/// @brief The element arithmetic every reduction computes (purlin/atom/
/// elem.cuh), through its host reference: integer wrap-around, avg
/// truncation, signed and unsigned compares, fp32 accumulation rounded
/// once, fp8 without saturation, NaN in max/min. The device code runs the
/// same templates (one loop per reduction class, purlin/reduction.h); the Python GPU tests
/// compare every program with torch.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "purlin/atom/elem.cuh"
#include "purlin/reduction.h"

namespace pa = purlin::atom;
using purlin::DType;
using purlin::RedOp;

namespace {
template <class E, RedOp Op, class... T> E reduce(T... xs) {
  const E in[] = {E(xs)...};
  return pa::referenceReduce<E, Op>(in, int(sizeof...(xs)));
}
uint8_t bits(__nv_fp8_e4m3 x) { return x.__x; }
uint8_t bits(__nv_fp8_e5m2 x) { return x.__x; }
} // namespace

TEST_CASE("elem: types.def's Element column gives each dtype's C++ type") {
  STATIC_REQUIRE(std::is_same_v<pa::ElementOf<DType::I8>::type, int8_t>);
  STATIC_REQUIRE(std::is_same_v<pa::ElementOf<DType::F8E5M2>::type, __nv_fp8_e5m2>);
  STATIC_REQUIRE(std::is_same_v<pa::AccOf<__nv_bfloat16>, float>);
  STATIC_REQUIRE(std::is_same_v<pa::AccOf<double>, double>);
  STATIC_REQUIRE(std::is_same_v<pa::AccOf<uint8_t>, uint32_t>);
  STATIC_REQUIRE(pa::kIsReduceElem<double>);
  STATIC_REQUIRE(!pa::kIsReduceElem<uint16_t>);
}

TEST_CASE("elem: integer sums and products wrap around, like NCCL") {
  CHECK(reduce<int8_t, RedOp::Sum>(100, 100) == -56);
  CHECK(reduce<uint8_t, RedOp::Sum>(200, 100) == 44);
  CHECK(reduce<int32_t, RedOp::Sum>(std::numeric_limits<int32_t>::max(), 1) == std::numeric_limits<int32_t>::min());
  CHECK(reduce<int64_t, RedOp::Sum>(std::numeric_limits<int64_t>::max(), 2) == std::numeric_limits<int64_t>::min() + 1);
  CHECK(reduce<int8_t, RedOp::Product>(16, 16) == 0);
  CHECK(reduce<uint8_t, RedOp::Product>(16, 17) == 16);
  CHECK(reduce<int8_t, RedOp::Product>(-3, 5, 7, -2) == int8_t(210 - 256));
  CHECK(reduce<int64_t, RedOp::Product>(int64_t(1) << 40, int64_t(1) << 30) == 0);
}

TEST_CASE("elem: max and min compare signed and unsigned integers as such") {
  CHECK(reduce<int8_t, RedOp::Max>(-100, 50, -3) == 50);
  CHECK(reduce<int8_t, RedOp::Min>(-100, 50, -3) == -100);
  CHECK(reduce<uint8_t, RedOp::Max>(200, 100) == 200);
  CHECK(reduce<uint8_t, RedOp::Min>(200, 100) == 100);
  CHECK(reduce<int64_t, RedOp::Min>(-1, std::numeric_limits<int64_t>::max()) == -1);
}

TEST_CASE("elem: avg divides the (wrapped) sum by the number of ranks") {
  CHECK(reduce<int8_t, RedOp::Avg>(-7, 0) == -3);  // truncated toward zero
  CHECK(reduce<int8_t, RedOp::Avg>(7, 0) == 3);
  CHECK(reduce<int8_t, RedOp::Avg>(100, 100) == -28);  // the sum wrapped to -56 first
  CHECK(reduce<uint8_t, RedOp::Avg>(255, 255, 255) == 84);  // 765 mod 256 = 253, / 3
  CHECK(reduce<float, RedOp::Avg>(1.0f, 2.0f) == 1.5f);
  CHECK(reduce<double, RedOp::Avg>(1.0, 2.0, 4.0) == 7.0 / 3.0);
  CHECK(__half2float(reduce<__half, RedOp::Avg>(__float2half(1.0f), __float2half(2.0f), __float2half(4.0f))) ==
        __half2float(__float2half_rn(7.0f / 3.0f)));
}

namespace {
/// avgLast<E> over one accumulator against finalize<E, Avg>, bit for bit.
template <class E> bool avgLastMatches(pa::AccOf<E> a, int n) {
  using A = pa::AccOf<E>;
  A one[1] = {a};
  pa::avgLast<E>(one, n);
  const A want = pa::finalize<E, RedOp::Avg>(a, n);
  if constexpr (std::is_floating_point_v<A>) {
    if (want != want) return one[0] != one[0];  // NaN stays NaN
  }
  return std::memcmp(&one[0], &want, sizeof(A)) == 0;
}
} // namespace

TEST_CASE("elem: avg's last step without a division per element equals the division") {
  // Integers: wrapped sums near zero and at the extremes, for every world
  // size (powers of two shift, the others divide). Floating point: zeros,
  // subnormals, the largest values, infinities, NaN and a sweep of bit
  // patterns (every 9973rd of the 2^32 floats). Mismatches counted, then
  // required to be none (one REQUIRE per world size, not per value).
  for (int n = 1; n <= 8; ++n) {
    INFO("n = " << n);
    long bad = 0;
    for (int64_t a = -70000; a <= 70000; ++a) {
      bad += !avgLastMatches<int8_t>(int32_t(a), n) + !avgLastMatches<uint8_t>(uint32_t(a), n) +
             !avgLastMatches<int32_t>(int32_t(a), n) + !avgLastMatches<int64_t>(a, n);
    }
    for (int64_t a : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min() + 1,
                      std::numeric_limits<int64_t>::max(), int64_t(std::numeric_limits<int32_t>::min()),
                      int64_t(std::numeric_limits<int32_t>::max())})
      bad += !avgLastMatches<int64_t>(a, n) + !avgLastMatches<int32_t>(int32_t(a), n) +
             !avgLastMatches<uint8_t>(uint32_t(a), n);
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 9973) {
      float f;
      const uint32_t b = uint32_t(u);
      std::memcpy(&f, &b, 4);
      bad += !avgLastMatches<float>(f, n);
    }
    for (float f : {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                    std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), 3.0f * std::numeric_limits<float>::denorm_min()})
      bad += !avgLastMatches<float>(f, n) + !avgLastMatches<__nv_bfloat16>(f, n);
    for (double d : {0.0, -0.0, std::numeric_limits<double>::denorm_min(), 3 * std::numeric_limits<double>::denorm_min(),
                     std::numeric_limits<double>::max(), -1e300, 1.0 / 3.0, std::numeric_limits<double>::infinity()})
      bad += !avgLastMatches<double>(d, n);
    REQUIRE(bad == 0);
  }
  // One call handles a whole vector.
  float v[4] = {1.0f, 2.0f, -3.0f, 0.0f};
  pa::avgLast<float>(v, 4);
  CHECK(v[0] == 0.25f);
  CHECK(v[2] == -0.75f);
}

TEST_CASE("elem: floats accumulate in fp32 and round once") {
  // 2048 + 1 + 1 in fp16: rounding after each step would give 2048 (ties to
  // even twice); the fp32 sum is 2050, which fp16 holds.
  const __half big = __float2half(2048.0f), one = __float2half(1.0f);
  CHECK(__half2float(reduce<__half, RedOp::Sum>(big, one, one)) == 2050.0f);
  const __nv_bfloat16 b = __float2bfloat16(256.0f), o = __float2bfloat16(1.0f);
  CHECK(__bfloat162float(reduce<__nv_bfloat16, RedOp::Sum>(b, o, o)) == 258.0f);
  // products: 3 * 3 * 3 = 27 exactly, then rounded to bf16 once
  const __nv_bfloat16 three = __float2bfloat16(3.0f);
  CHECK(__bfloat162float(reduce<__nv_bfloat16, RedOp::Product>(three, three, three)) == 27.0f);
}

TEST_CASE("elem: max and min of floats return the other operand for a NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(reduce<float, RedOp::Max>(nan, 1.0f) == 1.0f);
  CHECK(reduce<float, RedOp::Min>(2.0f, nan) == 2.0f);
  CHECK(reduce<double, RedOp::Max>(std::numeric_limits<double>::quiet_NaN(), -1.0) == -1.0);
}

TEST_CASE("elem: fp8 accumulates in fp32, rounds to nearest even, does not saturate") {
  const __nv_fp8_e4m3 a(224.0f), b(240.0f), c(448.0f);
  CHECK(float(reduce<__nv_fp8_e4m3, RedOp::Sum>(a, b)) == 448.0f);  // 464: the tie rounds to even (448)
  CHECK(bits(reduce<__nv_fp8_e4m3, RedOp::Sum>(b, b)) == 0x7f);    // 480: NaN (e4m3 has no infinity)
  CHECK(bits(reduce<__nv_fp8_e4m3, RedOp::Sum>(c, c)) == 0x7f);
  CHECK(bits(reduce<__nv_fp8_e4m3, RedOp::Sum>(__nv_fp8_e4m3(-448.0f), __nv_fp8_e4m3(-448.0f))) == 0xff);
  CHECK(bits(reduce<__nv_fp8_e5m2, RedOp::Product>(__nv_fp8_e5m2(512.0f), __nv_fp8_e5m2(512.0f))) == 0x7c);  // inf
  // 1 + 0.0625 + 0.0625 in e4m3 (step 0.125 at 1): once from fp32 = 1.125;
  // rounding after each step would give 1 (ties to even).
  const __nv_fp8_e4m3 one(1.0f), sixteenth(0.0625f);
  CHECK(float(reduce<__nv_fp8_e4m3, RedOp::Sum>(one, sixteenth, sixteenth)) == 1.125f);
  CHECK(float(reduce<__nv_fp8_e5m2, RedOp::Max>(__nv_fp8_e5m2(-2.0f), __nv_fp8_e5m2(0.5f))) == 0.5f);
}

namespace {
/// Floats whose fp8 rounding is hardest: every sign and exponent, the top
/// 12 significand bits in every combination (the rounding bit of both
/// formats and of their subnormals among them, with the bits after it),
/// the low 11 as zeros (exact ties), one, all ones and a varying pattern.
template <class F> void forFp8Boundaries(F&& f) {
  for (uint32_t signExp = 0; signExp < 512; ++signExp)
    for (uint32_t top = 0; top < 4096; ++top)
      for (uint32_t low : {0u, 1u, 0x7FFu, (top * 2654435761u) >> 21})
        f((signExp << 23) | (top << 11) | (low & 0x7FFu));
}
template <__nv_fp8_interpretation_t Kind> int fp8SoftMismatches() {
  int mismatches = 0;
  auto check = [&](uint32_t u) {
    const float a = pa::floatOfBits(u);
    const unsigned got = pa::fp8FromFloatSoft<Kind>(a), want = __nv_cvt_float_to_fp8(a, __NV_NOSAT, Kind);
    if (got != want && ++mismatches <= 5) UNSCOPED_INFO(std::hex << "0x" << u << " -> 0x" << got << ", __NV_NOSAT 0x" << want);
  };
  forFp8Boundaries(check);
  uint64_t state = 7;
  for (int i = 0; i < (1 << 22); ++i) {  // and a sample of the rest
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    check(uint32_t(state >> 32));
  }
  return mismatches;
}
} // namespace

TEST_CASE("elem: the 32-bit fp8 conversions are bitwise CUDA's __NV_NOSAT ones") {
  // What sm_80 (no fp8 conversion instructions) and the host run.
  CHECK(fp8SoftMismatches<__NV_E4M3>() == 0);
  CHECK(fp8SoftMismatches<__NV_E5M2>() == 0);
  for (unsigned x = 0; x < 256; ++x) {
    const float got = pa::fp8E4M3ToFloatSoft(__nv_fp8_storage_t(x));
    const float want = __internal_halfraw_to_float(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(x), __NV_E4M3));
    INFO("e4m3 0x" << std::hex << x);
    if (std::isnan(want)) CHECK(std::isnan(got));
    else CHECK(pa::floatBits(got) == pa::floatBits(want));
  }
}

namespace {
/// Bits of a sample value: an LCG over the whole pattern space (NaNs,
/// infinities, denormals and integer extremes included).
template <class E> E sample(uint64_t &state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  const uint64_t r = state ^ (state >> 29);
  E e;
  std::memcpy(&e, &r, sizeof(E));
  return e;
}
/// Every pair (T, Op): the loop of its reduction class (purlin/reduction.h:
/// the class's element type and family, the op's variant at run time)
/// gives the bits of the op's own reference, for 1 to 8 contributions.
/// What can break: reductionOf's class or variant of a pair (avg computed
/// as a sum, min as a max, a merged pair whose bits differ) and Arith's
/// use of the variant.
template <DType T, RedOp Op> void checkClassOf() {
  using E = typename pa::ElementOf<T>::type;
  constexpr purlin::Reduction red = purlin::reductionOf(T, Op);
  using C = typename pa::ElementOf<purlin::classElement(red.cls)>::type;
  constexpr purlin::OpFamily F = purlin::classFamily(red.cls);
  STATIC_REQUIRE(sizeof(C) == sizeof(E));
  uint64_t state = uint64_t(T) * 131 + uint64_t(Op);
  int mismatches = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + trial % purlin::kMaxRanks;
    E xs[purlin::kMaxRanks];
    for (int p = 0; p < n; ++p) xs[p] = sample<E>(state);
    const E want = pa::referenceReduce<E, Op>(xs, n);
    C cs[purlin::kMaxRanks];
    std::memcpy(cs, xs, sizeof(E) * std::size_t(n));
    pa::AccOf<C> acc = pa::toAcc(cs[0]);
    for (int p = 1; p < n; ++p) acc = pa::Arith<C, F>::combine(acc, pa::toAcc(cs[p]), red.variant);
    const C got = pa::Arith<C, F>::finish(acc, n, red.variant);
    mismatches += std::memcmp(&want, &got, sizeof(E)) != 0;
  }
  INFO(purlin::dtypeName(T) << " " << int(Op));
  CHECK(mismatches == 0);
}
} // namespace

TEST_CASE("elem: every (dtype, op) pair's class loop gives the op's own results, bit for bit") {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  checkClassOf<DType::Name, RedOp::Sum>();              \
  checkClassOf<DType::Name, RedOp::Max>();              \
  checkClassOf<DType::Name, RedOp::Min>();              \
  checkClassOf<DType::Name, RedOp::Avg>();              \
  checkClassOf<DType::Name, RedOp::Product>();
#include "purlin/types.def"
}

TEST_CASE("elem: fp8FromFloats (fromAccs' slow path) converts every lane to its own byte") {
  // Groups that mix in-range values, NaN, infinities, values just past the
  // largest finite one, subnormals and zeros, in every lane position: each
  // byte i must be fp8FromFloat of float i (the one-element conversion,
  // bitwise __NV_NOSAT), whatever its neighbours.
  const float specials[] = {1.0f,     -2.5f,         448.0f,   464.0f,    465.0f,   -1e9f,     0.0f,   -0.0f,
                            1e-9f,    57344.0f,      61440.0f, -61439.0f, 3.0e-3f,  -0.01953125f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 0.3f,  -17.0f,   240.0f};
  constexpr int kSpecials = int(sizeof specials / sizeof specials[0]);
  auto check = [&](auto kind) {
    constexpr __nv_fp8_interpretation_t Kind = decltype(kind)::value;
    for (int rot = 0; rot < kSpecials; ++rot) {
      float a8[8], a16[16];
      for (int i = 0; i < 16; ++i) a16[i] = specials[(rot + 3 * i) % kSpecials];
      for (int i = 0; i < 8; ++i) a8[i] = specials[(rot + 7 * i) % kSpecials];  // 7, 3: coprime with 20
      __nv_fp8_storage_t r8[8], r16[16];
      pa::fp8FromFloats<Kind>(a8, r8);
      pa::fp8FromFloats<Kind>(a16, r16);
      for (int i = 0; i < 8; ++i) {
        INFO("kind " << int(Kind) << " rotation " << rot << " lane " << i << " of 8: " << a8[i]);
        CHECK(unsigned(r8[i]) == unsigned(pa::fp8FromFloat<Kind>(a8[i])));
        CHECK(unsigned(r8[i]) == unsigned(__nv_cvt_float_to_fp8(a8[i], __NV_NOSAT, Kind)));
      }
      for (int i = 0; i < 16; ++i) {
        INFO("kind " << int(Kind) << " rotation " << rot << " lane " << i << " of 16: " << a16[i]);
        CHECK(unsigned(r16[i]) == unsigned(__nv_cvt_float_to_fp8(a16[i], __NV_NOSAT, Kind)));
      }
    }
  };
  check(std::integral_constant<__nv_fp8_interpretation_t, __NV_E4M3>{});
  check(std::integral_constant<__nv_fp8_interpretation_t, __NV_E5M2>{});
}
