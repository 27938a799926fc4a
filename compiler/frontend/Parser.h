/// @file Parser.h
/// @brief The purlinc front end: parses a .pl file as C++20 with Clang
/// libTooling (vocabulary header force-included) and collects every alias
/// that names SNAC<...> or compose<...> into a Clang-free purlin::Module.
#pragma once

#include "purlin/AST.h"
#include "purlin/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace purlin {

struct ParseOptions {
  /// Extra arguments for Clang (e.g. "-DNAME=1", "-I dir").
  std::vector<std::string> clangArgs;
};

/// Parses `path`. Clang's own diagnostics are printed through `diags` with
/// locations in the user's files. Returns std::nullopt when the file cannot
/// be read or Clang reported an error (diags.errorCount() > 0 then).
/// Aliases are collected from the main file and the files it includes
/// (not from the vocabulary header or system headers), in source order.
/// The result is unchecked: run checkModule (Sema.h) before using it.
std::optional<Module> parseFile(const std::string &path, Diagnostics &diags,
                                const ParseOptions &opts = {});

/// Same, for a buffer already in memory that is named `path` in locations.
std::optional<Module> parseBuffer(const std::string &path, const std::string &code,
                                  Diagnostics &diags, const ParseOptions &opts = {});

/// The vocabulary header's text (compiler/include/purlin/dsl/purlin.h),
/// embedded in purlinc at build time.
const char *vocabularyHeader();

} // namespace purlin
