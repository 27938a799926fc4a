/// @file EmitApi.h
/// @brief `purlinc --emit=api`: the host API of each collective of a .pl as
/// JSON, for bindings that load the built library themselves (the Python
/// package's JIT, purlin.jit): each C function, the arguments it takes
/// (purlin.h's purlin_collective_t rule: sizes, reduces, rooted) and its
/// C parameter list, as the generated header declares them.
#pragma once

#include <string>

#include "codegen/EmitModel.h"

namespace purlin::codegen {

/// The format tag of the document (a binding refuses another).
inline constexpr const char *kApiFormat = "purlin-api-1";

/// The JSON document (one object, ending in a newline):
///   {"format": "purlin-api-1", "source": "a.pl", "arch": "sm_90",
///    "collectives": [{"name": "ns::allReduce", "kind": "AllReduce",
///      "function": "purlin_ns_allReduce", "line": 3, "sizes": 0,
///      "reduces": true, "rooted": false,
///      "params": [{"name": "comm", "c_type": "purlin_comm_t"}, ...],
///      "doc": ["in:  count elements; ..."]}, ...]}
/// `sizes` is purlin.h's: 0 a count, 1 counts per rank, 2 send/receive
/// counts, displacements and maxCount.
std::string printApiJson(const EmitInput &in);

} // namespace purlin::codegen
