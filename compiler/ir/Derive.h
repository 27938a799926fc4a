/// @file Derive.h
/// @brief Derivation of a collective's latency and throughput programs from
/// its consume op, layouts, root and composition (paper §3.2, Listing 2,
/// Algorithm 1, Appendix A.1). Unbound: CTA counts come from bindPolicy,
/// slot-reuse guards and DONE acks from their own passes (Pipeline.h).
#pragma once

#include "ir/IR.h"

namespace purlin::ir {

/// Derives both programs for world size n; the throughput program pulls or
/// pushes as `transfer` says (the policy's world[n].throughput.transfer).
/// Throws IRError naming the declaration when (op, in, out, root) or the
/// composition is unsupported, or when push is asked for a collective
/// without a push derivation (DerivePush.h).
CollectiveIR derive(const Collective &c, int n, Transfer transfer = Transfer::Pull);

} // namespace purlin::ir
