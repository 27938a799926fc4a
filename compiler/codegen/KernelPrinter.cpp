/// @file KernelPrinter.cpp
/// @brief KernelPrinter: the shared walk of the kernel IR's printers.
#include "codegen/KernelPrinter.h"

#include "codegen/Cite.h"
#include "codegen/EmitLatency.h"
#include "ir/Printer.h"

namespace purlin::codegen {

KernelPrinter::KernelPrinter(const std::string &id, const ir::Program &prog) : id_(id) {
  // Statements name their ops by id: the program's ids must be its own
  // and distinct (numberOps), or a citation would name another op.
  for (const ir::Role &role : prog.roles)
    ir::forEachOp(role.body, [&](const ir::Op &o) {
      if (o.id < 0 || !ops_.emplace(o.id, &o).second)
        throw EmitError("internal error: the program's ops are not numbered (%" + std::to_string(o.id) +
                        " unnumbered or twice)");
    });
}

const ir::Op &KernelPrinter::op(int id) const {
  const auto it = ops_.find(id);
  if (it == ops_.end())
    throw EmitError("internal error: the kernel IR cites %" + std::to_string(id) + ", not an op of its program");
  return *it->second;
}

std::string KernelPrinter::citeOf(const ir::kernel::Stmt &s, const std::string &pad) const {
  if (s.op < 0) return "";
  if (s.citesAgain) return pad + "// %" + std::to_string(s.op) + " [n == 2]\n";
  return s.cites ? cite(op(s.op), pad) : "";
}

void KernelPrinter::body(const std::vector<ir::kernel::Stmt> &stmts, const std::string &pad) {
  for (const ir::kernel::Stmt &s : stmts) statement(s, pad);
}

void KernelPrinter::onRanks(const ir::kernel::Stmt &s, const std::string &pad) {
  o_ << pad << "if (r " << (s.on == ir::RunsOn::Root ? "==" : "!=") << " root) {  // " << ir::toString(s.on) << "\n";
  body(s.body, pad + "  ");
  o_ << pad << "}\n";
}

void KernelPrinter::notThisForm(const ir::kernel::Stmt &s, const char *form) const {
  throw EmitError(std::string("internal error: kernel IR statement kind ") + std::to_string(int(s.kind)) +
                  " is not one of " + form);
}

} // namespace purlin::codegen
