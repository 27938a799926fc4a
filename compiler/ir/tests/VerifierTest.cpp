/// @file VerifierTest.cpp
/// @brief Static verifier: derived programs pass on many sizes; broken
/// programs are reported with both sides and counts named.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Pipeline.h"
#include "ir/Simulator.h"
#include "ir/Verifier.h"

using namespace purlin;
using namespace purlin::ir;

TEST_CASE("verifier accepts every derived program on many sizes", "[verify]") {
  for (Kind k : allKinds())
    for (int n : {2, 3, 5, 8}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), n, {nullptr, false});
      for (uint64_t bytes : {0ull, 4ull, 100ull, 1000ull})
        for (const Program *p : {&ir.latency, &ir.throughput}) {
          CallArgs a = argsForBytes(k, n, bytes, 3);
          Sizes s = computeSizes(k, n, a);
          Report r = verifyInstance(instantiate(ir, *p, s, simGeometry(ir, s), 3));
          INFO(toString(k) << " n=" << n << " bytes=" << bytes << "\n" << r.text());
          CHECK(r.ok());
        }
    }
}

TEST_CASE("pairing names both sides and both counts", "[verify]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllToAll), test::testPolicy(), 4);
  // Delete the consume role's STAGED wait.
  auto &loop = ir.throughput.roles[1].body[1].body; // after the own copy
  REQUIRE(loop[0].op.kind == OpKind::Wait);
  int waitId = loop[0].op.id;
  loop.erase(loop.begin());
  Report r = verify(ir);
  REQUIRE(!r.ok());
  auto &f = r.errors[0];
  CHECK(f.rule == "pairing");
  CHECK(f.message.find("signal STAGED from rank") != std::string::npos);
  CHECK(f.message.find("notifies vs 0 waits") != std::string::npos);
  CHECK(f.message.find("notify.release STAGED") != std::string::npos);
  CHECK(f.message.find("notify without wait") != std::string::npos);
  bool acquire = false;
  for (auto &e : r.errors) acquire |= e.rule == "acquire";
  CHECK(acquire);
  (void)waitId;
}

TEST_CASE("a missing slot-reuse guard is reported", "[verify]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 3);
  auto &loop = ir.throughput.roles[0].body[0].body;
  REQUIRE(loop[0].op.sig == Sig::CONSUMED);
  loop.erase(loop.begin());
  Report r = verify(ir);
  REQUIRE(!r.ok());
  bool reuse = false;
  for (auto &e : r.errors) reuse |= e.rule == "slot-reuse";
  CHECK(reuse);
}

TEST_CASE("missing DONE acks break the cross-call chain", "[verify]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::Scatter), test::testPolicy(), 4, {nullptr, false});
  // Remove all DONE ops: pairing is then consistent, but the chain is missing.
  for (Program *p : {&ir.latency, &ir.throughput})
    for (auto &role : p->roles) {
      auto &b = role.body;
      b.erase(std::remove_if(b.begin(), b.end(),
                             [](const Stmt &s) {
                               return !s.isLoop && (s.op.sig == Sig::DONE || s.op.counterBase == kDoneCounter) &&
                                      (s.op.kind == OpKind::Notify || s.op.kind == OpKind::Wait ||
                                       s.op.kind == OpKind::Arrive);
                             }),
              b.end());
    }
  Report r = verify(ir);
  REQUIRE(!r.ok());
  CHECK(r.errors[0].rule == "cross-call");
  CHECK(r.errors[0].message.find("DONE ack is missing") != std::string::npos);
}
