/// @file RuntimePlanTest.cpp
/// @brief The IR against the runtime's per-call plan (RuntimePlan.h): for
/// the four fixed-size collectives, both transfers and several world sizes and
/// message sizes, the chunk snac::makePlan picks for the call gives the IR
/// the runtime's chunks per partition, slots and regions, and the IR
/// instantiated with exactly those numbers verifies; the latency choice is
/// the IR's crossover within the packet window; the policy row the kernels
/// read (worldConsts) carries every policy number; the V forms' plans are
/// the IR's geometry and dispatch, the same on every rank.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Pipeline.h"
#include "ir/RuntimePlan.h"
#include "ir/Verifier.h"

using namespace purlin;
using namespace purlin::ir;

namespace {

const std::vector<Kind> kRuns = {Kind::AllGather, Kind::ReduceScatter, Kind::AllReduce, Kind::AllToAll};

/// Elements per call for a message of `bytes` (dispatch convention).
uint64_t countFor(Kind k, int n, uint64_t bytes, uint32_t E) {
  return k == Kind::AllReduce ? bytes / E : bytes / (uint64_t(n) * E);
}

} // namespace

TEST_CASE("runtime plan: the IR's geometry at the chunk the runtime picks is the runtime's", "[plan]") {
  for (Policy policy : {test::testPolicy(), test::pushPolicy()})
    for (Kind k : kRuns)
      for (int n : {2, 3, 4, 8}) {
        CollectiveIR ir = lower(*test::collectiveOf(k), policy, n);
        const uint32_t E = reducesKind(k) ? 4 : 2;
        for (uint64_t bytes : {uint64_t(96) << 10, uint64_t(1) << 20, uint64_t(3) << 20, uint64_t(40) << 20}) {
          INFO(toString(k) << " n=" << n << " bytes=" << bytes << " push=" << (ir.bound.transfer == Transfer::Push));
          const uint64_t count = countFor(k, n, bytes, E);
          CallArgs a;
          a.count = count;
          a.elemSize = E;
          Sizes s = computeSizes(k, n, a);
          snac::Plan p = runtimePlan(ir, policy, count, E, 8u << 20);
          REQUIRE_FALSE(p.latency); // above the test policy's 64 KiB crossover
          CHECK(p.push == (ir.bound.transfer == Transfer::Push));
          Geometry g = geometryOf(ir, s, p, policy.stagingBytes);
          CHECK(g.chunk == p.chunk);
          CHECK(g.chunk <= ir.bound.knobs.chunkBytes); // the policy chunk is the largest
          CHECK(g.cpp == p.cpp);
          CHECK(g.slots == p.slots);
          CHECK(g.ySlots == p.ySlots);
          if (g.push) CHECK(g.srcRegion == p.regionBytes);
          // Lanes: the IR's workers are the plan's.
          if (g.push) {
            CHECK(ir.bound.stageLanes == p.lanes);
            CHECK(ir.bound.consumeLanes == p.consumeLanes);
          }
          // The IR, instantiated with the run's numbers, verifies (one CTA
          // per role keeps the instance small; slots and chunks are real).
          if (bytes <= (uint64_t(3) << 20)) {
            Report r = verifyInstance(instantiate(ir, ir.throughput, s, g, 2));
            CHECK(r.text() == "");
          }
        }
      }
}

TEST_CASE("runtime plan: the latency program is the IR's crossover within the packet window", "[plan]") {
  Policy policy = test::testPolicy();
  for (Kind k : kRuns)
    for (int n : {2, 4, 8}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), policy, n);
      const uint32_t E = reducesKind(k) ? 4 : 2;
      for (uint64_t bytes : {uint64_t(1) << 10, uint64_t(16) << 10, uint64_t(64) << 10, uint64_t(65) << 10}) {
        INFO(toString(k) << " n=" << n << " bytes=" << bytes);
        const uint64_t count = countFor(k, n, bytes, E);
        CallArgs a;
        a.count = count;
        a.elemSize = E;
        Sizes s = computeSizes(k, n, a);
        const bool below = s.dispatch <= ir.bound.knobs.latencyMaxBytes;
        // A packet half that holds every flow: the crossover alone decides.
        CHECK(runtimePlan(ir, policy, count, E, 64u << 20).latency == below);
        // A packet half too small for the flows: never the latency program.
        if (bytes >= (uint64_t(16) << 10)) CHECK_FALSE(runtimePlan(ir, policy, count, E, 4096).latency);
      }
    }
}

TEST_CASE("runtime plan: V forms plan the IR's geometry and dispatch on every rank", "[plan]") {
  Policy policy = test::testPolicy();
  for (Kind k : {Kind::AllGatherV, Kind::ReduceScatterV, Kind::AllToAllV})
    for (int n : {2, 3, 5}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), policy, n);
      const uint32_t E = reducesKind(k) ? 4 : 2;
      for (uint64_t scale : {uint64_t(0), uint64_t(1), uint64_t(300), uint64_t(40000), uint64_t(700000)}) {
        INFO(toString(k) << " n=" << n << " scale=" << scale);
        CallArgs a;
        a.elemSize = E;
        // Zeros, one large entry and small ones (a V form's counts; row p of
        // AllToAllV's matrix is the same array rotated by p).
        for (int p = 0; p < n; ++p) a.counts.push_back(p == 1 ? 0 : p == 0 ? scale : scale / 7 + uint64_t(p));
        a.matrix.assign(n, std::vector<uint64_t>(n));
        for (int p = 0; p < n; ++p)
          for (int q = 0; q < n; ++q) a.matrix[p][q] = a.counts[(p + q) % n];
        Sizes s = computeSizes(k, n, a);
        if (s.empty) continue;
        const snac::Plan first = runtimePlan(ir, policy, a, 64u << 20, 0);
        CHECK(first.latency == (s.dispatch <= ir.bound.knobs.latencyMaxBytes));
        CHECK(first.maxLen == s.maxLen);
        for (int r = 0; r < n; ++r) {
          const snac::Plan p = runtimePlan(ir, policy, a, 64u << 20, r);
          CHECK(p.latency == first.latency);  // the same program on every rank
          CHECK(p.cpp == first.cpp);
          CHECK(p.chunk == first.chunk);
          if (p.latency) continue;
          Geometry g = geometryOf(ir, s, p, policy.stagingBytes);
          CHECK(g.cpp == p.cpp);
          CHECK(g.slots == p.slots);
          // This rank's byte ranges are the IR's partitions.
          for (int q = 0; q < n; ++q) {
            const int inPart = k == Kind::AllGatherV ? 0 : q;
            CHECK(p.txLen[q] == s.in[r][inPart]);
            if (k != Kind::ReduceScatterV) CHECK(p.rxLen[q] == s.out[r][q]);
          }
        }
        if (!first.latency && scale <= 40000) {
          Geometry g = geometryOf(ir, s, first, policy.stagingBytes);
          Report rep = verifyInstance(instantiate(ir, ir.throughput, s, g, 2));
          CHECK(rep.text() == "");
        }
      }
    }
}

TEST_CASE("runtime plan: the policy row carries every number the IR binds", "[plan]") {
  Policy policy = test::pushPolicy();
  policy.world[3].throughput.lanes = 2;
  policy.world[3].direct = {true, 1 << 20, 16, 256};
  policy.world[4].direct.enabled = false;
  snac::WorldConsts w3 = worldConsts(policy.forWorld(3), Kind::AllGather);
  CHECK(w3.latencyMaxBytes == (uint64_t(64) << 10));
  CHECK(w3.stageCtas == 8);
  CHECK(w3.chunkBytes == (256u << 10));
  CHECK(w3.push);
  CHECK(w3.lanes == 2);
  CHECK(w3.directMinBytes == (1u << 20));
  CHECK(w3.directCtas == 16);
  CHECK(w3.directThreads == 256);
  CHECK(worldConsts(policy.forWorld(4), Kind::AllGather).directCtas == -1);
  // The knobs only the runtime's defaults set before (0: the default).
  CHECK(w3.chunksPerCta == 0);
  CHECK(w3.latencySlotsPerThread == 0);
  CHECK(w3.directEngineMinBytes == 0);
  policy.world[3].throughput.chunksPerCta = 6;
  policy.world[3].latency.slotsPerThread = -1;
  policy.world[3].direct.engineMinBytes = 64u << 20;
  w3 = worldConsts(policy.forWorld(3), Kind::AllGather);
  CHECK(w3.chunksPerCta == 6);
  CHECK(w3.latencySlotsPerThread == -1);
  CHECK(w3.directEngineMinBytes == (64u << 20));
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), policy, 3);
  CHECK(ir.bound.directEngineMinBytes() == w3.directEngineMinBytes);
  CHECK(lower(*test::collectiveOf(Kind::AllGather), policy, 2).bound.directEngineMinBytes() ==
        kDirectDefaultEngineMinBytes);  // 0 in the row: the runtime's default
  // The IR binds the row the runtime reads (one declaration: policy_knobs.def).
#define PURLIN_KNOB(Section, Key, Const, ...) CHECK(ir.bound.knobs.Const == w3.Const);
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) CHECK(ir.bound.knobs.Const == w3.Const);
#include "purlin/policy_knobs.def"
  CHECK_THROWS_AS(runtimePlan(lower(*test::collectiveOf(Kind::AllToAllV), policy, 3), policy, 100, 4, 8u << 20),
                  IRError);
  // A kind without a push derivation gets the pull row (only that program is printed).
  WorldPolicy push = policy.forWorld(3);
  push.throughput.transfer = Transfer::Push;
  CHECK(worldConsts(push, Kind::AllGather).push);
  CHECK_FALSE(worldConsts(push, Kind::Broadcast).push);
}
