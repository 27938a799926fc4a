/// @file ClangDiagnostics.cpp
/// @brief Converts one Clang diagnostic into a purlin diagnostic.
#include "ClangDiagnostics.h"

#include <clang/Basic/SourceManager.h>
#include <llvm/ADT/SmallString.h>

namespace purlin {

void ClangDiagnosticPrinter::HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                                              const clang::Diagnostic &info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info); // keeps Clang's counts
  Severity sev;
  switch (level) {
  case clang::DiagnosticsEngine::Ignored: return;
  case clang::DiagnosticsEngine::Note:
  case clang::DiagnosticsEngine::Remark: sev = Severity::Note; break;
  case clang::DiagnosticsEngine::Warning: sev = Severity::Warning; break;
  default: sev = Severity::Error; break;
  }
  llvm::SmallString<256> msg;
  info.FormatDiagnostic(msg);

  Location loc;
  std::string line;
  bool haveLine = false;
  if (info.hasSourceManager() && info.getLocation().isValid()) {
    const clang::SourceManager &sm = info.getSourceManager();
    clang::SourceLocation at = sm.getExpansionLoc(info.getLocation());
    clang::PresumedLoc p = sm.getPresumedLoc(at);
    if (p.isValid()) {
      loc.file = p.getFilename();
      loc.line = p.getLine();
      loc.col = p.getColumn();
      // The source line, from Clang's own buffer (also right for virtual files).
      bool invalid = false;
      auto [fid, offset] = sm.getDecomposedLoc(at);
      llvm::StringRef buf = sm.getBufferData(fid, &invalid);
      if (!invalid && offset <= buf.size()) {
        size_t b = buf.rfind('\n', offset); // last newline before the location
        b = b == llvm::StringRef::npos ? 0 : b + 1;
        size_t e = buf.find('\n', offset);
        line = buf.substr(b, e == llvm::StringRef::npos ? llvm::StringRef::npos : e - b).str();
        if (!line.empty() && line.back() == '\r')
          line.pop_back();
        haveLine = true;
      }
    }
  }
  diags_.emit(sev, loc, msg.str(), haveLine ? &line : nullptr);
}

} // namespace purlin
