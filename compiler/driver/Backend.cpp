/// @file Backend.cpp
/// @brief runBackend: THE place where compiler/ir and compiler/codegen plug
/// into purlinc. Until they land, every back-end request is an error.
#include "Backend.h"

#include <iostream>

#include "codegen/CudaBackend.h"
#include "codegen/FromIR.h"

namespace purlin {

// ===== BACK END ENTRY POINT: replace this body with calls into compiler/ir
// ===== (derive, passes, print, verify, simulate) and compiler/codegen.
int runBackend(const Options &opts, const Module &m, const PolicySet &policies, Diagnostics &diags) {
  // --emit=cuda (the default): compiler/codegen writes <out>.cu and <out>.h.
  if (opts.emit == EmitKind::Cuda && !opts.printIRAfterAll && !opts.simulateRanks) {
    if (auto error = codegen::runCudaEmit(m, policies, opts.output, std::cout, codegen::irNotesProvider())) {
      diags.report(DiagKind::CodegenError, error->loc, error->message);
      return 1;
    }
    return 0;
  }
  const char *what = "the back end";
  if (opts.simulateRanks)
    what = "--simulate";
  else if (opts.printIRAfterAll)
    what = "--print-ir-after-all";
  else if (opts.emit == EmitKind::IR)
    what = "--emit=ir";
  else if (opts.emit == EmitKind::IRJson)
    what = "--emit=ir-json";
  else if (opts.emit == EmitKind::Cuda)
    what = "--emit=cuda";
  diags.report(DiagKind::BackendNotAvailable, Location{}, what);
  return 1;
}

} // namespace purlin
