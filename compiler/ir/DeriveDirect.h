/// @file DeriveDirect.h
/// @brief The direct program (docs/snac-protocol.md, "Direct program (no
/// staging; calls captured in a CUDA graph)"): every CTA c writes its slice
/// straight into the destination ranks' output buffers after their CTA c
/// ARRIVED, and announces it with PUT (BACK for AllReduce's results).
#pragma once

#include <string>

#include "ir/IR.h"

namespace purlin::ir {

/// True where the runtime has a direct program: AllGather and AllToAll for
/// any n, ReduceScatter and AllReduce for n == 2.
bool directDerivable(Kind k, int n);

/// Why there is no direct program for (k, n), "" when directDerivable.
std::string directNotDerivable(Kind k, int n);

/// The direct program of `k` for n ranks (directDerivable(k, n) must hold).
/// One role `direct` of directCtas CTAs; CTA c of rank r:
///   notify ARRIVED(r, c) to every peer; wait ARRIVED(p, c) from every peer;
///   AllGather/AllToAll: copy its slice of what rank k needs into O_k[r] for
///   k = r+1, ..., r (own block last, local), fence, notify PUT(r, c) to
///   every peer, wait PUT(p, c) from every peer;
///   ReduceScatter/AllReduce (n == 2, peer k): for each round j of the slices:
///   copy round j of X_r[k] into k's output, fence, PUT(r, c) = sig(e, j) to
///   k; wait PUT(k, c) >= sig(e, j); reduce round j of the own partition in
///   place (ascending rank order, own contribution from X_r[r]); AllReduce:
///   copy the result into O_k[r], fence, BACK(r, c) = sig(e, j) to k; after
///   the loop wait BACK(k, c) >= sig(e, last round).
Program directProgram(Kind k, int n);

} // namespace purlin::ir
