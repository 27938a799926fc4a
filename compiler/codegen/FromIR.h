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
/// The notes of the programs printed for `c` (its latency program, the
/// pull / push throughput programs and the direct program, each with the
/// world size of the IR it is printed from).
std::vector<ProgramNote> programNotes(const EmitCollective &c);

/// The summary of one role: its ops in program order, consecutive repeats
/// merged, e.g. "wait STAGED; reduce; arrive; notify REDUCED (last)".
std::string summarizeRole(const ir::Role &role);

/// An IRProvider for runCudaEmit that lowers each collective through the
/// IR pipeline for world size `n` (ir::lowerVerified: the verifier
/// included), keeps the verified IR in the EmitCollective and cites its
/// programs; the collective is also lowered and verified for every other
/// world size 2..8 (the code it prints runs for any of them). The programs are symbolic over ranks, so op ids and roles are
/// those `purlinc --emit=ir` prints; an IRError becomes the error.
IRProvider irProvider(int n = kMinWorld);

/// Prints the device code of `c`'s programs from its verified IR (c.ir,
/// required) into c.latency. Throws EmitError for an op the printer has no
/// CUDA form for.
void printPrograms(EmitCollective &c);

} // namespace purlin::codegen
