/// @file purlin.h
/// @brief The Purlin DSL vocabulary: SNAC<...>, compose<...>, consume ops,
/// layouts, roots, datapaths and the default codesign Policy.
///
/// purlinc force-includes this header when it parses a .pl file, so a .pl
/// needs no #include. It is also an ordinary C++20 header: a C++ file may
/// `#include <purlin/dsl/purlin.h>` and then a .pl file, and every
/// declaration's properties are available as `static constexpr` members
/// (`allReduce::in`, `allReduce::op`, ...).
///
/// Name visibility: the vocabulary lives in `purlin::dsl`; the short names a
/// .pl uses (`copy`, `reduce`, `packed`, `SNAC`, `Root`, ...) are brought
/// into the global namespace by ONE using-directive, never by declarations.
/// A .pl may therefore declare a global alias with a vocabulary name (the
/// paper's `using reduce = compose<reduceScatter, gather>;`): the alias is a
/// distinct global entity and the earlier uses of `reduce` as a consume op
/// are not affected. (A use of the bare name *after* such an alias is
/// ambiguous; write `ConsumeOp::reduce` there.)
#pragma once

namespace purlin::dsl {

/// How a rank consumes its peers' contributions.
enum class ConsumeOp {
#define PURLIN_CONSUME_OP(Name, dsl) dsl,
#include "purlin/vocabulary.def"
};

/// Buffer layouts (paper §3.1). packed: one contiguous contribution;
/// scattered: partitions indexed by rank; transposed: partition p of a
/// source goes to destination p and lands in source-rank order. The V
/// forms keep the relationship with partition sizes given at run time.
enum class DataLayout {
#define PURLIN_LAYOUT(Name, dsl) dsl,
#include "purlin/vocabulary.def"
};

/// Which ranks produce or consume (paper Appendix A.1). The root rank itself
/// is a run-time argument.
enum class Root {
#define PURLIN_ROOT(Name, dsl) dsl,
#include "purlin/vocabulary.def"
};

/// Datapaths for the Atom position. `Atom` means the native datapath of the
/// target architecture given to purlinc (--arch); the others force one.
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) struct dsl {};
#include "purlin/vocabulary.def"

/// The default codesign policy. A .pl declares more with
/// `struct decode : Policy {};`; their numbers come from the policy JSON.
struct Policy {};

template <class T> inline constexpr bool isDatapath = false;
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) template <> inline constexpr bool isDatapath<dsl> = true;
#include "purlin/vocabulary.def"

constexpr bool isVariable(DataLayout l) {
  return l == DataLayout::packedV || l == DataLayout::scatteredV || l == DataLayout::transposedV;
}

/// One collective: a layout transformation `In -> Out` whose consumers apply
/// `Op`, restricted to a root by `R`, moved by datapath `A` with the numbers
/// of policy `P`. Naming the type (in an alias) instantiates nothing; the
/// checks below run only when a C++ program uses the members.
template <class A, class P, ConsumeOp Op, DataLayout In, DataLayout Out, Root R = Root::none>
struct SNAC {
  static_assert(isDatapath<A>, "SNAC: the first argument must be a datapath "
                               "(Atom or a named one of purlin/vocabulary.def, e.g. Hopper)");
  using atom = A;
  using policy = P;
  static constexpr bool isCollective = true;
  static constexpr bool isCompose = false;
  static constexpr ConsumeOp op = Op;
  static constexpr DataLayout in = In;
  static constexpr DataLayout out = Out;
  static constexpr Root root = R;
};

/// F runs, then G consumes F's intermediate result in place; one kernel.
/// Requires F::out == G::in. op is F's, in is F's, out is G's, and root is
/// whichever of F and G is rooted (at most one).
template <class F, class G>
struct compose {
  static_assert(F::isCollective && G::isCollective,
                "compose<F, G>: both arguments must be collectives");
  static_assert(F::out == G::in, "compose<F, G>: F's output layout must be G's input layout");
  using first = F;
  using second = G;
  static constexpr bool isCollective = true;
  static constexpr bool isCompose = true;
  static constexpr ConsumeOp op = F::op;
  static constexpr DataLayout in = F::in;
  static constexpr DataLayout out = G::out;
  static constexpr Root root = F::root != Root::none ? F::root : G::root;
};

/// The names a .pl uses unqualified. Brought into the global namespace by the
/// using-directive below (see the file comment for why not declarations).
namespace vocabulary {
using purlin::dsl::ConsumeOp;
using purlin::dsl::DataLayout;
using purlin::dsl::Root;
#define PURLIN_DATAPATH(Name, Spelling, MinArch, NativeOn) using purlin::dsl::Spelling;
#include "purlin/vocabulary.def"
using purlin::dsl::Policy;
using purlin::dsl::SNAC;
using purlin::dsl::compose;
using enum purlin::dsl::ConsumeOp;
using enum purlin::dsl::DataLayout;
} // namespace vocabulary

} // namespace purlin::dsl

using namespace purlin::dsl::vocabulary;
