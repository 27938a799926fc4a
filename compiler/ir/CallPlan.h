/// @file CallPlan.h
/// @brief The call plan as SNAC IR (docs/snac-ir.md, "The call plan"):
/// ops %p0.. that say how each call of a collective is planned before a
/// program runs: its byte ranges per peer, the flow of the latency
/// program, and the program choice (latency, throughput, direct, copy
/// engine) with every condition. derivePlan (a pass of Pipeline.h) derives
/// them from the collective's layouts and the programs derivable for each
/// world size; `purlinc --emit=ir` prints them; the CUDA emitter prints
/// them as NAME_PlanRules (NAME.plan.h), the rules snac::makePlan and
/// snac::launch ask; PlanRulesOf evaluates the same ops for the compiler
/// (runtimePlan, hence the simulator's and the tests' plans).
#pragma once

#include <string>

#include "ir/IR.h"

namespace purlin::ir {

/// Sets ir.plan from ir.kind and its layouts: %p0 ranges, %p1 flow,
/// %p2 latency, %p3 throughput, %p4 direct, and %p5 engine where a direct
/// program exists for some world size.
void derivePlan(CollectiveIR &ir);

/// The op of `kind` in ir.plan; throws IRError (internal) when absent.
const PlanOp &planOp(const CollectiveIR &ir, PlanOpKind kind);
/// The op of `kind`, or nullptr.
const PlanOp *findPlanOp(const CollectiveIR &ir, PlanOpKind kind);

/// One op as `--emit=ir` prints it ("%p2 = latency if ..."), without indentation.
std::string planOpText(const CollectiveIR &ir, const PlanOp &op);
/// The world sizes of a Direct op as a condition on n ("n == 2", "n >= 2").
std::string worldCondition(const std::vector<int> &worlds, const std::string &n);

/// The plan ops of one collective evaluated for a call, as snac::makePlan
/// and snac::launch take rules (plan.h): what the printed NAME_PlanRules
/// computes, from the same ops.
class PlanRulesOf {
public:
  explicit PlanRulesOf(const CollectiveIR &ir);
  std::size_t flowBytes(const snac::Plan &p) const;
  bool latency(const snac::Plan &p, const snac::WorldConsts &w) const;
  bool direct(const snac::Plan &p, const snac::WorldConsts &w) const;
  bool engine(const snac::Plan &p, const snac::WorldConsts &w, const snac::EngineFacts &f) const;
  bool engineReduces = false;

private:
  FlowOf flow_ = FlowOf::Segment;
  std::vector<int> directWorlds_;
  bool engineMemOps_ = false;
};

} // namespace purlin::ir
