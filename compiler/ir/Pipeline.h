/// @file Pipeline.h
/// @brief The linear lowering pipeline of one collective for one world size:
/// derive -> bindPolicy -> insertSlotReuseGuards -> insertDoneAcks -> verify,
/// optionally printing the IR after every pass (`--print-ir-after-all`).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verifier.h"

namespace purlin::ir {

struct PipelineOptions {
  std::ostream *printAfterAll = nullptr; ///< when set, "// IR after <pass>" + the IR after each pass
  bool verify = true;                    ///< run the verify pass (throws IRError with the report on failure)
};

/// The pass names, in order.
const std::vector<std::string> &passNames();

/// Lowers `c` for world size n with `policy`. Throws IRError (unsupported
/// declaration, unusable policy numbers, or a verifier report).
CollectiveIR lower(const Collective &c, const Policy &policy, int n, const PipelineOptions &opts = {});

} // namespace purlin::ir
