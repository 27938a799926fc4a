/// @file Spelling.h
/// @brief How the emitter spells things in generated C++: identifiers
/// derived from alias names, runtime enum and type names, literals.
/// Every function is pure, so output depends only on the EmitInput.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/EmitModel.h"

namespace purlin::codegen {

/// The statement every reduction role begins with (indent it): the call's
/// reduction class and variant (purlin/reduction.h), which each reduce
/// site dispatches on once per contiguous range.
inline constexpr const char *kReductionStatement =
    "const Reduction red = reductionOf(pl.dtype, pl.op);  // the call's reduction class (purlin/reduction.h)";
/// The same in a kernel templated on `Pair` (the instantiation table's
/// specialized pairs): a constant there, the call's in the kernel of every
/// pair (kAnyPair).
inline constexpr const char *kPairReductionStatement =
    "const Reduction red = kernelReduction<Pair>(pl.dtype, pl.op);  // the call's reduction (a constant for one Pair)";

/// The name of a collective's reduction class set in the generated code
/// ("allReduce" -> "allReduce_Reductions"): the instantiation table's
/// classes, the template argument of every reduce site.
inline std::string reductionsName(const std::string &id) { return id + "_Reductions"; }

/// "ns::allReduce" -> {"ns", "allReduce"}.
std::vector<std::string> nameParts(const std::string &qualified);
/// The unqualified name ("allReduce").
std::string baseName(const std::string &qualified);
/// The enclosing namespaces joined by "::" ("ns"), "" if none.
std::string namespacePrefix(const std::string &qualified);
/// A flat C identifier ("ns_allReduce").
std::string flatName(const std::string &qualified);
/// The C ABI function name ("purlin_ns_allReduce").
std::string cFunctionName(const std::string &qualified);

/// Runtime spellings: "snac::Consume::Reduce", "snac::Layout::Scattered",
/// "snac::Root::None".
std::string spellConsume(ConsumeOp);
std::string spellLayout(Layout);
std::string spellRoot(Root);
/// DSL spellings for comments: "reduce", "scattered", "Root::none".
std::string dslConsume(ConsumeOp);
std::string dslLayout(Layout);

/// "sm_90"; "Root::producer" (DSL spelling). Local so that codegen does not
/// depend on the front end or policy libraries.
std::string archName(Arch);
std::string dslRoot(Root);

/// `snac::Transform<...>` for one stage; the Root argument is spelled only
/// when not None.
std::string spellTransform(const StageSpec &);
/// `snac::Transform<...>` or `snac::Compose<F, G>`.
std::string spellCollectiveType(const std::vector<StageSpec> &stages);

/// The runtime datapath type an AtomKind names for `arch`
/// (Native resolves to the arch's own datapath).
std::string spellDatapath(AtomKind kind, Arch arch);
/// For comments: "Atom (native datapath of sm_90: Hopper)".
std::string describeDatapath(AtomKind kind, Arch arch);

/// Unsigned literal with a digit separator-free decimal value and a
/// readable comment-friendly form elsewhere ("268435456").
std::string u64(uint64_t v);
/// "256 KiB", "1 MiB", "100 B" (exact units only; else bytes).
std::string humanBytes(uint64_t v);

} // namespace purlin::codegen
