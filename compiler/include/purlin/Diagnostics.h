/// @file Diagnostics.h
/// @brief purlinc's diagnostics engine: `file:line:col: error: message`,
/// then the source line and a caret under the offending name.
///
/// Every diagnostic kind purlinc reports itself is listed in
/// DiagnosticKinds.def. The Clang front end's own diagnostics are printed
/// through emit() so that both look the same. Errors are counted; the
/// driver exits with status 1 when errorCount() > 0.
#pragma once

#include "purlin/AST.h"

#include <fmt/format.h>

#include <map>
#include <ostream>
#include <string>
#include <string_view>

namespace purlin {

enum class Severity { Error, Warning, Note };

enum class DiagKind {
#define DIAG(ID, SEV, FMT) ID,
#include "purlin/DiagnosticKinds.def"
};

Severity severityOf(DiagKind);
const char *formatOf(DiagKind);

class Diagnostics {
public:
  /// Diagnostics go to `os` (std::cerr in purlinc, a string stream in tests).
  explicit Diagnostics(std::ostream &os) : os_(os) {}

  /// Reports `kind` at `loc` with its format's arguments. A location with
  /// line 0 prints as `file: error: ...` (or `error: ...` with no file).
  template <class... Args>
  void report(DiagKind kind, const Location &loc, const Args &...args) {
    emit(severityOf(kind), loc, fmt::format(fmt::runtime(formatOf(kind)), args...));
  }

  /// Prints one diagnostic. `sourceLine`, if given, is printed under the
  /// message; otherwise the line is read from `loc.file` (cached). The caret
  /// goes under column `loc.col`, with `~` under the rest of an identifier.
  void emit(Severity sev, const Location &loc, std::string_view message,
            const std::string *sourceLine = nullptr);

  /// Registers the contents of a file so its lines need not be read again.
  void setSource(const std::string &file, std::string contents);

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }

private:
  bool lineOf(const std::string &file, unsigned line, std::string &out);

  std::ostream &os_;
  std::map<std::string, std::string> sources_;
  unsigned errors_ = 0;
  unsigned warnings_ = 0;
};

} // namespace purlin
