/// @file plan_cost_micro.cpp
/// @brief Host cost of planning one call (snac::makePlan with the printed
/// rules, generated/NAME.plan.h), CPU only: issue 34 asks for an eager
/// call's host time <= 1.3x an empty kernel launch and for a plan computed
/// once per call shape; this measures what such a cache could save. Per row
/// the median over --reps repetitions of --calls back-to-back makePlan calls:
///   row,<collective>,<message bytes>,<program>,<median ns>,<min ns>,<max ns>
/// Usage: plan_cost_micro [--reps N] [--calls N]
/// Built with -DPURLIN_PLAN_COST_NO_RULES against a tree from before the
/// rules (commit 86b2d52), the same rows measure the previous makePlan.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "purlin/snac/plan.h"
#ifndef PURLIN_PLAN_COST_NO_RULES
#include "allgather.plan.h"
#include "allreduce.plan.h"
#endif

using namespace purlin;
using namespace purlin::snac;

namespace {

/// The built-in sm_90 row for two ranks (generated/allreduce.programs.h).
WorldConsts twoRanks() {
  WorldConsts w{};
  w.latencyMaxBytes = std::size_t(4) << 20;
  w.latencyCtas = 128;
  w.latencyThreads = 512;
  w.stageCtas = 8;
  w.consumeCtas = 16;
  w.gatherCtas = 8;
  w.threads = 512;
  w.chunkBytes = std::size_t(4) << 20;
  w.push = true;
  w.directMinBytes = std::size_t(4) << 20;
  w.directCtas = 32;
  w.directThreads = 512;
  return w;
}

Status plan(CollKind k, const CallArgs& a, const WorldConsts& w, Plan& p, std::string& err) {
  constexpr std::size_t kStaging = std::size_t(256) << 20, kPackets = std::size_t(16) << 20;
#ifdef PURLIN_PLAN_COST_NO_RULES
  return makePlan(k, 2, 0, a, w, kStaging, kPackets, p, err, 8);
#else
  if (k == CollKind::AllReduce) return makePlan(k, 2, 0, a, w, kStaging, kPackets, p, err, 8, gen::allReduce_PlanRules{});
  return makePlan(k, 2, 0, a, w, kStaging, kPackets, p, err, 8, gen::allGather_PlanRules{});
#endif
}

} // namespace

int main(int argc, char** argv) {
  int reps = 7, calls = 1000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--calls")) calls = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: plan_cost_micro [--reps N] [--calls N]\n");
      return 2;
    }
  }
  if (reps < 1 || calls < 1) {
    std::fprintf(stderr, "plan_cost_micro: --reps and --calls must be positive\n");
    return 2;
  }
  const WorldConsts w = twoRanks();
  CallArgs a;
  a.in = reinterpret_cast<const void*>(std::uintptr_t(1) << 40);
  a.out = reinterpret_cast<void*>(std::uintptr_t(1) << 41);
  a.dtype = DType::BF16;
  std::printf("row,collective,bytes,program,median_ns,min_ns,max_ns\n");
  for (CollKind k : {CollKind::AllReduce, CollKind::AllGather})
    for (std::size_t count : {std::size_t(512), std::size_t(1) << 27}) {
      a.count = count;
      Plan p;
      std::string err;
      std::vector<double> ns;
      int sink = 0;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) sink += int(plan(k, a, w, p, err)) + int(p.latency);
        const auto t1 = std::chrono::steady_clock::now();
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
      }
      if (plan(k, a, w, p, err) != Status::Ok) {
        std::fprintf(stderr, "plan_cost_micro: %s\n", err.c_str());
        return 1;
      }
      std::sort(ns.begin(), ns.end());
      std::printf("row,%s,%zu,%s,%.1f,%.1f,%.1f\n", toString(k), p.msgBytes,
                  p.latency ? "latency" : p.push ? "push" : "pull", ns[ns.size() / 2], ns.front(), ns.back());
      if (sink == -1) std::printf("(never)\n");
    }
  return 0;
}
