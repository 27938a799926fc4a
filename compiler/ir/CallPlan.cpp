/// @file CallPlan.cpp
/// @brief derivePlan(), the plan ops' text and PlanRulesOf (CallPlan.h).
#include "ir/CallPlan.h"

#include <algorithm>

#include "ir/DeriveDirect.h"

namespace purlin::ir {

namespace {

/// What block k of a side is, from its layout (kinds.h's byte-range rule,
/// snac::planByteRanges).
std::string sideText(Layout l, bool compose, bool input) {
  const std::string buf = input ? "X" : "O";
  if (compose) return "partition k of " + buf;
  switch (l) {
  case Layout::Packed: return input ? "all of X (the same block to every k)" : "O (the own block, from every k)";
  case Layout::PackedV: return input ? "all of X (counts[r] elements, to every k)" : "O (counts[r] elements, from every k)";
  case Layout::Scattered: return "block k of " + buf;
  case Layout::ScatteredV: return "block k of " + buf + " (counts[k] elements at their prefix sum)";
  case Layout::Transposed: return "block k of " + buf;
  case Layout::TransposedV:
    return input ? "sendCounts[k] elements at sendDispls[k]" : "recvCounts[k] elements at recvDispls[k]";
  }
  return "?";
}

bool hasOp(const Program &p, OpKind kind, SlotSpace space = SlotSpace::None, bool anySpace = true) {
  bool found = false;
  for (const Role &r : p.roles)
    forEachOp(r.body, [&](const Op &o) { found |= o.kind == kind && (anySpace || o.slotSpace == space); });
  return found;
}

} // namespace

void derivePlan(CollectiveIR &ir) {
  ir.plan.clear();
  const Kind k = ir.kind;
  int id = 0;
  auto add = [&](PlanOp op) {
    op.id = id++;
    ir.plan.push_back(std::move(op));
  };
  add({.kind = PlanOpKind::Ranges,
       .why = std::string("from the layouts") +
              (isRootProducer(k) ? "; non-roots read no X" : isRooted(k) ? "; non-roots write no O" : "")});
  // A composition's latency program is one-shot: every source sends its
  // whole input (AllReduce to every rank, Reduce to the root, Broadcast's
  // root to every rank); a leaf's sends each segment to its rank.
  add({.kind = PlanOpKind::Flow,
       .flow = ir.compose ? FlowOf::Message : FlowOf::Segment,
       .why = ir.compose ? "the latency program is one-shot: every source sends its whole input"
                         : "every source sends each peer its segment"});
  add({.kind = PlanOpKind::Latency});
  add({.kind = PlanOpKind::Throughput});
  PlanOp direct{.kind = PlanOpKind::Direct};
  for (int n = kMinWorld; n <= kMaxWorld; ++n)
    if (directDerivable(k, n)) direct.worlds.push_back(n);
  direct.why = direct.worlds.empty() ? directNotDerivable(k, kMaxWorld)
               : direct.worlds.size() == std::size_t(kMaxWorld - kMinWorld + 1)
                   ? "derived for every world size"
                   : "derived for " + worldCondition(direct.worlds, "n") + " only";
  const int engineWorld = direct.worlds.empty() ? 0 : direct.worlds.front();
  add(direct);
  if (engineWorld) {
    // The copy-engine form's shape and needs, read from its program: a
    // reduce kernel between the copies, flags written by stream memory
    // operations (per-chunk signals).
    const Program engine = engineProgram(k, engineWorld);
    PlanOp e{.kind = PlanOpKind::Engine};
    e.reduces = hasOp(engine, OpKind::Reduce);
    e.needsMemOps = hasOp(engine, OpKind::Notify, SlotSpace::Chunk, false);
    e.why = e.reduces ? "a reduce kernel per chunk; the peer's flags are stream memory operations"
                      : "one CTA of one warp around the copies";
    add(e);
  }
}

const PlanOp *findPlanOp(const CollectiveIR &ir, PlanOpKind kind) {
  for (const PlanOp &o : ir.plan)
    if (o.kind == kind) return &o;
  return nullptr;
}

const PlanOp &planOp(const CollectiveIR &ir, PlanOpKind kind) {
  if (const PlanOp *o = findPlanOp(ir, kind)) return *o;
  throw IRError{"internal: '" + ir.name + "' has no plan op of kind " + std::to_string(int(kind)) +
                " (derivePlan did not run)"};
}

std::string worldCondition(const std::vector<int> &worlds, const std::string &n) {
  if (worlds.empty()) return "false";
  const bool contiguous = worlds.back() - worlds.front() + 1 == int(worlds.size());
  if (worlds.size() == 1) return n + " == " + std::to_string(worlds.front());
  if (contiguous && worlds.back() == kMaxWorld) return n + " >= " + std::to_string(worlds.front());
  std::string s;
  for (int w : worlds) s += (s.empty() ? "" : " || ") + n + " == " + std::to_string(w);
  return "(" + s + ")";
}

std::string planOpText(const CollectiveIR &ir, const PlanOp &op) {
  const std::string id = "%p" + std::to_string(op.id);
  const auto cite = [&](PlanOpKind k) {
    const PlanOp *o = findPlanOp(ir, k);
    return o ? "%p" + std::to_string(o->id) : std::string("?");
  };
  switch (op.kind) {
  case PlanOpKind::Ranges:
    return id + " = ranges tx[k] = " + sideText(ir.in, ir.compose, true) + ", rx[k] = " +
           sideText(ir.out, ir.compose, false) + "  // " + op.why + " (snac::planByteRanges)";
  case PlanOpKind::Flow:
    return id + " = flow " + (op.flow == FlowOf::Message ? "msgBytes" : "maxLen") + "  // " + op.why;
  case PlanOpKind::Latency:
    return id + " = latency if world[n].latencyCtas > 0 && msgBytes <= world[n].latencyMaxBytes && packetSlots(" +
           cite(PlanOpKind::Flow) + ") <= packetRegion  // packetRegion: packet half / 16 B / n";
  case PlanOpKind::Throughput:
    return id + " = throughput otherwise: push if world[n].push (chunk = pickPushChunk: about chunksPerCta chunks "
                "per worker, within [32 KiB, chunkBytes]), else pull (chunk = pickChunk: min(chunkBytes, "
                "max(64 KiB, maxLen / 4))); slots = min(region / chunk, " +
           std::to_string(kMaxSlots) + ")";
  case PlanOpKind::Direct:
    if (op.worlds.empty()) return id + " = direct never  // " + op.why;
    return id + " = direct if " + worldCondition(op.worlds, "n") +
           " && world[n].directCtas >= 0 && msgBytes >= world[n].directMinBytes && (captured, eligible on every "
           "rank || output registered)  // " + op.why;
  case PlanOpKind::Engine:
    return id + " = engine if " + cite(PlanOpKind::Direct) + " && msgBytes >= world[n].directEngineMinBytes && "
           "unchecked" + (op.needsMemOps ? " && stream memory operations" : "") +
           " && queues fit (engineFitsQueues) && captured (output sizes agreed at capture, before any copy; an eager "
           "call's copies would be enqueued before the peers' tags are compared)  // " + op.why;
  }
  return id;
}

PlanRulesOf::PlanRulesOf(const CollectiveIR &ir) {
  flow_ = planOp(ir, PlanOpKind::Flow).flow;
  directWorlds_ = planOp(ir, PlanOpKind::Direct).worlds;
  if (const PlanOp *e = findPlanOp(ir, PlanOpKind::Engine)) {
    engineReduces = e->reduces;
    engineMemOps_ = e->needsMemOps;
  }
}

std::size_t PlanRulesOf::flowBytes(const snac::Plan &p) const {
  return flow_ == FlowOf::Message ? p.msgBytes : p.maxLen;
}

bool PlanRulesOf::latency(const snac::Plan &p, const snac::WorldConsts &w) const {
  return w.latencyCtas > 0 && w.latencyThreads > 0 && p.msgBytes <= w.latencyMaxBytes &&
         snac::packetSlots(p.packetFlowBytes) <= p.packetRegion;
}

bool PlanRulesOf::direct(const snac::Plan &p, const snac::WorldConsts &w) const {
  return std::find(directWorlds_.begin(), directWorlds_.end(), p.n) != directWorlds_.end() && w.directCtas >= 0 &&
         p.msgBytes >= snac::directMinBytesOf(w);
}

bool PlanRulesOf::engine(const snac::Plan &p, const snac::WorldConsts &w, const snac::EngineFacts &f) const {
  return !f.checked && (!engineMemOps_ || f.streamMemOps) && f.queuesFit && f.captured &&
         p.msgBytes >= snac::directEngineMinBytesOf(w);
}

} // namespace purlin::ir
