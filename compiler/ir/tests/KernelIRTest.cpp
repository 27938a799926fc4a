/// @file KernelIRTest.cpp
/// @brief The kernel IR of the latency program (KernelIR.h,
/// lowerPacketWarps): every SNAC op lowered once, in the IR's order, the
/// recorded lowering decisions choosing the statements, and ops without a
/// packet-warp form refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <set>

#include "Fixtures.h"
#include "ir/KernelIR.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::ir;
using kernel::StmtKind;

namespace {
/// Every op id a kernel IR statement (or the DONE acks) implements.
void implemented(const std::vector<kernel::Stmt> &body, std::set<int> &ids) {
  for (const kernel::Stmt &s : body) {
    if (s.op >= 0) ids.insert(s.op);
    if (s.operandOf >= 0) ids.insert(s.operandOf);
    if (s.use >= 0) ids.insert(s.use);
    implemented(s.body, ids);
    implemented(s.orElse, ids);
  }
}
/// The statements of `body`, depth first, by kind.
void kinds(const std::vector<kernel::Stmt> &body, std::vector<StmtKind> &out) {
  for (const kernel::Stmt &s : body) {
    out.push_back(s.kind);
    kinds(s.body, out);
    kinds(s.orElse, out);
  }
}
std::vector<StmtKind> kindsOf(const kernel::PacketWarps &k) {
  std::vector<StmtKind> out;
  kinds(k.group, out);
  return out;
}
bool has(const std::vector<StmtKind> &v, StmtKind k) { return std::find(v.begin(), v.end(), k) != v.end(); }
} // namespace

TEST_CASE("kernel IR: every op of every latency program lowered once, in the IR's order", "[kernel]") {
  for (Kind k : allKinds()) {
    for (int n : {2, 5}) {
      INFO(toString(k) << " n = " << n);
      const CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), n);
      const bool variable = isVariable(ir.in) || isVariable(ir.out);
      const kernel::PacketWarps kw = lowerPacketWarps(ir.latency, variable);
      std::vector<int> ids;
      forEachOp(ir.latency.roles[0].body, [&](const Op &o) { ids.push_back(o.id); });
      CHECK(kw.ops == ids);
      std::set<int> done;
      implemented(kw.group, done);
      if (kw.hasDoneAcks) done.insert({kw.acks.arrive, kw.acks.notify, kw.acks.wait});
      CHECK(done == std::set<int>(ids.begin(), ids.end()));
      CHECK(kw.reduces == reducesKind(k));
      CHECK(kw.rooted == isRootedKind(k));
      CHECK(kw.hasDoneAcks == isRootedKind(k));
      CHECK(kw.variable == variable);
      const auto ks = kindsOf(kw);
      // Every program reads the epoch and moves words both ways.
      CHECK(has(ks, StmtKind::ReadEpoch));
      CHECK((has(ks, StmtKind::Put) || has(ks, StmtKind::PutToPeers)));
      CHECK((has(ks, StmtKind::Poll) || has(ks, StmtKind::GatherRanks)));
      // The two-rank form exactly where a reduction is.
      CHECK(has(ks, StmtKind::TwoRanks) == reducesKind(k));
      CHECK(has(ks, StmtKind::FlowLength) == variable);
      const std::string text = kernel::toText(kw);
      CHECK(text.find("kernel latency: packet warps") == 0);
      for (int id : ids) CHECK(text.find("%" + std::to_string(id)) != std::string::npos);
    }
  }
}

TEST_CASE("kernel IR: the recorded lowering decisions choose the statements", "[kernel]") {
  const CollectiveIR ar = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  const kernel::PacketWarps shared = lowerPacketWarps(ar.latency, false);
  CHECK(shared.sharedLoad);
  CHECK_FALSE(shared.triggerOnRead);
  CHECK(has(kindsOf(shared), StmtKind::PutToPeers));
  CHECK(shared.bindings.empty());  // the put's load is the reduction's own operand
  // Without shareLoads' record: a load per peer, and the own operand bound
  // and loaded right after the put.
  CollectiveIR apart = ar;
  for (Stmt &s : apart.latency.roles[0].body)
    if (s.isLoop) s.body.back().op.reusesLoadOf = -1;
  const kernel::PacketWarps sep = lowerPacketWarps(apart.latency, false);
  CHECK_FALSE(sep.sharedLoad);
  CHECK(sep.triggerOnRead);
  REQUIRE(sep.bindings.size() == 1);
  CHECK(sep.bindings[0].name == "own");
  REQUIRE(sep.group.size() >= 2);
  CHECK(sep.group[0].kind == StmtKind::PeerLoop);
  CHECK(sep.group[1].kind == StmtKind::Load);
  CHECK(sep.group[1].bound);
  CHECK(kernel::toText(sep) != kernel::toText(shared));
  // Without specializeTwoRanks' record there is no n == 2 form to lower to.
  CollectiveIR general = ar;
  for (Stmt &s : general.latency.roles[0].body)
    if (s.isLoop) s.twoRankForm = false;
  try {
    (void)lowerPacketWarps(general.latency, false);
    FAIL("lowered without the two-rank record");
  } catch (const IRError &e) {
    CHECK(e.message.find("specializeTwoRanks") != std::string::npos);
  }
}

TEST_CASE("kernel IR: the IR's order is the statements' order; ops without a form are refused", "[kernel]") {
  const CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 3);
  CollectiveIR early = ag;
  std::swap(early.latency.roles[0].body[0], early.latency.roles[0].body[1]);
  const kernel::PacketWarps a = lowerPacketWarps(ag.latency, false), b = lowerPacketWarps(early.latency, false);
  // The put's loop, the own copy (a load and a store), the copy loop.
  REQUIRE(a.group.size() == 4);
  REQUIRE(b.group.size() == 4);
  CHECK(a.group[0].kind == StmtKind::PeerLoop);
  CHECK(a.group[1].kind == StmtKind::Load);
  CHECK(a.group[2].kind == StmtKind::StoreUnlessInPlace);
  CHECK(b.group[0].kind == StmtKind::Load);  // swapped in the IR: swapped here
  CHECK(b.group[1].kind == StmtKind::StoreUnlessInPlace);
  CHECK(b.group[2].kind == StmtKind::PeerLoop);
  CHECK(b.group[3].kind == StmtKind::PeerLoop);
  // A put in reverse ring order has no packet-warp form: refused by name.
  CollectiveIR rev = ag;
  rev.latency.roles[0].body[0].op.domain = Domain::RevRing;
  try {
    (void)lowerPacketWarps(rev.latency, false);
    FAIL("lowered a put in reverse ring order");
  } catch (const IRError &e) {
    CHECK(e.message.find("latency program: %0 packet.put") == 0);
  }
  // A rooted program has no V form.
  const CollectiveIR sc = lower(*test::collectiveOf(Kind::Scatter), test::testPolicy(), 3);
  CHECK_THROWS_AS(lowerPacketWarps(sc.latency, true), IRError);
}

TEST_CASE("kernel IR: --print-ir-after-all ends with the lowered latency program", "[kernel]") {
  std::ostringstream all;
  PipelineOptions o;
  o.printAfterAll = &all;
  (void)lower(*test::collectiveOf(Kind::Broadcast), test::testPolicy(), 4, o);
  const std::string text = all.str();
  const auto at = text.find("// IR after lowerPacketWarps\n");
  REQUIRE(at != std::string::npos);
  CHECK(text.find("// IR after verify\n") < at);
  CHECK(text.find("kernel latency: packet warps", at) != std::string::npos);
  CHECK(text.find("on ranks != root {", at) != std::string::npos);
  CHECK(text.find("epoch.read (on the ranks that put nothing)", at) != std::string::npos);
  CHECK(text.find("done: on ranks != root every CTA arrives", at) != std::string::npos);
}

TEST_CASE("kernel IR: every direct program lowered to direct CTAs, op after op", "[kernel][direct]") {
  int lowered = 0;
  for (Kind k : allKinds()) {
    const CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), 2);
    if (!ir.hasDirect()) continue;
    INFO(toString(k));
    ++lowered;
    const kernel::DirectCtas kd = lowerDirectCtas(ir.direct);
    std::vector<int> ids;
    forEachOp(ir.direct.roles[0].body, [&](const Op &o) { ids.push_back(o.id); });
    CHECK(kd.ops == ids);
    std::set<int> done;
    implemented(kd.body, done);
    std::function<void(const std::vector<kernel::Stmt> &)> fused = [&](const std::vector<kernel::Stmt> &b) {
      for (const kernel::Stmt &s : b) {
        if (s.fusedBack >= 0) done.insert(s.fusedBack);
        fused(s.body);
      }
    };
    fused(kd.body);
    CHECK(done == std::set<int>(ids.begin(), ids.end()));
    CHECK(kd.reduces == reducesKind(k));
    REQUIRE_FALSE(kd.body.empty());
    CHECK(kd.body[0].kind == StmtKind::Arrive);
    const std::vector<StmtKind> ks = [&] {
      std::vector<StmtKind> out;
      kinds(kd.body, out);
      return out;
    }();
    // A reduction: the two-rank rounds; a copy: one copy of the slice.
    CHECK(has(ks, StmtKind::Rounds) == reducesKind(k));
    CHECK((has(ks, StmtKind::CopyToMany) || has(ks, StmtKind::CopyPairs)) == !reducesKind(k));
    CHECK(has(ks, StmtKind::AfterRounds) == (k == Kind::AllReduce));
    const std::string text = kernel::toText(kd);
    CHECK(text.find("kernel direct: direct CTAs") == 0);
  }
  CHECK(lowered >= 4);  // AllGather, AllToAll, ReduceScatter, AllReduce
}

TEST_CASE("kernel IR: direct CTAs refuse a wait nothing notifies and an unfused write-back", "[kernel][direct]") {
  const CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 2);
  REQUIRE(ag.hasDirect());
  CollectiveIR mute = ag;
  auto &body = mute.direct.roles[0].body;
  for (std::size_t i = 0; i < body.size(); ++i)
    if (!body[i].isLoop && body[i].op.kind == OpKind::Notify && body[i].op.sig == Sig::PUT) {
      body.erase(body.begin() + long(i));
      break;
    }
  try {
    (void)lowerDirectCtas(mute.direct);
    FAIL("lowered a wait on PUT that no op notifies");
  } catch (const IRError &e) {
    CHECK(e.message.find("no op of the role notifies PUT") != std::string::npos);
  }
  const CollectiveIR ar = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  REQUIRE(ar.hasDirect());
  CollectiveIR unfused = ar;
  forEachOp(unfused.direct.roles[0].body, [&](Op &o) { o.fusedInto = -1; });
  try {
    (void)lowerDirectCtas(unfused.direct);
    FAIL("lowered a write-back the IR does not record as fused");
  } catch (const IRError &e) {
    CHECK(e.message.find("fuseWriteBack") != std::string::npos);
  }
}

TEST_CASE("kernel IR: every copy-engine form lowered to a host graph, op after op", "[kernel][engine]") {
  int lowered = 0;
  for (Kind k : allKinds()) {
    const CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), 2);
    if (!ir.hasEngine()) continue;
    INFO(toString(k));
    ++lowered;
    const kernel::HostGraph g = lowerHostGraph(ir.engine);
    std::vector<int> ids;
    forEachOp(ir.engine.roles[0].body, [&](const Op &o) { ids.push_back(o.id); });
    CHECK(g.ops == ids);
    std::set<int> done;
    implemented(g.body, done);
    CHECK(done == std::set<int>(ids.begin(), ids.end()));
    CHECK(g.reduces == reducesKind(k));
    std::vector<StmtKind> ks;
    kinds(g.body, ks);
    CHECK(has(ks, StmtKind::GraphGuard) == reducesKind(k));
    CHECK(has(ks, StmtKind::GraphKernel));
    CHECK(has(ks, StmtKind::GraphCopy));
    CHECK(has(ks, StmtKind::NodeReduce) == reducesKind(k));
    // The last kernel node ends the call.
    const kernel::Stmt *last = nullptr;
    for (const kernel::Stmt &s : g.body)
      if (s.kind == StmtKind::GraphKernel) last = &s;
    REQUIRE(last);
    CHECK(last->endsCall);
    CHECK(kernel::toText(g).find("kernel copy engine: host graph") == 0);
  }
  CHECK(lowered >= 1);
  // A transfer over a rank loop the graph cannot print is refused by name.
  const CollectiveIR ar = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  REQUIRE(ar.hasEngine());
  CollectiveIR odd = ar;
  bool changed = false;
  forEachOp(odd.engine.roles[0].body, [&](Op &o) {
    if (!changed && o.kind == OpKind::Copy && o.host) o.domain = Domain::All, changed = true;
  });
  REQUIRE(changed);
  try {
    (void)lowerHostGraph(odd.engine);
    FAIL("lowered a copy over every rank");
  } catch (const IRError &e) {
    CHECK(e.message.find("direct program (copy engine): %") == 0);
    CHECK(e.message.find("a rank loop over") != std::string::npos);
  }
}

TEST_CASE("kernel IR: direct CTAs hold a well-formed exchange or nothing", "[kernel][direct]") {
  const CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 2);
  const CollectiveIR ar = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 2);
  REQUIRE(ag.hasDirect());
  REQUIRE(ar.hasDirect());
  auto refused = [](const Program &p, const std::string &why) {
    try {
      (void)lowerDirectCtas(p);
    } catch (const IRError &e) {
      INFO(e.message);
      return e.message.find(why) != std::string::npos;
    }
    return false;
  };
  auto erase = [](Program &p, OpKind kind, Sig sig, bool inLoop) {
    auto &body = p.roles[0].body;
    for (auto it = body.begin(); it != body.end(); ++it) {
      if (inLoop && it->isLoop) {
        for (auto jt = it->body.begin(); jt != it->body.end(); ++jt)
          if (jt->op.kind == kind && jt->op.sig == sig) {
            it->body.erase(jt);
            return true;
          }
      }
      if (!inLoop && !it->isLoop && it->op.kind == kind && it->op.sig == sig) {
        body.erase(it);
        return true;
      }
    }
    return false;
  };
  // AllGather without the wait for its PUT.
  Program noWait = ag.direct;
  REQUIRE(erase(noWait, OpKind::Wait, Sig::PUT, false));
  CHECK(refused(noWait, "PUT is notified but no op of the role waits for it"));
  // AllReduce without the last BACK wait after its rounds.
  Program noBack = ar.direct;
  REQUIRE(erase(noBack, OpKind::Wait, Sig::BACK, false));
  CHECK(refused(noBack, "BACK is notified but no op of the role waits for it"));
  // A reduction that does not wait for the peer's PUT of its round.
  Program early = ar.direct;
  REQUIRE(erase(early, OpKind::Wait, Sig::PUT, true));
  CHECK(refused(early, "the reduction of round j follows the wait for the peer's PUT of it"));
  // An arrive notify with a fence, and a notify of another signal.
  Program fenced = ag.direct;
  fenced.roles[0].body[0].op.fence = true;
  CHECK(refused(fenced, "the arrive notify has no data to publish"));
  Program done = ag.direct;
  for (auto &st : done.roles[0].body)
    if (!st.isLoop && st.op.sig == Sig::PUT) st.op.sig = Sig::DONE;
  CHECK(refused(done, "no direct-CTA form for a notify or wait of DONE"));
  // Only the arrive pair: nothing moves.
  Program idle = ag.direct;
  idle.roles[0].body.resize(2);
  CHECK(refused(idle, "the role arrives, then moves data"));
  // The well-formed ones lower.
  CHECK_NOTHROW(lowerDirectCtas(ag.direct));
  CHECK_NOTHROW(lowerDirectCtas(ar.direct));
}

TEST_CASE("kernel IR: every throughput program lowered to its roles, op after op", "[kernel][throughput]") {
  // The ops a role's statements implement, in statement order (a loop
  // statement only names its first op for errors: not counted).
  std::function<void(const std::vector<kernel::Stmt> &, std::vector<int> &)> cited =
      [&](const std::vector<kernel::Stmt> &b, std::vector<int> &out) {
        for (const kernel::Stmt &s : b) {
          if (s.op >= 0 && s.kind != StmtKind::ChunkLoop && s.kind != StmtKind::PeerSteps) out.push_back(s.op);
          cited(s.body, out);
        }
      };
  int pushes = 0, pulls = 0;
  for (Kind k : allKinds()) {
    for (Transfer t : {Transfer::Pull, Transfer::Push}) {
      Policy pol = test::testPolicy();
      for (int m = kMinWorld; m <= kMaxWorld; ++m) pol.world[m].throughput.transfer = t;
      const CollectiveIR ir = lower(*test::collectiveOf(k), pol, 4);
      INFO(toString(k) << (ir.throughput.transfer == Transfer::Push ? " push" : " pull"));
      const kernel::ThroughputRoles tr = lowerThroughputRoles(ir.throughput);
      (tr.push ? pushes : pulls) += 1;
      CHECK(tr.rooted == isRootedKind(k));
      REQUIRE(tr.roles.size() == ir.throughput.roles.size());
      for (std::size_t i = 0; i < tr.roles.size(); ++i) {
        const kernel::RoleKernel &role = tr.roles[i];
        std::vector<int> ids, got;
        forEachOp(ir.throughput.roles[i].body, [&](const Op &o) { ids.push_back(o.id); });
        cited(role.body, got);
        CHECK(got == ids);  // every op once, in the IR's order
        std::vector<StmtKind> ks;
        kinds(role.body, ks);
        CHECK(has(ks, StmtKind::ChunkLoop));
        CHECK(has(ks, StmtKind::MoveData));
        // Slices count their last arriver; workers notify from their lane.
        CHECK(has(ks, StmtKind::ArriveCounter) == !tr.push);
        CHECK(has(ks, StmtKind::LaneNotify) == tr.push);
        CHECK(has(ks, StmtKind::RoleGuard) == (ir.throughput.roles[i].runsOn != RunsOn::All));
      }
    }
  }
  CHECK(pushes >= 4);  // AllGather, ReduceScatter, AllReduce, AllToAll push
  CHECK(pulls >= 11);
  // An arrive in a push role (workers move whole chunks) is refused by name.
  Policy push = test::testPolicy();
  for (int m = kMinWorld; m <= kMaxWorld; ++m) push.world[m].throughput.transfer = Transfer::Push;
  const CollectiveIR ag = lower(*test::collectiveOf(Kind::AllGather), push, 4);
  REQUIRE(ag.throughput.transfer == Transfer::Push);
  CollectiveIR odd = ag;
  bool changed = false;
  forEachOp(odd.throughput.roles[0].body, [&](Op &o) {
    if (!changed && o.kind == OpKind::Notify) o.kind = OpKind::Arrive, changed = true;
  });
  REQUIRE(changed);
  try {
    (void)lowerThroughputRoles(odd.throughput);
    FAIL("lowered an arrive in a push role");
  } catch (const IRError &e) {
    CHECK(e.message.find("throughput program: %") == 0);
    CHECK(e.message.find("a worker moves whole chunks: no last-arriver counter") != std::string::npos);
  }
}
