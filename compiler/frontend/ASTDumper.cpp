/// @file ASTDumper.cpp
/// @brief Printer for --emit=ast. Output format (stable, for FileCheck):
///
///   Module 'FILE'
///     Policy 'decode'                       (declared policy types, if any)
///     Compose 'NAME' [KIND] reduce, scattered -> scattered, root none @FILE:L:C
///       SNAC 'F' [KIND] atom Atom, policy Policy, reduce, scattered -> packed, root none @FILE:L:C
///       SNAC 'G' ...
#include "ASTDumper.h"

#include "Sema.h"

namespace purlin {
namespace {

/// Deeper trees only come from unchecked input; stop instead of flooding.
constexpr unsigned kMaxDepth = 64;

void indentBy(std::ostream &os, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    os << "  ";
}

void printLoc(std::ostream &os, const Location &l) { os << " @" << l.file << ':' << l.line << ':' << l.col; }

} // namespace

void dumpAST(const Collective &c, std::ostream &os, unsigned indent) {
  indentBy(os, indent);
  if (indent > kMaxDepth) {
    os << "...\n";
    return;
  }
  if (c.notACollective) {
    os << "NotACollective '" << c.name << "'";
    printLoc(os, c.loc);
    os << '\n';
    return;
  }
  os << (c.isCompose ? "Compose '" : "SNAC '") << c.name << "'";
  if (const CollectiveKind k = classify(c); k != CollectiveKind::Unknown)
    os << " [" << toString(k) << "]";
  if (!c.isCompose)
    os << " atom " << toString(c.atom) << ", policy " << c.policy << ",";
  os << ' ' << toString(c.op) << ", " << toString(c.in) << " -> " << toString(c.out) << ", root "
     << toString(c.root);
  printLoc(os, c.loc);
  os << '\n';
  for (const auto &child : c.children)
    if (child)
      dumpAST(*child, os, indent + 1);
}

void dumpAST(const Module &m, std::ostream &os) {
  os << "Module '" << m.file << "'\n";
  for (const auto &p : m.declaredPolicies)
    os << "  Policy '" << p << "'\n";
  for (const auto &c : m.collectives)
    dumpAST(*c, os, 1);
}

} // namespace purlin
