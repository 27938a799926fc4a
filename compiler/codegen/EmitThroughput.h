/// @file EmitThroughput.h
/// @brief The printer of a throughput program's device code: from the SNAC
/// IR's throughput programs (pull, and push where the policy takes it for
/// some world size) one `__device__` function per role whose statements are
/// the role's ops in order, each after a comment `// %N <op text>` citing
/// the op it implements, and the `__global__` kernel that assigns CTAs to
/// roles (docs/codegen.md "Throughput program").
///
/// The SNAC IR is lowered first (ir::lowerThroughputRoles: the roles'
/// kernel IR, KernelIR.h); the printer walks its statements: loops over
/// chunks and ranks, the values named once per iteration, waits, notifies,
/// last-arriver counters, copies and reductions each have one printed
/// form, for the two work distributions the IR has:
/// sliced (every CTA of the role moves its slice of each chunk; pull) and
/// per worker (`step j on worker j mod workers`: a worker, one lane of a
/// CTA, moves whole chunks; push). An op or loop outside these forms is an
/// EmitError naming it.
#pragma once

#include <string>
#include <vector>

#include "codegen/EmitLatency.h"
#include "codegen/ThroughputKernel.h"
#include "ir/IR.h"

namespace purlin::codegen {

/// What the printer produced for one collective's throughput programs.
struct ThroughputCode {
  std::string pullText;      ///< device code of the pull roles
  std::string pushText;      ///< device code of the push roles (empty: no push program)
  std::string kernelText;    ///< the kernel
  std::string kernel;        ///< the kernel template's name, e.g. "allReduce_throughputKernel"
  bool reduces = false;      ///< a role reduces (its sites dispatch over the instantiation table's classes)
  bool hasPull = false, hasPush = false;  ///< which transfers have printed roles
  std::vector<int> pullOps;  ///< ids of the pull program's ops, in print order (each once)
  std::vector<int> pushOps;  ///< ids of the push program's ops, in print order (each once)
  std::vector<PushLaneShape> pushLanes;  ///< the push CTA shapes the kernel instantiates (hasPush)
};

/// Prints the throughput programs of the collective whose flat C++
/// identifier is `id`: `pull` (transfer Pull) and `push` (transfer Push),
/// each when some world size of the policy takes it (else nullptr; at least
/// one). The launcher refuses a plan of a transfer without printed roles
/// (NAME_Programs::hasPull / hasPush); the kernel traps on one. Throws
/// EmitError for an op it cannot print.
/// `pushLanes`: the push CTA shapes to instantiate (the policy's; default
/// every shape). `variable`: a V form's (its kernel takes a device-count
/// call's ranges, docs/device-counts.md).
ThroughputCode printThroughputPrograms(const std::string &id, const ir::Program *pull, const ir::Program *push,
                                       const std::vector<PushLaneShape> &pushLanes = kEveryPushLaneShape,
                                       bool variable = false);

} // namespace purlin::codegen
