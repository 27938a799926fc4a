/// @file LoweringTest.cpp
/// @brief The lowering passes (Lowering.h): what each records for every
/// collective, the verifier refusing a wrong record, and the records
/// following their ops through a renumbering.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Lowering.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace purlin;
using namespace purlin::ir;

namespace {
const Op *findOp(const Program &p, OpKind k) {
  const Op *found = nullptr;
  for (const Role &r : p.roles)
    forEachOp(r.body, [&](const Op &o) {
      if (!found && o.kind == k) found = &o;
    });
  return found;
}
const Stmt *firstLoop(const Program &p) {
  for (const Role &r : p.roles)
    for (const Stmt &s : r.body)
      if (s.isLoop) return &s;
  return nullptr;
}
} // namespace

TEST_CASE("lowering passes: what they record for every collective", "[lowering]") {
  for (Kind k : allKinds()) {
    INFO(toString(k));
    const CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), 2);
    const Op *put = findOp(ir.latency, OpKind::PacketPut);
    const Stmt *loop = firstLoop(ir.latency);
    REQUIRE(put);
    const bool reduction = reducesKind(k);
    // The n == 2 form: on every reduction's loop, never on a copy's.
    CHECK((loop && loop->twoRankForm) == reduction);
    // One load for the puts and the reduction: where every rank puts its
    // whole own input, which is also the reduction's own operand (AllReduce).
    const Op *step = loop && !loop->body.empty() && loop->body.back().op.kind == OpKind::Reduce ? &loop->body.back().op
                                                                                                 : nullptr;
    CHECK((step && step->reusesLoadOf == put->id) == (k == Kind::AllReduce));
    // The write-back fused into the reduction: AllReduce's direct program only.
    const Op *back = nullptr;
    if (ir.hasDirect())
      forEachOp(ir.direct.roles[0].body, [&](const Op &o) {
        if (o.fusedInto >= 0) back = &o;
      });
    CHECK((back != nullptr) == (k == Kind::AllReduce));
    if (back) {
      const Op *red = findOp(ir.direct, OpKind::Reduce);
      REQUIRE(red);
      CHECK(back->fusedInto == red->id);
    }
    CHECK(loweringProblems(ir).empty());
  }
}

TEST_CASE("lowering passes: shown after each pass, and a wrong record is refused", "[lowering]") {
  std::ostringstream all;
  PipelineOptions o;
  o.printAfterAll = &all;
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2, o);
  for (const char *pass : {"// IR after shareLoads", "// IR after specializeTwoRanks", "// IR after fuseWriteBack"})
    CHECK(all.str().find(pass) != std::string::npos);
  const std::string text = toText(ir);
  CHECK(text.find("// shareLoads: its own operand is the words %0 loaded") != std::string::npos);
  CHECK(text.find("// specializeTwoRanks: also a form for n == 2") != std::string::npos);
  CHECK(text.find("// fuseWriteBack: done by %") != std::string::npos);
  REQUIRE(verify(ir).ok());
  // A load reused from an op that is not the put.
  CollectiveIR bad = ir;
  Stmt *loop = nullptr;
  for (Stmt &s : bad.latency.roles[0].body)
    if (s.isLoop) loop = &s;
  REQUIRE(loop);
  loop->body.back().op.reusesLoadOf = loop->body.front().op.id;  // the poll
  Report r = verify(bad);
  CHECK_FALSE(r.ok());
  CHECK(r.text().find("lowering") != std::string::npos);
  // A two-rank form on a copy loop (AllGather's).
  CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 2);
  for (Stmt &s : ag.latency.roles[0].body)
    if (s.isLoop) s.twoRankForm = true;
  CHECK_FALSE(loweringProblems(ag).empty());
  // A write-back fused into something that is not the reduction before it.
  bad = ir;
  forEachOp(bad.direct.roles[0].body, [&](Op &op) {
    if (op.fusedInto >= 0) op.fusedInto = 0;
  });
  CHECK_FALSE(loweringProblems(bad).empty());
}

TEST_CASE("lowering records follow their ops when ops are renumbered", "[lowering]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  // Drop the throughput program's first op: every later id moves down.
  ir.throughput.roles[0].body.erase(ir.throughput.roles[0].body.begin());
  numberOps(ir);
  CHECK(loweringProblems(ir).empty());
}
