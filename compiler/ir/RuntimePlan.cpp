/// @file RuntimePlan.cpp
/// @brief worldConsts(), runtimePlan(), geometryOf() (see RuntimePlan.h).
#include "ir/RuntimePlan.h"

namespace purlin::ir {

snac::WorldConsts worldConsts(const WorldPolicy &w, Kind k) {
  snac::WorldConsts c;
  c.latencyMaxBytes = w.latency.maxBytes;
  c.latencyCtas = w.latency.ctas;
  c.latencyThreads = w.latency.threads;
  c.stageCtas = w.throughput.stageCtas;
  c.consumeCtas = w.throughput.consumeCtas;
  c.gatherCtas = w.throughput.gatherCtas;
  c.threads = w.throughput.threads;
  c.chunkBytes = w.throughput.chunkBytes;
  c.push = boundTransfer(k, w.throughput.transfer) == Transfer::Push;
  c.lanes = w.throughput.lanes;
  c.consumeLanes = w.throughput.consumeLanes;
  c.directMinBytes = w.direct.minBytes;
  c.directCtas = w.direct.enabled ? w.direct.ctas : -1;
  c.directThreads = w.direct.threads;
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
                     policy.atom.pipelineStages) != Status::Ok)
    throw IRError{error};
  return p;
}

Geometry geometryOf(const CollectiveIR &ir, const Sizes &s, const snac::Plan &plan, uint64_t stagingBytes) {
  return computeGeometry(ir, s, plan.chunk, stagingBytes);
}

} // namespace purlin::ir
