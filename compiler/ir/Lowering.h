/// @file Lowering.h
/// @brief Passes that record how the printers lower the SNAC IR (docs/
/// snac-ir.md "Lowering passes"): each takes one decision the CUDA printers
/// used to take by matching shapes, records it on the IR (Op::reusesLoadOf,
/// Op::fusedInto, Stmt::twoRankForm), where `--emit=ir` and
/// `--print-ir-after-all` show it and the verifier checks it; the printers
/// print what is recorded. Semantics are unchanged: the simulator runs the
/// ops as they are.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace purlin::ir {

/// Latency program: when every rank puts its whole own input (X_r) and the
/// reduction's own operand is that same X_r, one load feeds every put and
/// the reduction: the reduce step records the put (reusesLoadOf).
void shareLoads(CollectiveIR &ir);

/// Latency program: every reduction loop over all ranks (a packet poll and
/// a reduce step) also gets its two-rank form (twoRankForm).
void specializeTwoRanks(CollectiveIR &ir);

/// Direct program: a copy of the round a reduce just produced into the
/// peers' outputs (the AllReduce write-back) is done by the reduction's own
/// stores, each reduced vector stored locally and to the peer at once
/// (fusedInto = the reduce).
void fuseWriteBack(CollectiveIR &ir);

/// What is wrong with the recorded decisions of `ir`, one line each (the
/// verifier's "lowering" rule): a reusesLoadOf naming anything but an
/// earlier put of every rank loading the same words, a fusedInto naming
/// anything but the reduce right before the copy that wrote the copied
/// round under the same condition, a twoRankForm on a loop that is not a
/// reduction over every rank. Pairs of (message, op id).
std::vector<std::pair<std::string, int>> loweringProblems(const CollectiveIR &ir);

} // namespace purlin::ir
