/// @file snac_latency_shape_test.cpp
/// @brief Unit tests of the latency program's launch shape (snac::latencyShape
/// and its use by makePlan): CTAs x threads grow with the payload, stay
/// within the policy's maxima and the per-CTA epoch slots, and are the same
/// on every rank.
#include <catch2/catch.hpp>

#include "plan_fixtures.h"

using namespace purlin;
using namespace purlin::snac;
using plantest::kAtomStages;
using plantest::makeExamplePlan;

namespace {
WorldConsts world(int ctas, int threads, int wpt) {
  WorldConsts w{std::size_t(8) << 20, ctas, threads, 8, 16, 8, 512, 2u << 20, false};
  w.latencySlotsPerThread = wpt;
  return w;
}
} // namespace

TEST_CASE("latencyShape: small payloads get one small CTA, larger ones spread over CTAs first") {
  int c = 0, t = 0;
  latencyShape(96, world(128, 512, 0), c, t);  // 1 KiB AllReduce: 3 groups of 32 slots, 1 per thread
  CHECK(c == 1);
  CHECK(t == 96);
  latencyShape(32, world(128, 512, 0), c, t);  // one group: one warp
  CHECK(c == 1);
  CHECK(t == 32);
  latencyShape(512, world(128, 512, 0), c, t);  // 16 groups: 2 x 256
  CHECK(c == 2);
  CHECK(t == 256);
  latencyShape(8192, world(128, 512, 0), c, t);  // 256 groups (126 KiB): 32 x 256
  CHECK(c == 32);
  CHECK(t == 256);
  latencyShape(65536, world(128, 512, 0), c, t);  // 2048 groups (1008 KiB): 128 x 512
  CHECK(c == 128);
  CHECK(t == 512);
  latencyShape(1u << 20, world(128, 512, 0), c, t);  // the maxima, 16 slots per thread
  CHECK(c == 128);
  CHECK(t == 512);
  latencyShape(8192, world(32, 512, 2), c, t);  // 2 slots per thread: 4096 threads = 16 x 256
  CHECK(c == 16);
  CHECK(t == 256);
  latencyShape(1u << 24, world(1000, 1024, 1), c, t);  // capped at the epoch slots
  CHECK(c == kMaxEpochSlots);
  CHECK(t == 1024);
  latencyShape(100, world(16, 48, 1), c, t);  // a policy maximum off a warp is rounded down to one
  CHECK(t == 32);
  CHECK(c == 4);
  latencyShape(100, world(16, 512, -1), c, t);  // fixed shape
  CHECK(c == 16);
  CHECK(t == 512);
}

TEST_CASE("latencyShape: enough threads for the payload, never above the maxima") {
  for (int wpt : {0, 1, 3}) {
    const WorldConsts w = world(24, 384, wpt);
    const std::size_t per = std::size_t(wpt > 0 ? wpt : kLatencySlotsPerThread);
    for (std::size_t slots = 1; slots < (std::size_t(1) << 22); slots = slots * 3 / 2 + 1) {
      int c = 0, t = 0;
      latencyShape(slots, w, c, t);
      CHECK(c >= 1);
      CHECK(c <= 24);
      CHECK(t >= 32);
      CHECK(t <= 384);
      CHECK(t % 32 == 0);
      if (c < 24 || t < 384) CHECK(std::size_t(c) * std::size_t(t) * per >= slots);  // not capped
    }
  }
}

TEST_CASE("makePlan: the latency shape follows the message and is the same on every rank") {
  const WorldConsts w = world(32, 512, 0);  // 32 CTAs at most
  const auto* in = reinterpret_cast<const std::byte*>(std::uintptr_t(1) << 40);
  auto* out = reinterpret_cast<std::byte*>(std::uintptr_t(1) << 41);
  for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll}) {
    int lastCtas = 0;
    for (std::size_t count : {std::size_t(1), std::size_t(512), std::size_t(4099), std::size_t(1) << 16,
                              std::size_t(1) << 18}) {
      CallArgs a;
      a.in = in;
      a.out = out;
      a.count = count;
      a.dtype = DType::BF16;
      Plan p0, p1;
      std::string e0, e1;
      REQUIRE(makeExamplePlan(k, 2, 0, a, w, std::size_t(256) << 20, std::size_t(16) << 20, p0, e0, kAtomStages) == Status::Ok);
      REQUIRE(makeExamplePlan(k, 2, 1, a, w, std::size_t(256) << 20, std::size_t(16) << 20, p1, e1, kAtomStages) == Status::Ok);
      REQUIRE(p0.latency);
      CHECK(p0.latencyCtas == p1.latencyCtas);
      CHECK(p0.latencyThreads == p1.latencyThreads);
      CHECK(p0.latencyCtas >= lastCtas);
      CHECK(p0.latencyCtas <= 32);
      lastCtas = p0.latencyCtas;
    }
    CHECK(lastCtas == 32);
  }
}

TEST_CASE("makePlan: words8 (the latency kernel's whole-word instantiation) only for aligned whole words") {
  const WorldConsts w = world(32, 512, 0);
  auto* base = reinterpret_cast<std::byte*>(std::uintptr_t(1) << 40);
  struct Probe {
    std::size_t inOff, outOff, count;
    bool words8;
  };
  // bf16: a segment is count * 2 bytes (AllReduce: the whole message).
  for (const Probe& pr : {Probe{0, 0, 4, true}, Probe{0, 0, 1024, true}, Probe{0, 0, 1023, false},
                          Probe{0, 0, 2, false}, Probe{2, 0, 1024, false}, Probe{0, 6, 1024, false},
                          Probe{8, 16, 4096, true}}) {
    for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll}) {
      CallArgs a;
      a.in = base + pr.inOff;
      a.out = base + (std::size_t(1) << 30) + pr.outOff;
      a.count = pr.count;
      a.dtype = DType::BF16;
      Plan p;
      std::string e;
      REQUIRE(makeExamplePlan(k, 2, 0, a, w, std::size_t(256) << 20, std::size_t(16) << 20, p, e, kAtomStages) == Status::Ok);
      REQUIRE(p.latency);
      INFO("collective " << int(k) << " in+" << pr.inOff << " out+" << pr.outOff << " count " << pr.count);
      CHECK(p.words8 == pr.words8);
    }
  }
}
