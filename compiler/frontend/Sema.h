/// @file Sema.h
/// @brief Semantic checks of a parsed .pl Module, and the classification of
/// each collective as one of the eleven the runtime implements.
///
/// Supported leaves (op, in -> out, root), documented in docs/dsl.md:
///   AllGather      copy   packed     -> scattered
///   Gather         copy   packed     -> scattered   Root::consumer
///   ReduceScatter  reduce scattered  -> packed
///   AllToAll       copy   scattered  -> transposed
///   Scatter        copy   scattered  -> packed      Root::producer
///   AllGatherV / ReduceScatterV / AllToAllV: the V forms of the three above.
/// Supported compositions: AllReduce = compose<ReduceScatter, AllGather>,
/// Broadcast = compose<Scatter, AllGather>, Reduce = compose<ReduceScatter, Gather>.
#pragma once

#include "purlin/Collectives.h"

#include "purlin/AST.h"
#include "purlin/Diagnostics.h"
#include "purlin/Policy.h"

#include <cstddef>
#include <optional>
#include <string>

namespace purlin {

// CollectiveKind, toString and classify: purlin/Collectives.h (the one
// definition, collectives.def). A collective is supported when classify()
// gives a kind other than Unknown.

/// Limits of one .pl file: collectives (each is lowered, verified and
/// printed, about 0.1 s apiece) and the characters of an alias name (it is
/// spelled into every generated identifier of the collective).
constexpr std::size_t kMaxCollectivesPerFile = 256;
constexpr std::size_t kMaxAliasNameLength = 255;

/// Checks every collective of `m`; reports each problem once, at the alias
/// (a compose whose argument already failed is not reported again).
/// `policies` must define every policy named; `policySource` says where
/// they came from in messages ("the built-in sm_90 defaults", "'h200.json'").
/// Returns true when no error was reported. A module without collectives is
/// an error, and so are more than kMaxCollectivesPerFile, an alias name of
/// more than kMaxAliasNameLength characters (names the generated header
/// cannot use are codegen's check: codegen/GeneratedNames.h).
bool checkModule(const Module &m, const PolicySet &policies, const std::string &policySource,
                 Diagnostics &diags);

} // namespace purlin
