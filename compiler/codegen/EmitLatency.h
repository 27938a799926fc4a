/// @file EmitLatency.h
/// @brief The printer of a latency program's device code: from the SNAC
/// IR's latency role (ir::Program, regime Latency) one `__device__` role
/// function whose statements are the role's ops in order, each after a
/// comment `// %N <op text>` citing the op it implements, and the
/// `__global__` kernel that runs it on every warp of the grid
/// (docs/codegen.md "Latency program").
///
/// The SNAC IR is lowered first (ir::lowerPacketWarps: the kernel IR of
/// packet warps, KernelIR.h), and each kernel IR statement is printed as
/// the packet layer's call it stands for: the printer knows statements,
/// not program shapes or collectives. An op without a packet-warp form is
/// an EmitError naming the op. A V form's flows differ in length
/// (`variable`): each put, poll and copy then moves the groups of its own
/// flow (packet::flowGroups: a zero-byte flow still sends and polls its
/// marker group).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace purlin::codegen {

/// The IR has an op (or a loop) the CUDA printer has no form for.
struct EmitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the printer produced for one latency program.
struct LatencyCode {
  std::string text;      ///< device code: role function(s) and the kernel
  std::string kernel;    ///< the kernel template's name, e.g. "allReduce_latencyKernel"
  bool reduces = false;  ///< the program reduces (its sites dispatch over the instantiation table's classes)
  std::vector<int> ops;  ///< the ids of the ops printed, in print order (each once)
};

/// Prints the latency program `prog` of the collective whose flat C++
/// identifier is `id`; `variable`: the collective is a V form (partitions
/// of run-time sizes). Throws EmitError for an op it cannot print.
LatencyCode printLatencyProgram(const std::string &id, const ir::Program &prog, bool variable = false);

} // namespace purlin::codegen
