/// @file plan_log_test.cpp
/// @brief Unit tests of snac::describePlan and planShapeKey (the plan log,
/// CommOptions::logPlans): each program is named with its CTAs, chunk and
/// the rule that chose it; equal shapes share a key, different ones do not.
#include <catch2/catch.hpp>

#include <string>

#include "plan_fixtures.h"
#include "purlin/snac/plan.h"

using namespace plantest;

namespace {
bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
} // namespace

TEST_CASE("describePlan names the program, its shape and why") {
  Plan p;
  std::string err;
  // Latency: 1024 bf16 per rank of 2 (4 KiB message) under a 512 KiB crossover.
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 1024), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  std::string line = describePlan(p, kWorld);
  INFO(line);
  CHECK(has(line, "latency (packets): "));
  CHECK(has(line, "message 4096 B <= the latency crossover 524288 B"));
  CHECK(has(line, "flows of up to 2048 B (whole words)"));
  // Throughput, above the crossover.
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 1u << 22), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  line = describePlan(p, kWorld);
  CHECK(has(line, "throughput (pull): 8 stage + 16 consume + 8 gather CTAs x 512 threads"));
  CHECK(has(line, "chunk " + std::to_string(p.chunk) + " B"));
  CHECK(has(line, "message 8388608 B > the latency crossover 524288 B"));
  // Throughput below the crossover because the packet window is too small.
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 65536), kWorld, kStaging, 4096, p, err, kAtomStages) ==
          Status::Ok);
  CHECK_FALSE(p.latency);
  CHECK(has(describePlan(p, kWorld), "packet slots exceed the window's"));
  // A policy without a latency program.
  WorldConsts noLatency = kWorld;
  noLatency.latencyMaxBytes = 0;
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 8), noLatency, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  CHECK(has(describePlan(p, noLatency), "the policy has no latency program for this world size"));
  // Direct (as the launcher sets it for a registered captured call).
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 1u << 22), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  planExampleDirect(p, kWorld);
  line = describePlan(p, kWorld);
  CHECK(has(line, "direct (SM stores): "));
  CHECK(has(line, "captured in a CUDA graph, message 16777216 B >= directMinBytes 4194304 B"));
  // The same call eager, its output in a registered buffer.
  line = describePlan(p, kWorld, DirectBy::Registration);
  CHECK(has(line, "direct (SM stores): "));
  CHECK(has(line, "output in a registered buffer, message 16777216 B >= directMinBytes 4194304 B"));
  CHECK(!has(line, "captured"));
  CHECK(planShapeKey(p, DirectBy::Registration) != planShapeKey(p, DirectBy::Capture));
  WorldConsts engine = kWorld;
  engine.directEngineMinBytes = 1u << 20;
  planExampleDirect(p, engine);
  CHECK(has(describePlan(p, engine), "direct (copy engines)"));
  // Nothing to do, one rank.
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 0), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(has(describePlan(p, kWorld), "nothing launched"));
  REQUIRE(makeExamplePlan(CollKind::AllGather, 1, 0, args(kIn, kOut, 9), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(has(describePlan(p, kWorld), "one rank"));
}

TEST_CASE("planShapeKey: one key per distinct call shape") {
  Plan a, b;
  std::string err;
  REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 1, args(kIn, kOut, 100), kWorld, kStaging, kPackets, a, err, kAtomStages) ==
          Status::Ok);
  REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 1, args(kIn, kOut, 100), kWorld, kStaging, kPackets, b, err, kAtomStages) ==
          Status::Ok);
  CHECK(planShapeKey(a) == planShapeKey(b));
  REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 1, args(kIn, kOut, 101), kWorld, kStaging, kPackets, b, err, kAtomStages) ==
          Status::Ok);
  CHECK(planShapeKey(a) != planShapeKey(b));  // another size
  REQUIRE(makeExamplePlan(CollKind::AllToAll, 4, 1, args(kIn, kOut, 100), kWorld, kStaging, kPackets, b, err, kAtomStages) ==
          Status::Ok);
  CHECK(planShapeKey(a) != planShapeKey(b));  // another collective
  REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 1, args(kIn, kOut, 100, DType::F32), kWorld, kStaging, kPackets, b, err,
                   kAtomStages) == Status::Ok);
  CHECK(planShapeKey(a) != planShapeKey(b));  // another dtype
}
