/// @file DerivePush.h
/// @brief The push transfer's throughput program (docs/snac-protocol.md,
/// "Throughput program, push transfer") and its slot-reuse guards.
#pragma once

#include "ir/IR.h"

namespace purlin::ir {

/// True for the collectives with a push derivation: AllGather,
/// ReduceScatter, AllReduce (compose) and AllToAll.
bool pushDerivable(Kind k);

/// The transfer the throughput program of `k` uses when the policy asks for
/// `policyTransfer`: push is a per-collective preference, honoured only
/// where pushDerivable(k); every other collective pulls (as the runtime does).
Transfer boundTransfer(Kind k, Transfer policyTransfer);

/// The note printed after a pull bound for a push policy.
inline constexpr const char *kPushOnlyFor = "push is derived for AllGather, ReduceScatter, AllReduce, AllToAll only";

/// How a push role's CTAs share its chunks. Sliced: every CTA moves its
/// slice of every chunk and the last arriver of a counter notifies (the
/// pull program's scheme). PerChunk: step j of a role's loop belongs to CTA
/// j mod ctas, which moves the whole chunk and notifies itself.
enum class PushCtas { Sliced, PerChunk };

/// The scheme derive() uses, and the printed push roles run: every chunk
/// belongs to one worker (a lane of a CTA, runtime lane.cuh) of its role.
constexpr PushCtas kPushCtas = PushCtas::PerChunk;

/// The push throughput program of `k` (pushDerivable(k) must hold):
/// stage writes chunk c of what rank k needs into k's region r (remote
/// write), the last arriver fences and notifies STAGED to k; consumers wait
/// STAGED and read their own regions; AllReduce's reducers forward their
/// partition into every peer's Y region and notify REDUCED after a fence.
Program throughputPush(Kind k, PushCtas ctas = kPushCtas);

/// CONSUMED / GATHERED waits before remote writes of a reused slot, and the
/// matching notifies (to the region's source) after each local read.
void insertPushSlotReuseGuards(Program &p);

} // namespace purlin::ir
