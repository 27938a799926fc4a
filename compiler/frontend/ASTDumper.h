/// @file ASTDumper.h
/// @brief `purlinc --emit=ast`: an indented tree of a Module, one node per
/// line, each with its `@file:line:col`; a compose shows its children.
#pragma once

#include "purlin/AST.h"

#include <ostream>

namespace purlin {

void dumpAST(const Module &m, std::ostream &os);
void dumpAST(const Collective &c, std::ostream &os, unsigned indent = 0);

} // namespace purlin
