/// @file FromIR.h
/// @brief What the generated code's comments cite from the SNAC IR: per
/// program (latency, throughput) its dispatch condition, and per role its
/// CTA count's policy field, its op ids (%first..%last as the IR printer
/// numbers them) and a one-line summary of its ops.
#pragma once

#include <vector>

#include "codegen/EmitModel.h"
#include "ir/IR.h"

namespace purlin::codegen {

/// Program notes of one collective's IR (latency first, then throughput).
/// `ir` must have been numbered (ir::numberOps); ops with id < 0 are cited
/// without ids.
std::vector<ProgramNote> programNotes(const ir::CollectiveIR &ir);

/// The summary of one role: its ops in program order, consecutive repeats
/// merged, e.g. "wait STAGED; reduce; arrive; notify REDUCED (last)".
std::string summarizeRole(const ir::Role &role);

} // namespace purlin::codegen
