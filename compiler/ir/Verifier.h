/// @file Verifier.h
/// @brief Static checks of an instantiated program (docs/snac-ir.md,
/// "Verifier"): notify/wait pairing per (signal, source rank, destination
/// rank), acquire before every read of released memory, slot reuse guarded
/// within a call, and the causal chain that makes reuse of halves across
/// calls safe.
#pragma once

#include <string>
#include <vector>

#include "ir/Instantiate.h"

namespace purlin::ir {

/// One problem; `ops` are the ids of the ops it names.
struct Finding {
  std::string rule;    ///< "pairing", "acquire", "slot-reuse", "cross-call", "locality"
  std::string message;
  std::vector<int> ops;
};

struct Report {
  std::vector<Finding> errors;
  bool ok() const { return errors.empty(); }
  std::string text() const;
  void add(std::string rule, std::string msg, std::vector<int> ops);
};

/// Verifies one instantiation (one n, one call's sizes).
Report verifyInstance(const Instance &inst);

/// Sample calls the verify pass and tests use for world size ir.n: sizes
/// 0, 1 element, a count not divisible by n, and one larger than the small
/// staging capacity used, with a tiny chunk so cyclic reuse happens.
struct SampleCall {
  std::string label;
  Sizes sizes;
  Geometry geo;
};
std::vector<SampleCall> sampleCalls(const CollectiveIR &ir, int n);

/// Verifies both programs of `ir` on sampleCalls(ir, ir.n); findings are
/// prefixed with the program and the sample.
Report verify(const CollectiveIR &ir);

} // namespace purlin::ir
