/// @file FromIR.h
/// @brief What the generated code's comments cite from the SNAC IR: per
/// program (latency, throughput) its dispatch condition, and per role its
/// CTA count's policy field, its op ids (%first..%last as the IR printer
/// numbers them) and a one-line summary of its ops.
#pragma once

#include <vector>

#include "codegen/CudaBackend.h"
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

/// A NotesProvider for runCudaEmit that lowers each collective through the
/// IR pipeline (ir::lower, verifier included) for world size `n` and cites
/// its programs. The programs are symbolic over ranks, so op ids and roles
/// are those `purlinc --emit=ir` prints; an IRError becomes the error.
NotesProvider irNotesProvider(int n = kMinWorld);

} // namespace purlin::codegen
