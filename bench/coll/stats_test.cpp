/// @file stats_test.cpp
/// @brief Unit tests of stats.h: median / min / max of a row's
/// repetitions, and the bus-bandwidth factors; bench_modes.h's names.
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

#include "bench_modes.h"

TEST_CASE("bench modes: names round-trip, unknown names refused, series names") {
  using namespace purlin::bench;
  for (NcclMode m : {NcclMode::None, NcclMode::Default, NcclMode::LegacyRegister, NcclMode::Symmetric,
                     NcclMode::CopyEngine}) {
    NcclMode back = NcclMode::None;
    REQUIRE(parseNcclMode(modeName(m), back));
    CHECK(back == m);
    CHECK(legendOf(m).find("NCCL") != std::string::npos);
  }
  for (PurlinMode m : {PurlinMode::None, PurlinMode::Graph, PurlinMode::Staged, PurlinMode::Eager,
                       PurlinMode::Registered}) {
    PurlinMode back = PurlinMode::None;
    REQUIRE(parsePurlinMode(modeName(m), back));
    CHECK(back == m);
  }
  NcclMode n = NcclMode::Default;
  CHECK_FALSE(parseNcclMode("symmetricx", n));
  CHECK_FALSE(parseNcclMode("", n));
  CHECK(n == NcclMode::Default);
  PurlinMode p = PurlinMode::Graph;
  CHECK_FALSE(parsePurlinMode("Graph", p));
  CHECK(eagerTiming(PurlinMode::Registered));
  CHECK(eagerTiming(PurlinMode::Eager));
  CHECK_FALSE(eagerTiming(PurlinMode::Staged));
  CHECK(symmetricWindows(NcclMode::CopyEngine));
  CHECK_FALSE(symmetricWindows(NcclMode::LegacyRegister));
  CHECK(seriesName("purlin", "registered", true, false) == "purlin-registered-eager");
  CHECK(seriesName("nccl", "symmetric", false, true) == "nccl-symmetric-graph-sep");
}
