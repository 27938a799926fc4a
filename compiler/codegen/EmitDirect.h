/// @file EmitDirect.h
/// @brief The printer of the direct program's kernel form (captured calls,
/// no staging: docs/snac-protocol.md "Direct program"): from the SNAC IR's
/// direct role one `__device__` function whose statements are the role's
/// ops in order, each after `// %N <op text>`, and the `__global__` kernel
/// (docs/codegen.md "Direct program").
///
/// The SNAC IR is lowered first (ir::lowerDirectCtas: the kernel IR of
/// direct CTAs, KernelIR.h), op after op: the arrive pair, then either one
/// copy of the CTA's slice to every destination and a PUT exchange
/// (AllGather, AllToAll), or, on two ranks, a loop over rounds that pushes
/// the peer's partition, waits for the own one and reduces it in place
/// (ReduceScatter; AllReduce also writes the reduced round back, fused into
/// the reduction's stores, and waits for the peer's last BACK); each
/// statement prints as the Atom or signal call it stands for.
#pragma once

#include <string>
#include <vector>

#include "codegen/EmitLatency.h"
#include "ir/IR.h"

namespace purlin::codegen {

/// What the printer produced for one direct program.
struct DirectCode {
  std::string text;      ///< device code: the role function and the kernel
  std::string kernel;    ///< the kernel template's name, e.g. "allReduce_directKernel"
  bool reduces = false;  ///< the program reduces (its site dispatches over the instantiation table's classes)
  std::vector<int> ops;  ///< the ids of the ops printed, in print order (each once)
};

/// Prints the direct program `prog` (regime Direct) of the collective
/// whose flat C++ identifier is `id`. Throws EmitError for an op it cannot
/// print.
DirectCode printDirectProgram(const std::string &id, const ir::Program &prog);

} // namespace purlin::codegen
