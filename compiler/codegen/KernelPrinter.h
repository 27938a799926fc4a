/// @file KernelPrinter.h
/// @brief The base of the CUDA printers of the kernel IR (ir/KernelIR.h),
/// as Halide's CodeGen_CUDA_Dev specializes CodeGen_C: the walk over a
/// statement list, the citation of the SNAC op a statement implements, and
/// one subclass per execution form printing the statements of its form
/// (packet warps: EmitLatency.cpp; throughput roles: EmitThroughput.cpp;
/// direct CTAs: EmitDirect.cpp; host graphs: EmitEngine.cpp).
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/KernelIR.h"

namespace purlin::codegen {

class KernelPrinter {
public:
  /// `id`: the collective's flat C++ identifier; `prog`: the SNAC program
  /// the kernel IR was lowered from (its ops are cited by id).
  KernelPrinter(const std::string &id, const ir::Program &prog);
  virtual ~KernelPrinter() = default;

protected:
  const std::string id_;
  std::ostringstream o_;

  const ir::Op &op(int id) const;
  /// The statement's citation at `pad`: `// %N <IR line>`, `// %N [n ==
  /// 2]` for the same op again in a specialization, "" when it has none.
  std::string citeOf(const ir::kernel::Stmt &s, const std::string &pad) const;
  /// Every statement of `stmts`, in order, at `pad`.
  void body(const std::vector<ir::kernel::Stmt> &stmts, const std::string &pad);
  /// One statement at `pad`: what the subclass's form prints for it.
  virtual void statement(const ir::kernel::Stmt &s, const std::string &pad) = 0;
  /// OnRanks: `if (r == root) {` / `if (r != root) {` around its body.
  void onRanks(const ir::kernel::Stmt &s, const std::string &pad);
  /// A statement of another execution form: an internal error (the
  /// lowering of this form does not make it), thrown as an EmitError so
  /// purlinc reports it instead of terminating.
  [[noreturn]] void notThisForm(const ir::kernel::Stmt &s, const char *form) const;

private:
  std::map<int, const ir::Op *> ops_;
};

} // namespace purlin::codegen
