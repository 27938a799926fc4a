/// @file plan_fixtures.h
/// @brief What the makePlan unit tests share: a world row, staging and
/// packet sizes, call arguments and fake device addresses.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "purlin/snac/plan.h"

// The rules purlinc printed for the example declaration of each collective
// (generated/, committed; test generated_up_to_date keeps them current).
#include "allgather.plan.h"
#include "allgatherv.plan.h"
#include "allreduce.plan.h"
#include "alltoall.plan.h"
#include "alltoallv.plan.h"
#include "broadcast.plan.h"
#include "gather.plan.h"
#include "reduce.plan.h"
#include "reducescatter.plan.h"
#include "reducescatterv.plan.h"
#include "scatter.plan.h"

namespace plantest {

using namespace purlin;
using namespace purlin::snac;

/// The Atom pipeline stages of the kernels the plans are for (even: 2 push lanes fit).
constexpr int kAtomStages = 8;
constexpr WorldConsts kWorld{512u << 10, 16, 512, 8, 16, 8, 512, 2u << 20, false};
constexpr std::size_t kStaging = std::size_t(256) << 20, kPackets = std::size_t(16) << 20;

inline CallArgs args(const void* in, void* out, std::size_t count, DType t = DType::BF16) {
  CallArgs a;
  a.in = in;
  a.out = out;
  a.count = count;
  a.dtype = t;
  return a;
}
/// f(rules) with the printed rules (NAME_PlanRules) of collective `k`.
template <class F> auto withRules(CollKind k, F&& f) {
  switch (k) {
  case CollKind::AllGather: return f(gen::allGather_PlanRules{});
  case CollKind::AllGatherV: return f(gen::allGatherV_PlanRules{});
  case CollKind::AllReduce: return f(gen::allReduce_PlanRules{});
  case CollKind::AllToAll: return f(gen::allToAll_PlanRules{});
  case CollKind::AllToAllV: return f(gen::allToAllV_PlanRules{});
  case CollKind::Broadcast: return f(gen::broadcast_PlanRules{});
  case CollKind::Gather: return f(gen::gather_PlanRules{});
  case CollKind::Reduce: return f(gen::reduce_PlanRules{});
  case CollKind::ReduceScatter: return f(gen::reduceScatter_PlanRules{});
  case CollKind::ReduceScatterV: return f(gen::reduceScatterV_PlanRules{});
  case CollKind::Scatter: return f(gen::scatter_PlanRules{});
  }
  throw std::logic_error("withRules: a collective without generated rules");
}

/// snac::makePlan with the printed rules of `kind`.
inline Status makeExamplePlan(CollKind kind, int n, int rank, const CallArgs& a, const WorldConsts& w,
                              std::size_t staging, std::size_t packets, Plan& p, std::string& error, int stages) {
  return withRules(kind, [&](auto rules) { return makePlan(kind, n, rank, a, w, staging, packets, p, error, stages, rules); });
}

/// makePlan's refusal scope for a call (RefusalScope::Shared when it plans).
inline RefusalScope refusalScopeOf(CollKind kind, int n, int rank, const CallArgs& a) {
  Plan p;
  std::string error;
  RefusalScope scope = RefusalScope::Own;
  withRules(kind, [&](auto rules) {
    return makePlan(kind, n, rank, a, kWorld, kStaging, kPackets, p, error, kAtomStages, rules, &scope);
  });
  return scope;
}

/// Whether the printed rules of p.kind want the direct program.
inline bool exampleWantsDirect(const Plan& p, const WorldConsts& w) {
  return withRules(p.kind, [&](auto rules) { return rules.direct(p, w); });
}

/// planDirect as the launcher runs it for a captured call on an unchecked
/// communicator with stream memory operations and room in the hardware
/// queues: the copy-engine form where the printed rules take it.
inline void planExampleDirect(Plan& p, const WorldConsts& w, EngineFacts facts = {false, true, true, true}) {
  withRules(p.kind, [&](auto rules) {
    planDirect(p, w, rules.engine(p, w, facts), rules.engineReduces);
    return 0;
  });
}

/// Distinct fake device addresses (never dereferenced by makePlan).
inline const std::byte* const kIn = reinterpret_cast<const std::byte*>(std::uintptr_t(1) << 40);
inline std::byte* const kOut = reinterpret_cast<std::byte*>(std::uintptr_t(1) << 41);

} // namespace plantest
