/// @file CollectiveKind.h
/// @brief How the generated host API of a collective takes its sizes. The
/// kinds themselves, their classification and properties are
/// purlin/Collectives.h (the one definition, collectives.def).
#pragma once

#include "purlin/AST.h"
#include "purlin/Collectives.h"
#include "purlin/snac/kinds.h"

namespace purlin::codegen {

using purlin::CollectiveKind;

/// How the generated host function takes its sizes: the runtime's rule
/// (snac::def::sizeArgs, purlin/snac/kinds.h), which the C ABI's collective
/// table (purlin_collective) reports too.
using SizeArgs = snac::def::SizeArgs;
SizeArgs sizeArgs(CollectiveKind k);

} // namespace purlin::codegen
