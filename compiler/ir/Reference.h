/// @file Reference.h
/// @brief An independent reference of each collective's semantics, written
/// from the definitions (not from the IR): copy results bitwise; reductions
/// of float inputs accumulated in fp32 in ascending rank order (sum).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/Instantiate.h"

namespace purlin::ir {

using Bytes = std::vector<uint8_t>;

/// Input bytes each rank supplies for a call (from the collective's definition).
std::vector<uint64_t> referenceInputBytes(Kind k, int n, const CallArgs &a);

/// Expected output of every rank; `has[r]` false where rank r has no output
/// (non-roots of Gather and Reduce).
std::vector<Bytes> referenceOutputs(Kind k, int n, const CallArgs &a, const std::vector<Bytes> &inputs,
                                    std::vector<bool> &has);

} // namespace purlin::ir
