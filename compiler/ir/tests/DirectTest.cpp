/// @file DirectTest.cpp
/// @brief The direct program (docs/snac-protocol.md "Direct program"):
/// derivation for AllGather/AllToAll (any n) and ReduceScatter/AllReduce
/// (n == 2), signal indices, rounds, verifier rules (ARRIVED before a remote
/// output write, PUT/BACK before a read of the own output, completion at
/// kernel end), simulation against the reference, and mutation testing.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/DeriveDirect.h"
#include "ir/Mutation.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"
#include "ir/Simulator.h"

using namespace purlin;
using namespace purlin::ir;

namespace {

const std::vector<Kind> kDirectKinds = {Kind::AllGather, Kind::AllToAll, Kind::ReduceScatter, Kind::AllReduce};

CollectiveIR lowered(Kind k, int n, bool verify = true) {
  PipelineOptions o;
  o.verify = verify;
  return lower(*test::collectiveOf(k), test::testPolicy(), n, o);
}

/// The first op of the direct program matching (kind, sig).
Op *findOp(std::vector<Stmt> &body, OpKind kind, Sig sig) {
  for (auto &s : body) {
    if (s.isLoop) {
      if (Op *o = findOp(s.body, kind, sig)) return o;
    } else if (s.op.kind == kind && s.op.sig == sig) {
      return &s.op;
    }
  }
  return nullptr;
}

/// Moves the first (kind, sig) op of the direct role to just after the
/// first data op of the same body (a mis-ordered program).
bool moveAfterFirstData(std::vector<Stmt> &body, OpKind kind, Sig sig, OpKind dataKind) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      if (moveAfterFirstData(body[i].body, kind, sig, dataKind)) return true;
      continue;
    }
    if (body[i].op.kind != kind || body[i].op.sig != sig) continue;
    for (size_t j = i + 1; j < body.size(); ++j)
      if (!body[j].isLoop && body[j].op.kind == dataKind) {
        Stmt moved = body[i];
        body.insert(body.begin() + long(j) + 1, moved);
        body.erase(body.begin() + long(i));
        return true;
      }
  }
  return false;
}

bool hasRule(const Report &r, const std::string &rule) {
  for (auto &f : r.errors)
    if (f.rule == rule) return true;
  return false;
}

/// Verifier findings of the direct program on the sample calls.
Report verifyDirect(const CollectiveIR &ir) {
  Report all;
  for (auto &sc : sampleCalls(ir, ir.n))
    for (auto &f : verifyInstance(instantiate(ir, ir.direct, sc.sizes, sc.geo, 2)).errors) all.errors.push_back(f);
  return all;
}

/// True when some seed of the simulator reports `ir`'s direct program.
bool simulatorCatches(const CollectiveIR &ir, std::string &first) {
  for (uint64_t seed = 1; seed <= 4; ++seed)
    for (uint64_t bytes : {uint64_t(24 * ir.n), uint64_t(200 * ir.n)}) {
      CallArgs a = argsForBytes(ir.kind, ir.n, bytes * (reducesKind(ir.kind) ? 4 : 1), seed);
      Sizes s = computeSizes(ir.kind, ir.n, a);
      SimOptions o;
      o.seed = seed;
      SimResult r = simulate(ir, ir.direct, a, simGeometry(ir, s), o);
      if (!r.report.ok()) {
        first = r.report.errors[0].rule + ": " + r.report.errors[0].message;
        return true;
      }
    }
  return false;
}

} // namespace

TEST_CASE("direct: derived for AllGather/AllToAll (any n) and ReduceScatter/AllReduce (n == 2)", "[direct]") {
  for (Kind k : allKinds())
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      INFO(toString(k) << " n=" << n);
      bool want = k == Kind::AllGather || k == Kind::AllToAll ||
                  ((k == Kind::ReduceScatter || k == Kind::AllReduce) && n == 2);
      CHECK(directDerivable(k, n) == want);
      CollectiveIR ir = lowered(k, n);
      CHECK(ir.hasDirect() == want);
      CHECK(ir.directWhyNot.empty() == want);
      if (!want) continue;
      REQUIRE(ir.direct.roles.size() == 1);
      CHECK(ir.direct.roles[0].name == "direct");
      CHECK(ir.direct.roles[0].ctas == 32); // 0 in the test policy = the runtime default
      CHECK(ir.direct.roles[0].threads == 512);
      CHECK(ir.bound.directMinBytes() == 4 * 1024 * 1024);
    }
}

TEST_CASE("direct: the policy turns it off and sets its numbers", "[direct]") {
  Policy p = test::testPolicy();
  p.world[2].direct = {true, 4096, 8, 256};
  p.world[3].direct.enabled = false;
  CollectiveIR two = lower(*test::collectiveOf(Kind::AllGather), p, 2);
  REQUIRE(two.hasDirect());
  CHECK(two.direct.roles[0].ctas == 8);
  CHECK(two.direct.roles[0].threads == 256);
  CHECK(two.bound.directMinBytes() == 4096);
  CHECK(toText(two).find("direct 8 ctas x 256 threads from 4096 B") != std::string::npos);
  CollectiveIR three = lower(*test::collectiveOf(Kind::AllGather), p, 3);
  CHECK_FALSE(three.hasDirect());
  CHECK(three.directWhyNot == "off in the policy (world[3].direct = false)");
  CHECK(toText(three).find("// no direct program: off in the policy") != std::string::npos);
  p.world[2].direct.ctas = 129;
  CHECK_THROWS_AS(lower(*test::collectiveOf(Kind::AllGather), p, 2), IRError);
}

TEST_CASE("direct: printed after the staged programs, with its signals", "[direct]") {
  std::string ag = toText(lowered(Kind::AllGather, 4));
  CHECK(ag.find("program direct (captured calls; no staging) {") > ag.find("program throughput"));
  CHECK(ag.find("signal ARRIVED (index 33792 + src*128 + cta)") != std::string::npos);
  CHECK(ag.find("notify.release ARRIVED[r][cta] -> rank k = sig(e,0) for k in others(r)") != std::string::npos);
  CHECK(ag.find("wait.acquire ARRIVED[p][cta] >= sig(e,0) for p in others(r)") != std::string::npos);
  CHECK(ag.find("copy.remote_write O_k[r] <- X_r for k in r+1..r (mod n)") != std::string::npos);
  CHECK(ag.find("fence.acq_rel.sys; notify.release PUT[r][cta] -> rank k = sig(e,0) for k in others(r)") !=
        std::string::npos);
  std::string ar = toText(lowered(Kind::AllReduce, 2));
  CHECK(ar.find("for j in 0..max rounds-1 (rounds of this CTA's slices) {") != std::string::npos);
  CHECK(ar.find("reduce O_r[r][round j] <- op((p == r ? X_r[r][round j] : O_r[r][round j]) for p in 0..n-1) if j "
                "< rounds(X_r[r])") != std::string::npos);
  CHECK(ar.find("notify.release BACK[r][cta] -> rank k = sig(e,j) for k in others(r) if j < rounds(X_r[r])") !=
        std::string::npos);
  CHECK(ar.find("wait.acquire BACK[p][cta] >= sig(e,rounds(X_r[p])-1) for p in others(r) if rounds(X_r[p]) > 0") !=
        std::string::npos);
  nlohmann::json j = toJson(lowered(Kind::AllReduce, 2));
  REQUIRE(j["programs"].size() == 4); // latency, throughput, direct, its copy-engine form
  CHECK(j["programs"][2]["regime"] == "direct");
  CHECK(j["programs"][3]["regime"] == "direct");
  CHECK(j["programs"][3]["form"] == "copy engine");
  CHECK(j["bound"]["directCtas"] == 32);
}

TEST_CASE("direct: rounds and signal indices follow the runtime", "[direct]") {
  Geometry g; // the runtime's bounds
  CHECK(directRoundBytes(1 << 20, g) == 512 << 10);          // half the slice
  CHECK(directRoundBytes(100 << 10, g) == 256 << 10);         // at least 256 KiB
  CHECK(directRoundBytes(uint64_t(64) << 20, g) == 4 << 20);  // at most 4 MiB
  CHECK(directRounds(0, g) == 0);
  CHECK(directRounds(1, g) == 1);
  CHECK(directRounds(uint64_t(3) << 20, g) == 2);
  CHECK(directRounds(uint64_t(24) << 20, g) == 6);
  // AllGather n=3, 2 CTAs: CTA c of rank r notifies ARRIVED at 33792 + r*128 + c.
  CollectiveIR ir = lowered(Kind::AllGather, 3);
  CallArgs a = argsForBytes(Kind::AllGather, 3, 96, 1);
  Sizes s = computeSizes(Kind::AllGather, 3, a);
  Instance inst = instantiate(ir, ir.direct, s, simGeometry(ir, s), 2);
  const auto &ops = inst.ranks[1].roles[0].ctas[1].ops;
  REQUIRE(!ops.empty());
  CHECK(ops[0].kind == OpKind::Notify);
  CHECK(ops[0].index == 33792 + 128 + 1);
  int puts = 0;
  for (auto &op : ops) puts += op.kind == OpKind::Notify && op.index == 34816 + 128 + 1;
  CHECK(puts == 2); // one PUT to each peer
  // AllReduce n=2 on the simulator's small rounds: several PUT rounds per CTA.
  CollectiveIR arr = lowered(Kind::AllReduce, 2);
  CallArgs b = argsForBytes(Kind::AllReduce, 2, 800, 1);
  Sizes t = computeSizes(Kind::AllReduce, 2, b);
  Instance ai = instantiate(arr, arr.direct, t, simGeometry(arr, t), 2);
  uint32_t most = 0;
  for (auto &op : ai.ranks[0].roles[0].ctas[0].ops)
    if (op.kind == OpKind::Notify && op.sym->sig == Sig::PUT) most = std::max(most, op.round);
  CHECK(most >= 3);
}

TEST_CASE("direct: verifier accepts and simulator runs the derived programs", "[direct][simulate]") {
  for (Kind k : kDirectKinds)
    for (int n : {2, 3, 4}) {
      if (!directDerivable(k, n)) continue;
      CollectiveIR ir = lowered(k, n);
      CHECK(verifyDirect(ir).ok());
      for (uint64_t bytes : {uint64_t(0), uint64_t(16), uint64_t(37 * n), uint64_t(96 * n), uint64_t(1000)})
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          INFO(toString(k) << " n=" << n << " bytes=" << bytes << " seed=" << seed);
          CallArgs a = argsForBytes(k, n, bytes * (reducesKind(k) ? 4 : 1), seed);
          Sizes s = computeSizes(k, n, a);
          SimOptions o;
          o.seed = seed * 31 + bytes;
          SimResult r = simulate(ir, ir.direct, a, simGeometry(ir, s), o);
          CHECK(r.report.text() == "");
        }
    }
}

TEST_CASE("direct: writing a peer's output before its ARRIVED wait is caught", "[direct]") {
  for (Kind k : {Kind::AllGather, Kind::AllToAll, Kind::ReduceScatter, Kind::AllReduce}) {
    INFO(toString(k));
    CollectiveIR ir = lowered(k, k == Kind::AllGather || k == Kind::AllToAll ? 3 : 2);
    // Wait for ARRIVED only after the first copy: pairing still holds.
    std::vector<Stmt> &body = ir.direct.roles[0].body;
    Stmt wait = body[1];
    REQUIRE(wait.op.sig == Sig::ARRIVED);
    body.erase(body.begin() + 1);
    if (body[1].isLoop) body[1].body.insert(body[1].body.begin() + 1, wait);
    else body.insert(body.begin() + 2, wait);
    Report r = verifyDirect(ir);
    CHECK(hasRule(r, "arrival"));
    // Copies: the moved wait still pairs (one per call); in the rounds loop
    // of a reduction it also runs once per round (and not for empty slices).
    if (!reducesKind(k)) CHECK_FALSE(hasRule(r, "pairing"));
    std::string first;
    CHECK(simulatorCatches(ir, first));
    INFO(first);
  }
}

TEST_CASE("direct: reading the own output before the PUT wait is caught", "[direct]") {
  for (Kind k : {Kind::ReduceScatter, Kind::AllReduce}) {
    INFO(toString(k));
    CollectiveIR ir = lowered(k, 2);
    REQUIRE(moveAfterFirstData(ir.direct.roles[0].body, OpKind::Wait, Sig::PUT, OpKind::Reduce));
    Report r = verifyDirect(ir);
    CHECK(hasRule(r, "acquire"));
    std::string first;
    CHECK(simulatorCatches(ir, first));
    CHECK(first.find("race") == 0);
  }
}

TEST_CASE("direct: a kernel that may end before its output is complete is caught", "[direct]") {
  // AllReduce: wait for BACK round 0 instead of the last round.
  CollectiveIR ir = lowered(Kind::AllReduce, 2);
  Op *w = findOp(ir.direct.roles[0].body, OpKind::Wait, Sig::BACK);
  REQUIRE(w);
  w->round = RoundOf::Zero;
  Report r = verifyDirect(ir);
  CHECK(hasRule(r, "completion"));
  std::string first;
  CHECK(simulatorCatches(ir, first));
  // AllGather: no PUT wait at all.
  CollectiveIR ag = lowered(Kind::AllGather, 3);
  auto &body = ag.direct.roles[0].body;
  body.pop_back();
  CHECK(hasRule(verifyDirect(ag), "completion"));
  CHECK(simulatorCatches(ag, first));
  CHECK(first.find("kernel ended but output byte") != std::string::npos);
}

TEST_CASE("direct: every single notify/wait deletion is reported, by the verifier and by the simulator alone",
          "[direct][mutation]") {
  for (Kind k : kDirectKinds)
    for (int n : {2, 3}) {
      if (!directDerivable(k, n)) continue;
      CollectiveIR ir = lowered(k, n);
      int direct = 0;
      for (auto &m : mutate(ir, 2)) {
        if (m.program != "direct") continue;
        ++direct;
        INFO(toString(k) << " n=" << n << " deleted %" << m.opId << " " << m.opText);
        CHECK(m.caught);
        CHECK(m.namesOp);
        CollectiveIR mut = withoutOp(ir, m.opId);
        std::string first;
        CHECK(simulatorCatches(mut, first));
      }
      CHECK(direct == (k == Kind::AllReduce ? 6 : 4));
    }
}
