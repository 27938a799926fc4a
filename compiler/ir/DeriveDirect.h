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

/// The direct program's copy-engine form (Program::engine) of `k` for n
/// ranks (directDerivable(k, n) must hold): one role `host`, the enqueue
/// sequence of the call's graph on two streams (docs/snac-protocol.md
/// "Direct program", copy-engine form):
///   kernel arrive (ARRIVED pair, as above, CTA index 0);
///   AllGather/AllToAll: the own block copied on the branch (fork, join),
///   the peers' blocks by cudaMemcpyAsync on the stream (k = r+1, ...,
///   r-1); kernel finish: PUT(r, 0) to every peer, wait for theirs;
///   ReduceScatter/AllReduce (n == 2, peer k): per engine chunk c, the
///   branch copies chunk c of partition k into k's output and writes
///   E_PUT(c) = 1 there (stream memory operation); the stream, after the
///   own push of chunk c (edge), runs the reduce kernel of chunk c (waits
///   E_PUT(c), reduces in place); AllReduce: the branch copies each reduced
///   chunk back and writes E_BACK(c) = 1; join; kernel finish (AllReduce:
///   waits every E_BACK) resets E_PUT / E_BACK and ends the call.
Program engineProgram(Kind k, int n);

} // namespace purlin::ir
