/// @file CollectiveKind.h
/// @brief Which of the eleven collectives a declaration is, and how its
/// generated host API looks (count vs per-rank counts, root argument).
#pragma once

#include "purlin/AST.h"

namespace purlin::codegen {

/// The eleven collectives of the design brief, plus Unknown for
/// declarations that are none of them.
enum class CollectiveKind {
  AllGather, ReduceScatter, AllReduce, AllToAll,
  AllGatherV, ReduceScatterV, AllToAllV,
  Broadcast, Reduce, Scatter, Gather,
  Unknown
};

const char *toString(CollectiveKind);

/// Classifies a (sema-checked) declaration by its consume op, layouts,
/// root and, for a compose, its two stages:
///   copy   packed    -> scattered            AllGather   (root consumer: Gather)
///   reduce scattered -> packed               ReduceScatter
///   copy   scattered -> transposed           AllToAll
///   copy   scattered -> packed, producer     Scatter
///   compose<ReduceScatter, AllGather>        AllReduce
///   compose<Scatter, AllGather>              Broadcast
///   compose<ReduceScatter, Gather>           Reduce
/// and the V forms of the first three.
CollectiveKind classify(const Collective &c);

/// True when the runtime's launch template implements this kind, so the
/// emitter can generate code for it.
bool runtimeSupports(CollectiveKind k);

/// How the generated host function takes its sizes.
enum class SizeArgs {
  Count,            ///< `std::size_t count` (fixed layouts)
  Counts,           ///< `const std::size_t *counts` (counts[n], AllGatherV, ReduceScatterV)
  SendRecvCounts,   ///< `sendCounts`, `recvCounts` (AllToAllV)
};
SizeArgs sizeArgs(CollectiveKind k);

/// True for Broadcast, Reduce, Scatter and Gather (take `int root`).
bool isRooted(CollectiveKind k);

/// True when the collective reduces (dtype and op both matter); copy
/// collectives use dtype only for the element size and ignore op.
bool reduces(CollectiveKind k);

} // namespace purlin::codegen
