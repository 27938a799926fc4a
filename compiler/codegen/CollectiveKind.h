/// @file CollectiveKind.h
/// @brief How the generated host API of a collective takes its sizes. The
/// kinds themselves, their classification and properties are
/// purlin/Collectives.h (the one definition, collectives.def).
#pragma once

#include "purlin/AST.h"
#include "purlin/Collectives.h"

namespace purlin::codegen {

using purlin::CollectiveKind;

/// How the generated host function takes its sizes.
enum class SizeArgs {
  Count,            ///< `std::size_t count` (fixed layouts)
  Counts,           ///< `const std::size_t *counts` (counts[n], AllGatherV, ReduceScatterV)
  SendRecvCounts,   ///< `sendCounts`, `recvCounts` (AllToAllV)
};
/// From the layouts: a V input read per (source, destination) pair
/// (transposedV output: AllToAllV) takes send and receive counts; any other
/// V layout one count per rank; fixed layouts one count.
SizeArgs sizeArgs(CollectiveKind k);

} // namespace purlin::codegen
