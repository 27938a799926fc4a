/// @file EngineTest.cpp
/// @brief The direct program's copy-engine form (Program::engine;
/// docs/snac-protocol.md "Direct program"): derivation beside the kernel
/// form, host order and streams, engine chunks, edges resolved to the
/// latest record, verifier rules through edges, simulation against the
/// reference, and mutation testing (every notify/wait deletion is caught;
/// so is a missing flag reset).
#include <catch2/catch.hpp>

#include <functional>
#include <set>

#include "Fixtures.h"
#include "ir/DeriveDirect.h"
#include "ir/Mutation.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"
#include "ir/Simulator.h"

using namespace purlin;
using namespace purlin::ir;

namespace {

const std::vector<Kind> kKinds = {Kind::AllGather, Kind::AllToAll, Kind::ReduceScatter, Kind::AllReduce};

CollectiveIR lowered(Kind k, int n) { return lower(*test::collectiveOf(k), test::testPolicy(), n); }

/// Calls the copy-engine form runs: equal partitions (engineApplies).
CallArgs evenArgs(Kind k, int n, uint64_t elemsPerRank, uint64_t seed) {
  CallArgs a = argsForBytes(k, n, elemsPerRank * uint64_t(n) * (reducesKind(k) ? 4 : 1), seed);
  return a;
}

Report verifyEngine(const CollectiveIR &ir) {
  Report all;
  for (auto &sc : sampleCalls(ir, ir.n)) {
    if (!engineApplies(ir, sc.sizes)) continue;
    for (auto &f : verifyInstance(instantiate(ir, ir.engine, sc.sizes, sc.geo, 2)).errors) all.errors.push_back(f);
  }
  return all;
}

std::string simulateEngine(const CollectiveIR &ir, uint64_t seeds = 3) {
  for (uint64_t seed = 1; seed <= seeds; ++seed)
    for (uint64_t elems : {uint64_t(4), uint64_t(24), uint64_t(100)}) {
      CallArgs a = evenArgs(ir.kind, ir.n, elems, seed);
      Sizes s = computeSizes(ir.kind, ir.n, a);
      if (!engineApplies(ir, s)) continue;
      SimOptions o;
      o.seed = seed * 17 + elems;
      SimResult r = simulate(ir, ir.engine, a, simGeometry(ir, s), o);
      if (!r.report.ok()) return r.report.errors[0].rule + ": " + r.report.errors[0].message;
    }
  return "";
}

bool hasRule(const Report &r, const std::string &rule) {
  for (auto &f : r.errors)
    if (f.rule == rule) return true;
  return false;
}

/// Erases the first op of `body` (nested) matching `pred`.
template <class P> bool eraseFirst(std::vector<Stmt> &body, P pred) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      if (eraseFirst(body[i].body, pred)) return true;
    } else if (pred(body[i].op)) {
      body.erase(body.begin() + long(i));
      return true;
    }
  }
  return false;
}

} // namespace

TEST_CASE("engine: derived wherever the direct program is, one host role on two streams", "[engine]") {
  for (Kind k : allKinds())
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      INFO(toString(k) << " n=" << n);
      CollectiveIR ir = lowered(k, n);
      CHECK(ir.hasEngine() == ir.hasDirect());
      if (!ir.hasEngine()) continue;
      CHECK(ir.engine.engine);
      CHECK(ir.engine.regime == Regime::Direct);
      REQUIRE(ir.engine.roles.size() == 1);
      CHECK(ir.engine.roles[0].name == "host");
      CHECK(ir.bound.directEngineMinBytes() == kDirectDefaultEngineMinBytes);
      int kernels = 0, hostCopies = 0, branchOps = 0;
      std::function<void(const std::vector<Stmt> &)> walk = [&](const std::vector<Stmt> &b) {
        for (auto &s : b) {
          if (s.isLoop && !s.kernel.empty()) {
            ++kernels;
            forEachOp(s.body, [&](const Op &o) { CHECK_FALSE(o.host); });
          } else if (s.isLoop) {
            walk(s.body);
          } else {
            CHECK(s.op.host);
            hostCopies += s.op.kind == OpKind::Copy;
            branchOps += s.op.stream == Stream::Branch;
          }
        }
      };
      walk(ir.engine.roles[0].body);
      CHECK(kernels == (reducesKind(k) ? 3 : 2)); // arrive, (reduce,) finish
      CHECK(hostCopies == (k == Kind::ReduceScatter ? 1 : 2));
      CHECK(branchOps >= 3);
    }
  // The policy's direct = false turns both forms off.
  Policy p = test::testPolicy();
  p.world[2].direct.enabled = false;
  CollectiveIR off = lower(*test::collectiveOf(Kind::AllReduce), p, 2);
  CHECK_FALSE(off.hasEngine());
}

TEST_CASE("engine: a reduction's chunks are the runtime's engine chunks; each wait pairs with the latest record",
          "[engine]") {
  CollectiveIR ir = lowered(Kind::ReduceScatter, 2);
  CallArgs a = evenArgs(Kind::ReduceScatter, 2, 100, 1); // 400 B partitions
  Sizes s = computeSizes(ir.kind, 2, a);
  Geometry g = simGeometry(ir, s);
  Instance inst = instantiate(ir, ir.engine, s, g, 2);
  REQUIRE(inst.ranks[0].roles.size() == 1);
  REQUIRE(inst.ranks[0].roles[0].ctas.size() == 2); // stream, branch
  int chunks = engineChunkCount(false, 400, g);
  CHECK(chunks == int(snac::engineChunks(false, 400, 16)));
  CHECK(chunks >= 3);
  int reduces = 0, flags = 0;
  for (auto &op : inst.ranks[0].roles[0].ctas[0].ops) reduces += op.kind == OpKind::Reduce;
  for (auto &op : inst.ranks[0].roles[0].ctas[1].ops) flags += op.kind == OpKind::Notify && op.sym->sig == Sig::E_PUT;
  CHECK(reduces == chunks);
  CHECK(flags == chunks);
  // The fork event is recorded once per chunk plus once by the stream: every
  // stream wait names the record just before it in host order.
  std::set<uint32_t> records;
  for (auto &cta : inst.ranks[0].roles[0].ctas)
    for (auto &op : cta.ops)
      if (op.sym->sig == Sig::EDGE && op.kind == OpKind::Notify) CHECK(records.insert(op.index).second);
  for (auto &cta : inst.ranks[0].roles[0].ctas)
    for (auto &op : cta.ops)
      if (op.sym->sig == Sig::EDGE && op.kind == OpKind::Wait) CHECK(records.count(op.index) == 1);
  // Bytes of the chunks cover the partition in order.
  uint64_t done = 0;
  for (int c = 0; c < chunks; ++c) {
    CHECK(engineChunkBegin(false, 400, c, g) == done);
    done += engineChunkLen(false, 400, c, g);
  }
  CHECK(done == 400);
}

TEST_CASE("engine: verifier accepts and simulator runs the derived programs", "[engine][simulate]") {
  for (Kind k : kKinds)
    for (int n : {2, 3, 4}) {
      CollectiveIR ir = lowered(k, n);
      if (!ir.hasEngine()) continue;
      INFO(toString(k) << " n=" << n);
      CHECK(verifyEngine(ir).text() == "");
      CHECK(simulateEngine(ir) == "");
    }
}

TEST_CASE("engine: every notify/wait deletion is caught", "[engine][mutation]") {
  for (Kind k : kKinds) {
    CollectiveIR ir = lowered(k, 2);
    int engineMutants = 0;
    for (auto &m : mutate(ir, 2, true)) {
      if (m.program != "direct (copy engine)") continue;
      ++engineMutants;
      INFO(toString(k) << ": deleted %" << m.opId << " " << m.opText);
      CHECK(m.caught);
    }
    CHECK(engineMutants >= 4);
  }
}

TEST_CASE("engine: a missing flag reset, a copy before the fork edge and a wait on an unrecorded event are caught",
          "[engine]") {
  {
    CollectiveIR ir = lowered(Kind::ReduceScatter, 2);
    REQUIRE(eraseFirst(ir.engine.roles[0].body,
                       [](const Op &o) { return o.kind == OpKind::Reset && o.sig == Sig::E_PUT; }));
    CHECK(verifyEngine(ir).ok()); // a value protocol across calls: the simulator's part
    std::string first = simulateEngine(ir);
    CHECK(first != "");
    INFO(first);
  }
  {
    // The branch's wait on the fork edge gone: its pushes may precede the
    // arrive kernel's ARRIVED wait.
    CollectiveIR ir = lowered(Kind::AllReduce, 2);
    REQUIRE(eraseFirst(ir.engine.roles[0].body, [](const Op &o) {
      return o.sig == Sig::EDGE && o.kind == OpKind::Wait && o.stream == Stream::Branch;
    }));
    Report r = verifyEngine(ir);
    CHECK(hasRule(r, "arrival"));
    CHECK(hasRule(r, "pairing")); // the record has no wait any more
  }
  {
    // The stream's record of the reduced chunk gone: the branch waits on an
    // event never recorded before it in host order (a no-op wait in CUDA).
    CollectiveIR ir = lowered(Kind::AllReduce, 2);
    REQUIRE(eraseFirst(ir.engine.roles[0].body, [](const Op &o) {
      return o.sig == Sig::EDGE && o.kind == OpKind::Notify && o.event == Event::Chunk;
    }));
    Report r = verifyEngine(ir);
    CHECK(hasRule(r, "pairing"));
  }
}

TEST_CASE("engine: printed in host order with streams, kernels and engine chunks", "[engine][printer]") {
  CollectiveIR ir = lowered(Kind::AllReduce, 2);
  std::string t = toText(ir);
  CHECK(t.find("program direct, copy-engine form") != std::string::npos);
  CHECK(t.find("kernel arrive on stream (1 cta x 32 threads)") != std::string::npos);
  CHECK(t.find("for c in engine chunks of X_r[r]") != std::string::npos);
  CHECK(t.find("copy.engine O_k[k][chunk c] <- X_r[k][chunk c] for k in others(r) on branch") != std::string::npos);
  CHECK(t.find("memop.write E_PUT[c] -> rank k = 1 for k in others(r) on branch") != std::string::npos);
  CHECK(t.find("wait.acquire E_BACK[c] (from p) >= 1 for p in others(r)") != std::string::npos);
  CHECK(t.find("record chunk[c] on stream") != std::string::npos);
  CHECK(t.find("kernel finish on stream (1 cta x 32 threads); ends the call") != std::string::npos);
  CHECK(t.find("reset E_PUT[*] = 0") != std::string::npos);
}
