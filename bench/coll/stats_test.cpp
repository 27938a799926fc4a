/// @file stats_test.cpp
/// @brief Unit tests of stats.h: median / min / max of a row's
/// repetitions, and the bus-bandwidth factors.
#include <catch2/catch.hpp>

#include "stats.h"

using namespace purlin::bench;

TEST_CASE("statsOf: median, min and max of the repetitions") {
  SampleStats s = statsOf({5, 1, 4, 2, 3});
  CHECK(s.count == 5);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  s = statsOf({4, 1, 2, 3});
  CHECK(s.median == 2.5);
  CHECK(std::isnan(statsOf({}).median));
  s = statsOf({1, NAN, 3});
  CHECK(std::isnan(s.median));  // a failed repetition is not averaged away
  CHECK(std::isnan(s.min));
}

TEST_CASE("busFactor: nccl-tests' convention") {
  CHECK(busFactor(Coll::AllReduce, 2) == 1.0);
  CHECK(busFactor(Coll::AllReduce, 8) == Approx(1.75));
  CHECK(busFactor(Coll::AllGather, 2) == 0.5);
  CHECK(busFactor(Coll::AllToAllV, 4) == 0.75);
  CHECK(busFactor(Coll::Broadcast, 8) == 1.0);
}
