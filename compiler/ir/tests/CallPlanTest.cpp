/// @file CallPlanTest.cpp
/// @brief The call plan ops (CallPlan.h): derived from the layouts and the
/// direct derivation for every kind, printed, and evaluated by PlanRulesOf
/// as snac::makePlan and snac::launch ask them.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/CallPlan.h"
#include "ir/DeriveDirect.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::ir;

TEST_CASE("plan ops: one of each kind, numbered in order, for every collective", "[plan]") {
  for (Kind k : allKinds()) {
    CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), 4);
    INFO(toString(k));
    REQUIRE(ir.plan.size() >= 5);
    for (std::size_t i = 0; i < ir.plan.size(); ++i) CHECK(ir.plan[i].id == int(i));
    CHECK(planOp(ir, PlanOpKind::Flow).flow == (isCompose(k) ? FlowOf::Message : FlowOf::Segment));
    // The direct op lists exactly the world sizes the direct program is derived for.
    std::vector<int> worlds;
    for (int n = kMinWorld; n <= kMaxWorld; ++n)
      if (directDerivable(k, n)) worlds.push_back(n);
    CHECK(planOp(ir, PlanOpKind::Direct).worlds == worlds);
    // An engine op exactly where some world size has a direct program; it
    // reduces (and needs stream memory operations) exactly for reductions.
    const PlanOp *engine = findPlanOp(ir, PlanOpKind::Engine);
    CHECK((engine != nullptr) == !worlds.empty());
    if (engine) {
      CHECK(engine->reduces == reduces(k));
      CHECK(engine->needsMemOps == reduces(k));
    }
    // Printed as IR, not prose.
    const std::string t = toText(ir);
    CHECK(t.find("%p0 = ranges tx[k] = ") != std::string::npos);
    CHECK(t.find("%p4 = direct ") != std::string::npos);
  }
}

TEST_CASE("plan ops: PlanRulesOf evaluates them", "[plan]") {
  snac::WorldConsts w{};
  w.latencyMaxBytes = 1 << 20;
  w.latencyCtas = 16;
  w.latencyThreads = 512;
  snac::Plan p;
  p.msgBytes = 4096;
  p.maxLen = 1024;
  p.packetRegion = 1 << 16;
  const CollectiveIR ar = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  const CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 2);
  const CollectiveIR gather = lower(*test::collectiveOf(Kind::Gather), test::testPolicy(), 2);
  const PlanRulesOf arRules(ar), agRules(ag), gatherRules(gather);
  CHECK(arRules.flowBytes(p) == 4096);  // one-shot
  CHECK(agRules.flowBytes(p) == 1024);  // per segment
  p.packetFlowBytes = 4096;
  CHECK(arRules.latency(p, w));
  p.packetRegion = snac::packetSlots(4096) - 1;  // the window cannot hold the flow
  CHECK_FALSE(arRules.latency(p, w));
  p.msgBytes = std::size_t(64) << 20;
  for (int n : {2, 3, 8}) {
    p.n = n;
    CHECK(arRules.direct(p, w) == (n == 2));  // reduces on two ranks only
    CHECK(agRules.direct(p, w));
    CHECK_FALSE(gatherRules.direct(p, w));    // rooted: no direct program
  }
  w.directCtas = -1;  // off in the policy
  CHECK_FALSE(agRules.direct(p, w));
  w.directCtas = 0;
  p.msgBytes = std::size_t(256) << 20;  // above the copy-engine default threshold
  // {checked, streamMemOps, queuesFit, captured}
  CHECK(agRules.engine(p, w, {false, false, true, true}));         // copies need no stream memory operations
  CHECK_FALSE(arRules.engine(p, w, {false, false, true, true}));   // reductions do
  CHECK(arRules.engine(p, w, {false, true, true, true}));
  CHECK_FALSE(arRules.engine(p, w, {true, true, true, true}));     // checked
  CHECK_FALSE(agRules.engine(p, w, {false, true, false, true}));   // queues
  // An eager (registered) call: its host-enqueued copies could not be
  // withheld from a peer whose call differs (issue 35 item 7).
  CHECK_FALSE(agRules.engine(p, w, {false, true, true, false}));
  CHECK_FALSE(arRules.engine(p, w, {false, true, true, false}));
  CHECK(arRules.engineReduces);
  CHECK_FALSE(agRules.engineReduces);
  p.msgBytes = std::size_t(64) << 20;
  CHECK_FALSE(agRules.engine(p, w, {false, true, true, true}));    // below the threshold
}

TEST_CASE("plan ops: the world condition as printed", "[plan]") {
  CHECK(worldCondition({}, "n") == "false");
  CHECK(worldCondition({2}, "n") == "n == 2");
  CHECK(worldCondition({2, 3, 4, 5, 6, 7, 8}, "p.n") == "p.n >= 2");
  CHECK(worldCondition({2, 4}, "n") == "(n == 2 || n == 4)");
}
