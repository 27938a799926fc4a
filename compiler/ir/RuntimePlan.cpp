/// @file RuntimePlan.cpp
/// @brief worldConsts(), runtimePlan(), geometryOf() (see RuntimePlan.h).
#include "ir/RuntimePlan.h"

#include <algorithm>
#include <vector>

#include "ir/CallPlan.h"

namespace purlin::ir {

snac::WorldConsts worldConsts(const WorldPolicy &w, Kind k) {
  snac::WorldConsts c;
  // One assignment per row of policy_knobs.def; the transfer is the IR's
  // (push only where it derives push for the collective).
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) c.Const = w.Section.Key;
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) c.Const = boundTransfer(k, w.Section.Key) == Transfer::Push;
#include "purlin/policy_knobs.def"
  if (!w.direct.enabled) c.directCtas = -1;
  return c;
}

std::optional<snac::CollKind> runtimeKind(Kind k) {
  switch (k) {
#define PURLIN_RUNS_0(Name)
#define PURLIN_RUNS_1(Name) case Kind::Name: return snac::CollKind::Name;
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name)
#include "purlin/collectives.def"
#undef PURLIN_RUNS_0
#undef PURLIN_RUNS_1
  default: return std::nullopt;
  }
}

snac::Plan runtimePlan(const CollectiveIR &ir, const Policy &policy, uint64_t count, uint32_t elemSize,
                       uint64_t packetHalfBytes, int rank) {
  auto kind = runtimeKind(ir.kind);
  if (!kind) throw IRError{std::string("the runtime does not run ") + toString(ir.kind) + " yet"};
  snac::CallArgs a;
  // Addresses only matter for alignment (8-byte words, 16-byte direct
  // eligibility): distinct, page-aligned, non-overlapping.
  a.in = reinterpret_cast<const void *>(uintptr_t(1) << 32);
  a.out = reinterpret_cast<void *>(uintptr_t(1) << 40);
  a.count = count;
  a.dtype = elemSize == 4 ? DType::F32 : DType::BF16;
  if (!reducesKind(ir.kind) && elemSize == 1) {
    // A copy of bytes: bf16 elements of half the count (copies move bytes).
    if (count % 2) throw IRError{"runtimePlan: a copy's byte count must be even (bf16 elements)"};
    a.count = count / 2;
  }
  snac::Plan p;
  std::string error;
  const snac::WorldConsts w = worldConsts(policy.forWorld(ir.n), ir.kind);
  if (snac::makePlan(*kind, ir.n, rank, a, w, policy.stagingBytes, packetHalfBytes, p, error,
                     policy.atom.pipelineStages, PlanRulesOf(ir)) != Status::Ok)
    throw IRError{error};
  return p;
}

snac::Plan runtimePlan(const CollectiveIR &ir, const Policy &policy, const CallArgs &args, uint64_t packetHalfBytes,
                       int rank) {
  auto kind = runtimeKind(ir.kind);
  if (!kind) throw IRError{std::string("the runtime does not run ") + toString(ir.kind)};
  if (args.elemSize != 2 && args.elemSize != 4) throw IRError{"runtimePlan: element size 2 (bf16) or 4 (f32)"};
  const int n = ir.n;
  snac::CallArgs a;
  a.in = reinterpret_cast<const void *>(uintptr_t(1) << 32);
  a.out = reinterpret_cast<void *>(uintptr_t(1) << 40);
  a.count = args.count;
  a.root = args.root;
  a.dtype = args.elemSize == 4 ? DType::F32 : DType::BF16;
  std::vector<std::size_t> counts(args.counts.begin(), args.counts.end());
  std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
  if (ir.kind == Kind::AllGatherV || ir.kind == Kind::ReduceScatterV) {
    if (int(counts.size()) != n) throw IRError{"runtimePlan: counts must have n entries"};
    a.counts = counts.data();
  }
  if (ir.kind == Kind::AllToAllV) {
    if (int(args.matrix.size()) != n) throw IRError{"runtimePlan: AllToAllV needs an n x n matrix"};
    for (int q = 0; q < n; ++q) {
      sc[q] = args.matrix[rank][q];
      rc[q] = args.matrix[q][rank];
      sd[q] = q ? sd[q - 1] + sc[q - 1] : 0;
      rd[q] = q ? rd[q - 1] + rc[q - 1] : 0;
      for (int p = 0; p < n; ++p) a.maxCount = std::max<std::size_t>(a.maxCount, args.matrix[p][q]);
    }
    a.sendCounts = sc.data(), a.sendDispls = sd.data(), a.recvCounts = rc.data(), a.recvDispls = rd.data();
  }
  snac::Plan p;
  std::string error;
  const snac::WorldConsts w = worldConsts(policy.forWorld(n), ir.kind);
  if (snac::makePlan(*kind, n, rank, a, w, policy.stagingBytes, packetHalfBytes, p, error,
                     policy.atom.pipelineStages, PlanRulesOf(ir)) != Status::Ok)
    throw IRError{error};
  return p;
}

Geometry geometryOf(const CollectiveIR &ir, const Sizes &s, const snac::Plan &plan, uint64_t stagingBytes) {
  return computeGeometry(ir, s, plan.chunk, stagingBytes);
}

} // namespace purlin::ir
