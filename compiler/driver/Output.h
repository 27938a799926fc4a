/// @file Output.h
/// @brief Where purlinc writes a text result (AST dump, IR, IR JSON,
/// simulator report): the -o file, or standard output when -o is empty or
/// "-". Open and write failures are CannotWrite diagnostics (exit 1).
#pragma once

#include <fstream>
#include <ostream>
#include <string>

#include "purlin/Diagnostics.h"

namespace purlin {

class Output {
public:
  /// Opens `path` for writing (truncating), or selects std::cout. False
  /// (after reporting CannotWrite) when the file cannot be opened.
  bool open(const std::string &path, Diagnostics &diags);
  /// The stream to write to (valid after a successful open()).
  std::ostream &stream();
  /// Flushes (and closes a file), then checks that every write succeeded;
  /// false after reporting CannotWrite (e.g. a full disk, /dev/full).
  bool finish(Diagnostics &diags);

private:
  std::string path_;
  bool toStdout_ = true;
  std::ofstream file_;
};

} // namespace purlin
