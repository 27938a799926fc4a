/// @file DeriveTest.cpp
/// @brief Derivation and printing: every collective lowers for every world
/// size; the text shows Algorithm 1's roles; JSON mirrors the text.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Derive.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::ir;

TEST_CASE("every collective lowers and verifies for n = 2..8", "[derive]") {
  for (Kind k : allKinds())
    for (int n = 2; n <= 8; ++n) {
      INFO(toString(k) << " n=" << n);
      CollectiveIR ir;
      REQUIRE_NOTHROW(ir = lower(*test::collectiveOf(k), test::testPolicy(), n));
      CHECK(ir.kind == k);
      CHECK(!ir.latency.roles.empty());
      CHECK(ir.throughput.roles.size() >= 2);
    }
}

TEST_CASE("allReduce text shows Algorithm 1's three roles and the crossover", "[print]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 8);
  std::string t = toText(ir);
  INFO(t);
  CHECK(t.find("plan (msgBytes = count*E) {") != std::string::npos);
  CHECK(t.find("%p2 = latency if world[n].latencyCtas > 0 && msgBytes <= world[n].latencyMaxBytes") !=
        std::string::npos);
  CHECK(t.find("crossover 65536 B") != std::string::npos);
  CHECK(t.find("role stage (8 ctas") != std::string::npos);
  CHECK(t.find("role reduce (8 ctas") != std::string::npos);
  CHECK(t.find("role gather (8 ctas") != std::string::npos);
  CHECK(t.find("wait.acquire STAGED[p][slot(seq(r,c))] >= sig(e,round) for p in others(r)") != std::string::npos);
  CHECK(t.find("reduce.remote_read Y_r[yslot(c)] <- op((p == r ? X_r[r][c] : S_p[slot(seq(r,c))]) for p in 0..n-1)") != std::string::npos);
  CHECK(t.find("notify.release REDUCED[r][yslot(c)] -> rank k = sig(e,yround) for k in 0..n-1 [last arriver]") !=
        std::string::npos);
  CHECK(t.find("wait.acquire REDUCED[k][yslot(c)] >= sig(e,yround)") != std::string::npos);
  CHECK(t.find("copy.remote_read O_r[k][c] <- Y_k[yslot(c)]") != std::string::npos);
  CHECK(t.find("wait.acquire CONSUMED[part(prev)][slot(seq(k,c))] >= sig(e,round(prev)) if prev(slot) exists") !=
        std::string::npos);
  CHECK(t.find("program latency") != std::string::npos);
  CHECK(t.find("packet.put PK_k[r] <- X_r (full) for k in r+1..r-1 (mod n)") != std::string::npos);
  CHECK(t.find("for p in 0..n-1 {\n        %1 packet.poll PK_r[p] until full, then empty if p != r") != std::string::npos);
  CHECK(t.find("%2 reduce.step O_r <- op(O_r, (p == r ? X_r : PK_r[p])) over p ascending") != std::string::npos);
}

TEST_CASE("rooted collectives get DONE acks; others do not", "[derive]") {
  for (Kind k : allKinds()) {
    std::string t = toText(lower(*test::collectiveOf(k), test::testPolicy(), 4));
    INFO(toString(k) << "\n" << t);
    CHECK((t.find("notify.release DONE") != std::string::npos) == isRootedKind(k));
    CHECK((t.find("wait.acquire DONE") != std::string::npos) == isRootedKind(k));
  }
}

TEST_CASE("the text is the same for every world size except the header", "[print]") {
  auto body = [](int n) {
    std::string t = toText(lower(*test::collectiveOf(Kind::AllToAll), test::testPolicy(), n));
    return t.substr(t.find("program latency"));
  };
  CHECK(body(2) == body(8));
}

TEST_CASE("JSON form carries ids, roles and bound policy", "[print]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 8);
  auto j = toJson(ir);
  CHECK(j["kind"] == "AllReduce");
  CHECK(j["bound"]["crossoverBytes"] == 65536);
  CHECK(j["programs"].size() == 2);
  CHECK(j["programs"][1]["roles"].size() == 3);
  CHECK(j["programs"][1]["roles"][1]["name"] == "reduce");
}

TEST_CASE("print-ir-after-all prints after every pass", "[print]") {
  std::ostringstream os;
  PipelineOptions o;
  o.printAfterAll = &os;
  lower(*test::collectiveOf(Kind::Gather), test::testPolicy(), 3, o);
  for (auto &p : passNames()) CHECK(os.str().find("// IR after " + p + "\n") != std::string::npos);
}

TEST_CASE("unsupported declarations and bad policies are user errors", "[derive]") {
  auto bad = test::leaf("weird", ConsumeOp::Reduce, Layout::Packed, Layout::Transposed);
  CHECK_THROWS_AS(lower(*bad, test::testPolicy(), 4), IRError);
  auto mixed = test::leaf("mixed", ConsumeOp::Copy, Layout::PackedV, Layout::Scattered);
  CHECK_THROWS_AS(lower(*mixed, test::testPolicy(), 4), IRError);
  Policy p = test::testPolicy();
  p.world[4].throughput.gatherCtas = 0;
  try {
    lower(*test::collectiveOf(Kind::AllReduce), p, 4);
    FAIL("expected an error");
  } catch (const IRError &e) {
    CHECK(e.message.find("world[4].throughput.gatherCtas") != std::string::npos);
  }
  CHECK_THROWS_AS(lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 9), IRError);
}
