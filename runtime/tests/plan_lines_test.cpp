/// @file plan_lines_test.cpp
/// @brief detail::PlanLines (the plan log's memory behind
/// Communicator::firstOfShape / logPlan / lastPlan): a shape's line is
/// logged once, and lastPlan is the line of the call made last even when
/// its shape was seen before (coll_bench recorded an older shape's line
/// for a repeated one and flagged "plan line and program differ").
#include <catch2/catch.hpp>

#include "purlin/host/plan_lines.h"

TEST_CASE("PlanLines: one line per shape; last() follows every call", "[plan_lines]") {
  purlin::detail::PlanLines lines;
  CHECK(lines.last().empty());
  REQUIRE(lines.note(1));  // new: described and recorded
  CHECK(lines.record(1, "direct (SM stores): captured") == "direct (SM stores): captured");
  CHECK(lines.last() == "direct (SM stores): captured");
  REQUIRE(lines.note(2));
  lines.record(2, "latency (packets): eager");
  CHECK(lines.last() == "latency (packets): eager");
  // A call of shape 1 again: not logged again, and last() is shape 1's line,
  // not the latest new line.
  CHECK_FALSE(lines.note(1));
  CHECK(lines.last() == "direct (SM stores): captured");
  CHECK_FALSE(lines.note(2));
  CHECK(lines.last() == "latency (packets): eager");
  // Many shapes later, the first line's storage still holds (node-based map).
  for (uint64_t k = 10; k < 2000; ++k) {
    REQUIRE(lines.note(k));
    lines.record(k, "shape " + std::to_string(k));
  }
  CHECK_FALSE(lines.note(1));
  CHECK(lines.last() == "direct (SM stores): captured");
}
