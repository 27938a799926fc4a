/// @file Backend.cpp
/// @brief runBackend: where compiler/ir (--emit=ir, ir-json,
/// --print-ir-after-all, --simulate) and compiler/codegen (--emit=cuda,
/// --emit=instances, --emit=api)
/// plug into purlinc.
#include "Backend.h"
#include "Output.h"

#include <iostream>

#include "codegen/CudaBackend.h"
#include "codegen/FromIR.h"
#include "ir/Backend.h"

namespace purlin {

int runBackend(const Options &opts, const Module &m, const PolicySet &policies, Diagnostics &diags) {
  // --emit=cuda (the default): compiler/codegen writes <out>.cu and <out>.h.
  // --emit=instances: the instantiation table of each collective only;
  // --emit=api: the host API as JSON.
  const bool codegenOnly = opts.emit == EmitKind::Instances || opts.emit == EmitKind::Api;
  if ((opts.emit == EmitKind::Cuda || codegenOnly) && !opts.printIRAfterAll && !opts.simulateRanks) {
    const auto what = opts.emit == EmitKind::Instances ? codegen::CudaEmitWhat::Instances
                      : opts.emit == EmitKind::Api     ? codegen::CudaEmitWhat::Api
                                                       : codegen::CudaEmitWhat::Files;
    if (auto error = codegen::runCudaEmit(m, policies, opts.output, std::cout, codegen::irProvider(), what)) {
      diags.report(DiagKind::CodegenError, error->loc, error->message);
      return 1;
    }
    return 0;
  }
  // compiler/ir: --emit=ir, --emit=ir-json, --print-ir-after-all, --simulate.
  ir::IRRequest req;
  if (opts.simulateRanks) {
    req.mode = ir::IRRequest::Mode::Simulate;
    req.ranks = *opts.simulateRanks;
    req.bytes = opts.simulateBytes;
  } else if (opts.printIRAfterAll) {
    req.mode = ir::IRRequest::Mode::PrintAfterAll;
  } else if (opts.emit == EmitKind::IRJson) {
    req.mode = ir::IRRequest::Mode::Json;
  } else {
    // --emit=ast and --emit=cuda reach here only with --print-ir-after-all
    // or --simulate (handled above), so this is --emit=ir.
    req.mode = ir::IRRequest::Mode::Text;
  }
  Output out;
  if (!out.open(opts.output, diags)) return 1;
  auto problems = ir::runIR(req, m, policies, out.stream());
  for (auto &p : problems) diags.report(DiagKind::CodegenError, p.loc, p.message);
  bool written = out.finish(diags);
  return problems.empty() && written ? 0 : 1;
}

} // namespace purlin
