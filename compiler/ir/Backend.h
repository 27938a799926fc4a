/// @file Backend.h
/// @brief purlinc's IR requests (`--emit=ir`, `--emit=ir-json`,
/// `--print-ir-after-all`, `--simulate=RANKS[,BYTES...]`) over a Module,
/// called from compiler/driver/Backend.cpp.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::ir {

struct IRRequest {
  enum class Mode { Text, Json, PrintAfterAll, Simulate } mode = Mode::Text;
  int ranks = 8;                 ///< world size the IR is lowered for (emit: 8)
  std::vector<uint64_t> bytes;   ///< --simulate sizes; empty = defaults (0, 1 element, uneven, > staging)
  int seeds = 3;                 ///< simulator seeds per size and program
  /// Text/JSON/after-all: when the policy's throughput transfer differs
  /// between world sizes (e.g. push for 2 ranks, pull above), also lower for
  /// the smallest world size whose transfer differs from that of `ranks`,
  /// so both derived throughput programs are shown.
  bool everyTransfer = true;
};

/// A problem to report at a collective's location.
struct IRProblem {
  Location loc;
  std::string message;
};

/// Runs the request for every collective of `m`, writing results to `os`.
/// Returns the problems (empty = success).
std::vector<IRProblem> runIR(const IRRequest &req, const Module &m, const PolicySet &policies, std::ostream &os);

} // namespace purlin::ir
