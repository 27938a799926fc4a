/// @file Cite.h
/// @brief The comment every printed statement follows: `// %N <the op's
/// --emit=ir line>` (docs/codegen.md), shared by the program printers.
#pragma once

#include <string>

#include "ir/IR.h"
#include "ir/Printer.h"

namespace purlin::codegen {

/// `pad` + "// " + the op's IR line: the statements after it implement op N.
inline std::string cite(const ir::Op &op, const std::string &pad) { return pad + "// " + ir::opLine(op) + "\n"; }

} // namespace purlin::codegen
