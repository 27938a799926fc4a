/// @file SimulatorTest.cpp
/// @brief The simulator runs both programs of all eleven collectives for
/// 2, 3, 4, 5 and 8 ranks on sizes 0, 1 element, counts not divisible by n
/// and sizes larger than the (tiny) staging capacity, over 3 consecutive
/// calls, against the independent reference.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Pipeline.h"
#include "ir/Simulator.h"

using namespace purlin;
using namespace purlin::ir;

namespace {
/// Element counts per test size, in the collective's `count` convention.
std::vector<std::pair<std::string, uint64_t>> counts(int n) {
  return {{"0", 0}, {"1 element", 1}, {"not divisible by n", uint64_t(2 * n + 1)},
          {"larger than staging", uint64_t(16 * n + 53)}};
}

CallArgs argsFor(Kind k, int n, uint64_t count, uint64_t seed) {
  CallArgs a;
  a.elemSize = reducesKind(k) ? 4 : 1;
  a.count = count;
  a.root = int(seed % uint64_t(n));
  for (int q = 0; q < n; ++q) a.counts.push_back(count == 0 ? 0 : (q % 3 == 1 ? 0 : count + uint64_t(q) % 3));
  a.matrix.assign(n, std::vector<uint64_t>(n, 0));
  for (int p = 0; p < n; ++p)
    for (int q = 0; q < n; ++q) a.matrix[p][q] = count == 0 ? 0 : ((p + 2 * q) % 5 == 1 ? 0 : count + uint64_t(p + q) % 4);
  return a;
}
} // namespace

TEST_CASE("simulator: all collectives x ranks x sizes, both programs", "[simulate]") {
  for (Kind k : allKinds())
    for (int n : {2, 3, 4, 5, 8}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), n);
      for (auto &[label, count] : counts(n))
        for (const Program *p : {&ir.latency, &ir.throughput}) {
          CallArgs a = argsFor(k, n, count, uint64_t(n + count));
          Sizes s = computeSizes(k, n, a);
          Geometry g = simGeometry(ir, s);
          SimOptions o;
          o.seed = uint64_t(n * 1000 + count);
          SimResult r = simulate(ir, *p, a, g, o);
          INFO(toString(k) << " n=" << n << " " << label << " " << toString(p->regime) << "\n" << r.report.text());
          CHECK(r.report.ok());
          CHECK(r.launched == (count != 0));
          if (label == "larger than staging" && p->regime == Regime::Throughput)
            CHECK(g.cpp > g.slots / n);
        }
    }
}

TEST_CASE("simulator: many seeds on the composed AllReduce with cyclic staging", "[simulate]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllReduce), test::testPolicy(), 4);
  for (uint64_t seed = 1; seed <= 30; ++seed) {
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

TEST_CASE("simulator: a program that reads before the release is reported as a race", "[simulate]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 3);
  // Move the STAGED wait of the consume role after its copy.
  auto &body = ir.throughput.roles[1].body[1].body; // the loop after the own copy
  REQUIRE(body[0].op.kind == OpKind::Wait);
  std::swap(body[0], body[1]);
  CallArgs a = argsFor(Kind::AllGather, 3, 40, 1);
  Sizes s = computeSizes(Kind::AllGather, 3, a);
  bool race = false;
  for (uint64_t seed = 1; seed <= 5 && !race; ++seed) {
    SimOptions o;
    o.seed = seed;
    SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), o);
    for (auto &f : r.report.errors) race |= f.rule == "race" && f.message.find("read-before-release") != std::string::npos;
  }
  CHECK(race);
}

TEST_CASE("simulator: an exhausted step budget is not called a deadlock", "[simulate]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), 3);
  CallArgs a = argsFor(Kind::AllGather, 3, 64, 1);
  Sizes s = computeSizes(Kind::AllGather, 3, a);
  SimOptions o;
  o.maxSteps = 50;
  SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), o);
  REQUIRE(!r.report.ok());
  CHECK(r.report.errors[0].rule == "step-budget");
  CHECK(r.report.errors[0].message == "step budget exhausted (not a deadlock): 50 steps");
  o.maxSteps = SimOptions{}.maxSteps;
  CHECK(simulate(ir, ir.throughput, a, simGeometry(ir, s), o).report.ok());
}

TEST_CASE("simulator: a missing notify is a deadlock naming the waiting op", "[simulate]") {
  CollectiveIR ir = lower(*test::collectiveOf(Kind::ReduceScatter), test::testPolicy(), 3);
  auto &body = ir.throughput.roles[0].body[0].body; // stage loop
  int notifyId = -1;
  for (size_t i = 0; i < body.size(); ++i)
    if (body[i].op.kind == OpKind::Notify) notifyId = body[i].op.id, body.erase(body.begin() + long(i)), i = body.size();
  REQUIRE(notifyId >= 0);
  CallArgs a = argsFor(Kind::ReduceScatter, 3, 5, 1);
  Sizes s = computeSizes(Kind::ReduceScatter, 3, a);
  SimResult r = simulate(ir, ir.throughput, a, simGeometry(ir, s), SimOptions{});
  REQUIRE(!r.report.ok());
  CHECK(r.report.errors[0].rule == "deadlock");
  CHECK(r.report.errors[0].message.find("wait.acquire STAGED") != std::string::npos);
  CHECK(r.report.errors[0].message.find("expected >= ") != std::string::npos);
}

namespace {
/// Removes the first statement (depth first) of kind `k` and, if `andNext`,
/// the statement after it; returns whether one was found.
bool eraseFirst(std::vector<Stmt> &body, OpKind k, bool andNext) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i].isLoop && body[i].op.kind == k) {
      body.erase(body.begin() + long(i), body.begin() + long(andNext && i + 1 < body.size() ? i + 2 : i + 1));
      return true;
    }
    if (body[i].isLoop && eraseFirst(body[i].body, k, andNext)) return true;
  }
  return false;
}
/// Duplicates the first statement (depth first) of kind `k`.
bool duplicateFirst(std::vector<Stmt> &body, OpKind k) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i].isLoop && body[i].op.kind == k) {
      body.insert(body.begin() + long(i), body[i]);
      return true;
    }
    if (body[i].isLoop && duplicateFirst(body[i].body, k)) return true;
  }
  return false;
}
bool reports(const SimResult &r, const std::string &rule, const std::string &text) {
  for (auto &f : r.report.errors)
    if (f.rule == rule && f.message.find(text) != std::string::npos) return true;
  return false;
}
} // namespace

TEST_CASE("simulator: full/empty packets: a word never polled, or put twice, is reported", "[simulate]") {
  for (int n : {2, 3}) {
    CallArgs a = argsFor(Kind::AllGather, n, 40, 1);
    Sizes s = computeSizes(Kind::AllGather, n, a);
    {
      // Without the poll (and the copy that reads its payload) the peer's
      // words stay full at the end of the call: the next use of the half
      // would take them for its own.
      CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), n);
      REQUIRE(eraseFirst(ir.latency.roles[0].body, OpKind::PacketPoll, true));
      SimResult r = simulate(ir, ir.latency, a, simGeometry(ir, s), SimOptions{});
      INFO(r.report.text());
      CHECK(reports(r, "race", "still full (put, never polled)"));
    }
    {
      // A second put of the same words before the reader emptied them.
      CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), n);
      REQUIRE(duplicateFirst(ir.latency.roles[0].body, OpKind::PacketPut));
      SimResult r = simulate(ir, ir.latency, a, simGeometry(ir, s), SimOptions{});
      INFO(r.report.text());
      CHECK(reports(r, "race", "still full with call 1's payload (not yet polled)"));
    }
    {
      // The unmodified program empties every word it was sent.
      CollectiveIR ir = lower(*test::collectiveOf(Kind::AllGather), test::testPolicy(), n);
      CHECK(simulate(ir, ir.latency, a, simGeometry(ir, s), SimOptions{}).report.ok());
    }
  }
}
