/// @file Diagnostics.cpp
/// @brief Formatting of diagnostics: header line, source excerpt, caret.
#include "purlin/Diagnostics.h"

#include <fstream>
#include <sstream>

namespace purlin {

Severity severityOf(DiagKind k) {
  switch (k) {
#define DIAG(ID, SEV, FMT)                                                                        \
  case DiagKind::ID:                                                                              \
    return Severity::SEV;
#include "purlin/DiagnosticKinds.def"
  }
  return Severity::Error;
}

const char *formatOf(DiagKind k) {
  switch (k) {
#define DIAG(ID, SEV, FMT)                                                                        \
  case DiagKind::ID:                                                                              \
    return FMT;
#include "purlin/DiagnosticKinds.def"
  }
  return "";
}

namespace {

const char *label(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "error";
}

bool isIdentChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// Longest excerpt of a source line printed; longer lines are cut around
/// the caret (a 1 MB line must not flood the terminal).
constexpr size_t kMaxExcerpt = 160;

} // namespace

void Diagnostics::setSource(const std::string &file, std::string contents) {
  sources_[file] = std::move(contents);
}

bool Diagnostics::lineOf(const std::string &file, unsigned line, std::string &out) {
  auto it = sources_.find(file);
  if (it == sources_.end()) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
      return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    it = sources_.emplace(file, ss.str()).first;
  }
  const std::string &text = it->second;
  size_t pos = 0;
  for (unsigned l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos)
      return false;
    ++pos;
  }
  if (pos > text.size())
    return false;
  size_t end = text.find('\n', pos);
  out = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!out.empty() && out.back() == '\r')
    out.pop_back();
  return true;
}

void Diagnostics::emit(Severity sev, const Location &loc, std::string_view message,
                       const std::string *sourceLine) {
  if (sev == Severity::Error)
    ++errors_;
  else if (sev == Severity::Warning)
    ++warnings_;

  if (!loc.file.empty()) {
    os_ << loc.file << ':';
    if (loc.line > 0)
      os_ << loc.line << ':' << loc.col << ':';
    os_ << ' ';
  }
  os_ << label(sev) << ": " << message << '\n';
  if (loc.line == 0 || loc.col == 0)
    return;

  std::string line;
  if (sourceLine)
    line = *sourceLine;
  else if (!lineOf(loc.file, loc.line, line))
    return;

  // Column is 1-based, in bytes (as Clang counts). Cut a window around it
  // for long lines.
  size_t col = loc.col - 1;
  if (col > line.size())
    col = line.size();
  size_t begin = 0;
  std::string prefix;
  if (line.size() > kMaxExcerpt) {
    begin = col > kMaxExcerpt / 2 ? col - kMaxExcerpt / 2 : 0;
    if (begin > 0)
      prefix = "...";
  }
  std::string excerpt = line.substr(begin, kMaxExcerpt);
  std::string suffix = begin + excerpt.size() < line.size() ? "..." : "";
  for (char &c : excerpt) // control bytes (binary input) print as '?'
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
      c = '?';
  os_ << prefix << excerpt << suffix << '\n';

  // One caret column per code point: UTF-8 continuation bytes (10xxxxxx)
  // take no column of their own.
  std::string caret(prefix.size(), ' ');
  size_t rel = col - begin;
  for (size_t i = 0; i < rel && i < excerpt.size(); ++i)
    if ((static_cast<unsigned char>(excerpt[i]) & 0xC0) != 0x80)
      caret += excerpt[i] == '\t' ? '\t' : ' ';
  caret += '^';
  for (size_t i = rel + 1; i < excerpt.size() && isIdentChar(excerpt[rel]) && isIdentChar(excerpt[i]); ++i)
    caret += '~';
  os_ << caret << '\n';
}

} // namespace purlin
