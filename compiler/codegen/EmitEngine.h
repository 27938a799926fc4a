/// @file EmitEngine.h
/// @brief The printer of the direct program's copy-engine form (captured
/// calls of at least directEngineMinBytes: docs/snac-protocol.md "Direct
/// program", docs/codegen.md "Copy-engine form"): from the IR's `host` role,
/// one host function that enqueues the call's graph in the IR's host order
/// (each copy-engine transfer, stream memory operation, event record / wait
/// and kernel node one call of a runtime primitive, snac::EngineGraph), and
/// one `__global__` kernel per kernel node of the IR, whose statements are
/// the node's ops. Every statement follows `// %N <op text>`.
///
/// The SNAC IR is lowered first (ir::lowerHostGraph: the kernel IR of a
/// host graph, KernelIR.h), op after op, each checked for what the graph
/// can print (the rank loops others(r) and r+1..r-1, the engine-chunk
/// loops, the NonEmpty conditions, the two-rank in-place reduction of a
/// wide kernel); the printer prints its statements.
#pragma once

#include <string>
#include <vector>

#include "codegen/EmitLatency.h"
#include "ir/IR.h"

namespace purlin::codegen {

/// What the printer produced for one copy-engine form.
struct EngineCode {
  std::string text;      ///< the kernels, then the host function
  std::string host;      ///< the host function template's name, e.g. "allReduce_engine"
  std::vector<int> ops;  ///< the ids of the ops printed, in print order (each once)
};

/// Prints the copy-engine form `prog` (Program::engine) of the collective
/// of kind `kind` whose flat C++ identifier is `id`. Throws EmitError for an
/// op it cannot print.
EngineCode printEngineProgram(const std::string &id, ir::Kind kind, const ir::Program &prog);

} // namespace purlin::codegen
