/// @file AST.h
/// @brief The Clang-free AST of a .pl file: one node per collective alias.
///
/// The front end (compiler/frontend) walks Clang's AST of a .pl file and
/// builds these nodes; everything after the front end (sema, IR derivation,
/// code generation) sees only this file's types, never Clang's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "purlin/vocabulary.h"

namespace purlin {

/// A position in the user's source: 1-based line and column.
struct Location {
  std::string file;
  unsigned line = 0;
  unsigned col = 0;
};

// ConsumeOp, Layout, Root, DatapathKind: purlin/vocabulary.h (from
// vocabulary.def, the one definition the runtime's Transform types and
// Atom tags use too).

/// The datapath named in the Atom position (vocabulary.def's rows).
using AtomKind = DatapathKind;

const char *toString(ConsumeOp);
const char *toString(Layout);
const char *toString(Root);
const char *toString(AtomKind);

// isVariable(Layout): purlin/vocabulary.h.

/// One collective declaration.
/// A leaf is `using NAME = SNAC<Atom, Policy, op, in, out[, root]>;`.
/// A composition is `using NAME = compose<F, G>;`: F runs, G consumes F's
/// intermediate result in place; `children` = {F, G}, and `op`/`in`/`out`/
/// `root` are derived (op of F, F's input, G's output, the non-None root).
struct Collective {
  std::string name;          ///< the alias's name, qualified if in a namespace ("ns::allReduce")
  Location loc;              ///< location of the alias name
  bool isCompose = false;
  AtomKind atom = AtomKind::Native;
  std::string policy = "Policy"; ///< "Policy" or a user-declared type deriving from it
  ConsumeOp op = ConsumeOp::Copy;
  Layout in = Layout::Packed;
  Layout out = Layout::Packed;
  Root root = Root::None;
  std::vector<std::shared_ptr<const Collective>> children; ///< {F, G} of a compose

  /// What the front end could not map onto the fields above, for sema to
  /// report (a Module that passed sema has none of these set):
  std::string unknownAtom;     ///< spelling of a non-datapath type in the Atom position
  std::string unknownPolicy;   ///< spelling of a non-policy type in the Policy position
  std::string invalidArgument; ///< e.g. "consume op value 7" (an out-of-range enum cast)
  /// A compose argument that names no SNAC/compose: a placeholder child
  /// whose `name` is the argument as written and whose loc is where.
  bool notACollective = false;
};

/// Everything purlinc found in one .pl file, in source order.
struct Module {
  std::string file;
  std::vector<std::shared_ptr<const Collective>> collectives;
  /// Policy type names the file declares (`struct decode : Policy {};`).
  std::vector<std::string> declaredPolicies;
};

} // namespace purlin
