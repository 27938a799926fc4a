/// @file coll_shape_test.cpp
/// @brief Unit tests of coll_shape.h: the names and short forms of every
/// benchmarked collective, and the element counts of a call per message
/// size (the V forms' skewed counts add up to the message; the buffers hold
/// every rank's share).
#include <catch2/catch.hpp>

#include "coll_shape.h"

using namespace purlin::bench;

TEST_CASE("every benchmarked collective parses by name and short form") {
  for (int i = 0; i < kNumColls; ++i) {
    Coll c;
    REQUIRE(parseColl(collName(Coll(i)), c));
    CHECK(c == Coll(i));
  }
  Coll c;
  REQUIRE(parseColl("agv", c));
  CHECK(c == Coll::AllGatherV);
  REQUIRE(parseColl("rsv", c));
  CHECK(c == Coll::ReduceScatterV);
  CHECK_FALSE(parseColl("a2av", c));
  CHECK(isVariable(Coll::AllGatherV));
  CHECK_FALSE(isRooted(Coll::ReduceScatterV));
  CHECK(isRooted(Coll::Gather));
  CHECK(isReduction(Coll::ReduceScatterV));
}

TEST_CASE("the V forms' counts grow with the rank and fill the message") {
  for (int n : {2, 3, 5, 8})
    for (std::size_t bytes : {std::size_t(1) << 10, std::size_t(3) << 20, std::size_t(1) << 30}) {
      const Shape g = shapeOf(Coll::AllGatherV, bytes, n), r = shapeOf(Coll::ReduceScatterV, bytes, n);
      std::size_t sum = 0;
      for (int p = 0; p < n; ++p) {
        sum += g.counts[p];
        if (p) CHECK(g.counts[p] >= g.counts[p - 1]);
        CHECK(g.counts[p] <= g.inElems);        // every rank's input fits
        CHECK(outElemsOn(Coll::ReduceScatterV, r, p) == r.counts[p]);
      }
      CHECK(sum == g.outElems);
      CHECK(sum * kElemBytes <= bytes);
      CHECK(bytes / kElemBytes - sum < std::size_t(n) * std::size_t(n + 1) / 2);  // rounding only
      CHECK(displOf(g, n) == sum);
      CHECK(r.inElems == sum);
      CHECK(r.msgBytes == g.msgBytes);
    }
}
