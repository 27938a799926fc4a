/// @file ClangDiagnostics.h
/// @brief A clang::DiagnosticConsumer that prints Clang's diagnostics through
/// purlin::Diagnostics (same `file:line:col: error:` form, source line, caret).
#pragma once

#include "purlin/Diagnostics.h"

#include <clang/Basic/Diagnostic.h>

namespace purlin {

class ClangDiagnosticPrinter : public clang::DiagnosticConsumer {
public:
  explicit ClangDiagnosticPrinter(Diagnostics &diags) : diags_(diags) {}
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override;

private:
  Diagnostics &diags_;
};

} // namespace purlin
