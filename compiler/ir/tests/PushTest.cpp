/// @file PushTest.cpp
/// @brief The push transfer (docs/snac-protocol.md, "Throughput program,
/// push transfer"): derivation and text, user errors for collectives
/// without a push derivation, the simulator on every size and world size,
/// the verifier's push rules on hand-broken programs, and mutations.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/DerivePush.h"
#include "ir/Mutation.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"
#include "ir/Simulator.h"

using namespace purlin;
using namespace purlin::ir;

namespace {
CallArgs argsFor(Kind k, int n, uint64_t count, uint64_t seed) {
  CallArgs a;
  a.elemSize = reducesKind(k) ? 4 : 1;
  a.count = count;
  a.root = int(seed % uint64_t(n));
  return a;
}

/// Runs the throughput program of `ir` for `count` on a few seeds; returns
/// the first failing report (ok when all pass).
Report simulateSeeds(const CollectiveIR &ir, uint64_t count, int seeds) {
  for (int s = 1; s <= seeds; ++s) {
    CallArgs a = argsFor(ir.kind, ir.n, count, uint64_t(s));
    Sizes sz = computeSizes(ir.kind, ir.n, a);
    SimOptions o;
    o.seed = uint64_t(s) * 31 + count;
    SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, sz), o);
    if (!r.report.ok()) return r.report;
  }
  return {};
}

/// `k` lowered for push with the given CTA scheme (derive uses kPushCtas).
CollectiveIR variant(Kind k, int n, PushCtas ctas) {
  CollectiveIR ir = lower(*test::collectiveOf(k), test::pushPolicy(), n);
  Program p = throughputPush(k, ctas);
  p.buffers = ir.throughput.buffers;
  p.signals = ir.throughput.signals;
  for (size_t i = 0; i < p.roles.size(); ++i) {
    p.roles[i].ctas = ir.throughput.roles[i].ctas;
    p.roles[i].threads = ir.throughput.roles[i].threads;
  }
  insertPushSlotReuseGuards(p);
  ir.throughput = std::move(p);
  numberOps(ir);
  return ir;
}

/// Finds the first op of the throughput program matching `pred`.
template <class P> Op *findOp(CollectiveIR &ir, P pred) {
  Op *found = nullptr;
  for (auto &r : ir.throughput.roles)
    forEachOp(r.body, [&](Op &o) {
      if (!found && pred(o)) found = &o;
    });
  return found;
}
} // namespace

TEST_CASE("push: AllReduce text shows remote writes, fences and local reads", "[push]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::pushPolicy(), 4);
  std::string t = toText(ir);
  INFO(t);
  CHECK(kPushCtas == PushCtas::PerChunk); // the runtime's scheme
  CHECK(t.find("program throughput (push) {") != std::string::npos);
  CHECK(t.find("for c in 0..cpp-1, k in r+1..r-1 (mod n), step j on worker j mod workers {") != std::string::npos);
  CHECK(t.find("transfer push") != std::string::npos);
  CHECK(t.find("copy.remote_write S_k[r][pslot(c)] <- X_r[k][c]") != std::string::npos);
  CHECK(t.find("fence.acq_rel.sys; notify.release STAGED[r][pslot(c)] -> rank k = sig(e,pround)  //") !=
        std::string::npos);
  CHECK(t.find("wait.acquire CONSUMED[k][pslot(c)] >= sig(e,pround(prev)) if prev(slot) exists") != std::string::npos);
  CHECK(t.find("reduce O_r[r][c] <- op((p == r ? X_r[r][c] : S_r[p][pslot(c)]) for p in 0..n-1)") != std::string::npos);
  CHECK(t.find("copy.remote_write Y_k[r][yslot(c)] <- O_r[r][c] for k in others(r)") != std::string::npos);
  CHECK(t.find("copy O_r[k][c] <- Y_r[k][yslot(c)]") != std::string::npos);
  CHECK(t.find("remote_read") == std::string::npos); // push reads only local memory
  auto j = toJson(ir);
  CHECK(j["programs"][1]["transfer"] == "push");
  CHECK(j["bound"]["transfer"] == "push");
  bool remoteWrite = false, fence = false;
  for (auto &role : j["programs"][1]["roles"])
    for (auto &st : role["body"]) {
      const auto &ops = st.contains("body") ? st["body"] : nlohmann::json::array({st});
      for (auto &o : ops) {
        remoteWrite |= o.value("remote", "") == "remote_write";
        fence |= o.contains("fence");
      }
    }
  CHECK(remoteWrite);
  CHECK(fence);
}

TEST_CASE("push: pull text marks remote reads", "[push]") {
  std::string t = toText(lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 4));
  CHECK(t.find("program throughput (pull) {") != std::string::npos);
  CHECK(t.find("copy.remote_read O_r[p][c] <- S_p[slot(seq(c))]") != std::string::npos);
  // The pull program writes nothing remotely (the direct program, printed
  // after it, writes the peers' outputs).
  CHECK(t.substr(0, t.find("program direct")).find("remote_write") == std::string::npos);
}

TEST_CASE("push: collectives without a push derivation bind pull under a push policy", "[push]") {
  for (Kind k : allKinds()) {
    bool derivable = false;
    for (Kind q : test::pushKinds()) derivable |= q == k;
    auto c = test::collectiveOf(k);
    INFO(toString(k));
    CollectiveIR ir = lower(*c, test::pushPolicy(), 3);
    Transfer want = derivable ? Transfer::Push : Transfer::Pull;
    CHECK(ir.throughput.transfer == want);
    CHECK(ir.bound.transfer == want);
    CHECK(ir.bound.policyTransfer == Transfer::Push);
    std::string t = toText(ir);
    bool noted = t.find("transfer pull (policy: push; push is derived for AllGather, ReduceScatter, AllReduce, "
                        "AllToAll only)") != std::string::npos;
    CHECK(noted == !derivable);
    CHECK(toJson(ir)["bound"]["policyTransfer"] == "push");
    CHECK(toJson(ir)["bound"].contains("transferNote") == !derivable);
  }
  // Push for world 2 only: the other world sizes still derive pull.
  Policy p = test::testPolicy();
  p.world[2].throughput.transfer = Transfer::Push;
  CHECK(lower(*test::collectiveOf(Kind::Broadcast), p, 2).throughput.transfer == Transfer::Pull);
  CHECK_NOTHROW(lower(*test::collectiveOf(Kind::Broadcast), p, 3));
  CHECK(lower(*test::collectiveOf(Kind::AllReduce), p, 2).throughput.transfer == Transfer::Push);
  CHECK(lower(*test::collectiveOf(Kind::AllReduce), p, 3).throughput.transfer == Transfer::Pull);
}

TEST_CASE("push: simulator on all push collectives x ranks x sizes", "[push][simulate]") {
  for (Kind k : test::pushKinds())
    for (int n : {2, 3, 4, 5, 8}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), test::pushPolicy(), n);
      for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(2 * n + 1), uint64_t(16 * n + 53)}) {
        CallArgs a = argsFor(k, n, count, uint64_t(n + count));
        Sizes s = computeSizes(k, n, a);
        Geometry g = simGeometry(ir, s);
        REQUIRE(g.push);
        SimOptions o;
        o.seed = uint64_t(n * 1000 + count);
        SimResult r = simulate(ir, ir.throughput, a, g, o);
        INFO(toString(k) << " n=" << n << " count=" << count << "\n" << r.report.text());
        CHECK(r.report.ok());
        CHECK(r.launched == (count != 0));
        if (count == uint64_t(16 * n + 53)) CHECK(g.cpp > g.slots); // slots of a region are reused
      }
    }
}

TEST_CASE("push: many seeds on AllReduce with more CTAs and calls", "[push][simulate]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::pushPolicy(), 4);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CallArgs a = argsFor(Kind::AllReduce, 4, 61, seed);
    Sizes s = computeSizes(Kind::AllReduce, 4, a);
    SimOptions o;
    o.seed = seed;
    o.calls = 4;
    o.maxCtas = 3;
    SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), o);
    INFO("seed " << seed << "\n" << r.report.text());
    CHECK(r.report.ok());
  }
}

TEST_CASE("push, sliced chunks: a release without the fence is a race in the simulator and a verifier finding", "[push]") {
  CollectiveIR ir = variant(Kind::AllGather, 3, PushCtas::Sliced);
  Op *n = findOp(ir, [](const Op &o) { return o.kind == OpKind::Notify && o.sig == Sig::STAGED; });
  REQUIRE(n);
  REQUIRE(n->fence);
  n->fence = false;
  // 3 CTAs and 64-byte data chunks: every CTA writes part of a chunk.
  CallArgs a = argsFor(Kind::AllGather, 3, 400, 1);
  Sizes s = computeSizes(Kind::AllGather, 3, a);
  Geometry g = computeGeometry(ir, s, 64, 2 * 2 * 64);
  bool race = false;
  for (uint64_t seed = 1; seed <= 10 && !race; ++seed) {
    SimOptions o;
    o.seed = seed;
    o.maxCtas = 3;
    SimResult r = simulate(ir, ir.throughput, a, g, o);
    for (auto &f : r.report.errors) race |= f.rule == "race" && f.message.find("fence.acq_rel.sys") != std::string::npos;
  }
  CHECK(race);
  Report v = verify(ir);
  REQUIRE(!v.ok());
  CHECK(v.errors[0].rule == "fence");
  CHECK(v.errors[0].ops == std::vector<int>{n->id});
}

TEST_CASE("push: a consumer reading before its STAGED wait is a race", "[push]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllToAll), test::pushPolicy(), 3);
  auto &body = ir.throughput.roles[1].body[0].body; // consume loop: own copy, wait, copy, ...
  REQUIRE(body.size() >= 3);
  REQUIRE(body[1].op.kind == OpKind::Wait);
  std::swap(body[1], body[2]);
  CallArgs a = argsFor(Kind::AllToAll, 3, 40, 1);
  Sizes s = computeSizes(Kind::AllToAll, 3, a);
  bool race = false;
  for (uint64_t seed = 1; seed <= 5 && !race; ++seed) {
    SimOptions o;
    o.seed = seed;
    SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), o);
    for (auto &f : r.report.errors) race |= f.rule == "race" && f.message.find("read-before-release") != std::string::npos;
  }
  CHECK(race);
  Report v = verify(ir);
  bool acquire = false;
  for (auto &f : v.errors) acquire |= f.rule == "acquire";
  CHECK(acquire);
}

TEST_CASE("push: a remote write before its CONSUMED wait breaks slot reuse", "[push]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::ReduceScatter), test::pushPolicy(), 3);
  auto &body = ir.throughput.roles[0].body[0].body; // stage loop: wait CONSUMED, copy, ...
  REQUIRE(body[0].op.kind == OpKind::Wait);
  REQUIRE(body[0].op.sig == Sig::CONSUMED);
  std::swap(body[0], body[1]);
  Report v = verify(ir);
  bool reuse = false;
  for (auto &f : v.errors) reuse |= f.rule == "slot-reuse" && f.message.find("of rank") != std::string::npos;
  INFO(v.text());
  CHECK(reuse);
  CHECK(!simulateSeeds(ir, 200, 5).ok());
}

TEST_CASE("push: every single notify/wait/fence deletion is caught", "[push][mutation]") {
  for (Kind k : test::pushKinds())
    for (int n : {2, 3, 8}) {
      // derive's scheme (no fence mutants: one CTA releases its own writes)
      // and the sliced one (each last-arriver fence dropped is caught).
      CollectiveIR ir = variant(k, n, PushCtas::Sliced);
      auto ms = mutate(ir, 2);
      int fences = 0;
      for (auto &m : ms) {
        fences += m.fenceOnly;
        INFO(toString(k) << " n=" << n << " " << m.program << ": %" << m.opId << " '" << m.opText << "'\n"
                         << m.by << ": " << m.message);
        CHECK(m.caught);
        CHECK(m.namesOp);
      }
      CHECK(fences == (k == Kind::AllReduce ? 2 : 1));
    }
}

TEST_CASE("push: the simulator alone catches every deleted wait and notify", "[push][mutation]") {
  // Not only the verifier's pairing rule: each mutant also fails at run time.
  for (Kind k : test::pushKinds()) {
    CollectiveIR ir = lower(*test::collectiveOf(k), test::pushPolicy(), 3);
    std::vector<int> ids;
    for (auto &r : ir.throughput.roles)
      forEachOp(r.body, [&](const Op &o) {
        if (o.kind == OpKind::Notify || o.kind == OpKind::Wait) ids.push_back(o.id);
      });
    for (int id : ids) {
      CollectiveIR m = withoutOp(ir, id);
      INFO(toString(k) << " without %" << id);
      CHECK(!simulateSeeds(m, 300, 4).ok());
    }
  }
}


TEST_CASE("push, both CTA schemes: text, verifier, simulator and mutations", "[push][percta]") {
  CollectiveIR ar = variant(Kind::AllReduce, 4, PushCtas::PerChunk);
  std::string t = toText(ar);
  INFO(t);
  CHECK(t.find("for c in 0..cpp-1, k in r+1..r-1 (mod n), step j on worker j mod workers {") != std::string::npos);
  CHECK(t.find("arrive.acq_rel") == std::string::npos);
  CHECK(t.find("[last arriver]") == std::string::npos);
  for (PushCtas pc : {PushCtas::PerChunk, PushCtas::Sliced})
  for (Kind k : test::pushKinds())
    for (int n : {2, 3, 4, 5, 8}) {
      CollectiveIR ir = variant(k, n, pc);
      Report v = verify(ir);
      INFO(toString(k) << " n=" << n << (pc == PushCtas::Sliced ? " sliced" : " per chunk") << "\n" << v.text());
      CHECK(v.ok());
      for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(2 * n + 1), uint64_t(16 * n + 53)}) {
        CallArgs a = argsFor(k, n, count, uint64_t(n + count));
        Sizes s = computeSizes(k, n, a);
        for (int ctas : {2, 3}) {
          SimOptions o;
          o.seed = uint64_t(n * 1000 + count + ctas);
          o.maxCtas = ctas;
          SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), o);
          INFO("count=" << count << " ctas=" << ctas << "\n" << r.report.text());
          CHECK(r.report.ok());
        }
      }
    }
  for (Kind k : test::pushKinds()) {
    CollectiveIR ir = variant(k, 3, PushCtas::PerChunk);
    for (auto &m : mutate(ir, 2)) {
      if (m.program != "throughput") continue;
      INFO(toString(k) << ": %" << m.opId << " '" << m.opText << "' " << m.by << ": " << m.message);
      CHECK(m.caught);
      CHECK(m.namesOp);
    }
  }
}

TEST_CASE("push: reading another rank's staging is a locality finding", "[push]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllToAll), test::pushPolicy(), 3);
  Op *rd = findOp(ir, [](const Op &o) { return o.kind == OpKind::Copy && o.src.buf == Buf::S; });
  REQUIRE(rd);
  rd->src.owner = RankRef::P; // S_p[p][..]: p's memory, read remotely
  rd->src.region = RankRef::R;
  Report v = verify(ir);
  bool found = false;
  for (auto &f : v.errors) found |= f.rule == "locality" && f.message.find("push program reads locally") != std::string::npos;
  INFO(v.text());
  CHECK(found);
}

TEST_CASE("push: remote writes into a rank the writer never hears from break the cross-call chain", "[push]") {
  // Only the stage role, without its notify: rank r rewrites k's half in
  // call e+2 with nothing ordering it after k's call e.
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::pushPolicy(), 3);
  ir.throughput.roles.resize(1);
  Op *n = findOp(ir, [](const Op &o) { return o.kind == OpKind::Notify; });
  REQUIRE(n);
  ir = withoutOp(ir, n->id);
  CallArgs a = argsFor(Kind::AllGather, 3, 1, 1);
  Sizes s = computeSizes(Kind::AllGather, 3, a);
  Report v = verifyInstance(instantiate(ir, ir.throughput, s, simGeometry(ir, s), 2));
  INFO(v.text());
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].rule == "cross-call");
  CHECK(v.errors[0].message.find("copy.remote_write") != std::string::npos);
}
