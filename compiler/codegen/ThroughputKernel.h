/// @file ThroughputKernel.h
/// @brief The parts of the printed throughput code above the roles
/// (EmitThroughput.cpp prints the roles): role function names, the CTA
/// ranges of the roles, the push program's per-CTA dispatcher and the
/// `__global__` kernel that runs the pull or the push program.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace purlin::codegen {

/// "throughput.stageCtas" -> "pl.stageCtas" (the Plan field of the role's CTA count).
std::string ctasField(const ir::Role &role);
/// The role's device function: NAME_pull_ROLE or NAME_push_ROLE.
std::string roleFn(const std::string &id, bool push, const ir::Role &role);
/// NAME_pushCta: a CTA of the push program picks its role by CTA range and
/// runs it on its lanes.
std::string printPushCta(const std::string &id, const ir::Program &push);
/// A push CTA's shape: (lanes per stage CTA, lanes per consume / gather
/// CTA), as snac::pushLanes binds them (Plan::lanes, Plan::consumeLanes).
using PushLaneShape = std::pair<int, int>;
/// Every shape the runtime's plan can bind (1 or 2 lanes each).
inline const std::vector<PushLaneShape> kEveryPushLaneShape = {{1, 1}, {1, 2}, {2, 1}, {2, 2}};
/// NAME_throughputKernel: the pull roles (or the push CTA) by CTA range,
/// between ctaBeginCall and ctaEndCall; a program not printed traps. The
/// push CTA is instantiated for `pushLanes` only (the shapes the policy
/// binds at some world size); another traps (the launch refuses it first).
/// `variable` (a V form): the roles read the plan ctaResolvedPlan gives
/// (a device-count call's ranges, docs/device-counts.md).
std::string printThroughputKernel(const std::string &id, const ir::Program *pull, const ir::Program *push,
                                  const std::vector<PushLaneShape> &pushLanes, bool variable = false);
/// "pl.lanes == 2 && pl.consumeLanes == 1": the condition of one shape.
std::string pushLaneCondition(const PushLaneShape &shape);
/// "(2, 1), (1, 1)": the shapes, for comments and messages.
std::string pushLaneShapesText(const std::vector<PushLaneShape> &shapes);

} // namespace purlin::codegen
