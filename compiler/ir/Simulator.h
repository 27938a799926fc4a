/// @file Simulator.h
/// @brief CPU simulator of an instantiated SNAC program for n ranks over
/// several consecutive calls, under seeded adversarial interleavings of
/// role-CTAs (random weights, one rank arbitrarily late), with per-byte
/// shadow state and vector clocks. Reports read-before-release and
/// write-after-read races, deadlocks (who waits on what, expected vs
/// observed) and wrong results against Reference.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Instantiate.h"
#include "ir/Verifier.h"

namespace purlin::ir {

/// Largest message size (bytes per call) `purlinc --simulate` accepts: an
/// AllReduce on 8 ranks of this size simulates in about 5 s (every size
/// runs 3 seeds x 3 calls of both programs); the cost grows linearly.
inline constexpr uint64_t kMaxSimulateBytes = uint64_t(64) << 10;

/// Largest per-rank input or output simulate() accepts (argsForBytes adds a
/// few elements per rank to kMaxSimulateBytes for the V forms).
inline constexpr uint64_t kMaxSimulateRankBytes = 2 * kMaxSimulateBytes;

struct SimOptions {
  uint64_t seed = 1;
  int calls = 3;            ///< consecutive calls (epochs 1..calls): halves are reused from call 3 on
  int maxCtas = 2;          ///< CTAs per role, capped
  bool lateRank = true;     ///< one rank (chosen by the seed) starts late and runs slowly
  /// Scheduling steps before the run stops with rule "step-budget" (not a
  /// deadlock: CTAs could still proceed).
  uint64_t maxSteps = 20000000;
};

struct SimResult {
  Report report;            ///< rules: race, deadlock, wrong-result, counter, step-budget
  uint64_t steps = 0;
  bool launched = false;    ///< false when the call has no data (nothing launched)
};

/// Simulates `prog` of `ir` for one call shape repeated `opts.calls` times
/// (new inputs every call). Deterministic for a given seed.
SimResult simulate(const CollectiveIR &ir, const Program &prog, const CallArgs &args, const Geometry &geo,
                   const SimOptions &opts);

/// Call arguments for a message of `bytes` bytes (dispatch convention of
/// the kind; V kinds get uneven counts with zeros). elemSize: 4 for
/// reductions (float), 1 for copies.
CallArgs argsForBytes(Kind k, int n, uint64_t bytes, uint64_t seed);

/// The small geometry simulations use: chunk 16 bytes, staging of
/// max(3, n) chunks per region (pull) or 2 chunks per source region (push),
/// so calls above a few chunks reuse slots cyclically; direct rounds of
/// 16..32 bytes, so a CTA's slice has several rounds.
Geometry simGeometry(const CollectiveIR &ir, const Sizes &s);

} // namespace purlin::ir
