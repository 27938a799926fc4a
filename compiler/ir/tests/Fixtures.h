/// @file Fixtures.h
/// @brief Test helpers: the eleven collectives as the front end would build
/// them (Listing 1 and 4), and a policy with numbers for every world size.
#pragma once

#include <memory>

#include "ir/IR.h"
#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::ir::test {

inline std::shared_ptr<Collective> leaf(const char *name, ConsumeOp op, Layout in, Layout out, Root root = Root::None) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->op = op;
  c->in = in;
  c->out = out;
  c->root = root;
  return c;
}

inline std::shared_ptr<Collective> compose(const char *name, std::shared_ptr<Collective> f,
                                           std::shared_ptr<Collective> g) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->isCompose = true;
  c->op = f->op;
  c->in = f->in;
  c->out = g->out;
  c->root = f->root != Root::None ? f->root : g->root;
  c->children = {f, g};
  return c;
}

/// The declaration of kind `k`.
inline std::shared_ptr<Collective> collectiveOf(Kind k) {
  using L = Layout;
  auto C = ConsumeOp::Copy, R = ConsumeOp::Reduce;
  auto rs = leaf("reduceScatter", R, L::Scattered, L::Packed);
  auto ag = leaf("allGather", C, L::Packed, L::Scattered);
  auto sc = leaf("scatter", C, L::Scattered, L::Packed, Root::Producer);
  auto ga = leaf("gather", C, L::Packed, L::Scattered, Root::Consumer);
  switch (k) {
  case Kind::AllGather: return ag;
  case Kind::ReduceScatter: return rs;
  case Kind::AllReduce: return compose("allReduce", rs, ag);
  case Kind::AllToAll: return leaf("allToAll", C, L::Scattered, L::Transposed);
  case Kind::AllGatherV: return leaf("allGatherV", C, L::PackedV, L::ScatteredV);
  case Kind::ReduceScatterV: return leaf("reduceScatterV", R, L::ScatteredV, L::PackedV);
  case Kind::AllToAllV: return leaf("allToAllV", C, L::ScatteredV, L::TransposedV);
  case Kind::Broadcast: return compose("broadcast", sc, ag);
  case Kind::Reduce: return compose("reduce", rs, ga);
  case Kind::Scatter: return sc;
  case Kind::Gather: return ga;
  default: return nullptr;
  }
}

/// H200-like numbers (the simulator scales the chunk and staging down).
inline Policy testPolicy() {
  Policy p;
  p.name = "Policy";
  p.stagingBytes = 256ull << 20;
  p.atom.pipelineStages = 4;
  p.atom.stageBytes = 16384;
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    WorldPolicy &w = p.world[n];
    w.latency = {uint64_t(64) << 10, 8, 512};
    w.throughput.stageCtas = 8;
    w.throughput.consumeCtas = 8;
    w.throughput.gatherCtas = 8;
    w.throughput.threads = 512;
    w.throughput.chunkBytes = 256 << 10;
  }
  return p;
}

/// testPolicy() with the push transfer for every world size.
inline Policy pushPolicy() {
  Policy p = testPolicy();
  for (int n = kMinWorld; n <= kMaxWorld; ++n) p.world[n].throughput.transfer = Transfer::Push;
  return p;
}

/// The collectives with a push derivation.
inline const std::vector<Kind> &pushKinds() {
  static const std::vector<Kind> v = {Kind::AllGather, Kind::ReduceScatter, Kind::AllReduce, Kind::AllToAll};
  return v;
}

} // namespace purlin::ir::test
