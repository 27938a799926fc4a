/// @file RuntimePlan.h
/// @brief The runtime's per-call plan, seen from the IR: the policy row the
/// kernels get (snac::WorldConsts, the table purlinc prints into the .cu)
/// and the plan snac::makePlan makes for one call (plan.h, plain C++ that
/// purlinc compiles too): the chunk it picks per call (pickChunk /
/// pickPushChunk), chunks per partition, slots, lanes, the latency choice
/// with its packet window. geometryOf() turns that plan into the IR's
/// Geometry, so the IR can be instantiated and verified with exactly the
/// numbers a call of that size runs with (tests/RuntimePlanTest.cpp checks
/// the IR's own size rules against it).
#pragma once

#include <optional>
#include <string>

#include "ir/DerivePush.h"
#include "ir/IR.h"
#include "ir/Instantiate.h"
#include "purlin/Policy.h"
#include "purlin/snac/plan.h"

namespace purlin::ir {

/// The row of the policy table for one world size, as the kernels of
/// collective `k` read it (purlinc prints this struct's members into
/// NAME_Policy::world[n]): the policy's push transfer only where `k` has a
/// push derivation (boundTransfer), since only that program is printed.
snac::WorldConsts worldConsts(const WorldPolicy &w, Kind k);

/// The runtime collective of `k` (collectives.def, Runs = 1: all of them); nullopt for Kind::Unknown.
std::optional<snac::CollKind> runtimeKind(Kind k);

/// snac::makePlan for rank `rank` of a call of `count` elements of
/// `elemSize` bytes (4: f32, 2: bf16, 1: bytes of a copy) under `policy`
/// for ir.n ranks, with the runtime's staging capacity (the policy's
/// stagingBytes) and packet half `packetHalfBytes`. Throws IRError with
/// makePlan's message when it refuses the call.
snac::Plan runtimePlan(const CollectiveIR &ir, const Policy &policy, uint64_t count, uint32_t elemSize,
                       uint64_t packetHalfBytes, int rank = 0);

/// The same for a call of any collective given as the IR's arguments
/// (Instantiate.h CallArgs: count, counts, matrix, root, elemSize 2 or 4):
/// a V form's counts, AllToAllV's row `rank` and column `rank` of the
/// matrix (packed displacements) with maxCount = the matrix's largest entry.
snac::Plan runtimePlan(const CollectiveIR &ir, const Policy &policy, const CallArgs &args, uint64_t packetHalfBytes,
                       int rank = 0);

/// The IR's geometry of a throughput call planned as `plan`: the run-time
/// chunk, and the IR's slot and region rules for it (computeGeometry).
Geometry geometryOf(const CollectiveIR &ir, const Sizes &s, const snac::Plan &plan, uint64_t stagingBytes);

} // namespace purlin::ir
