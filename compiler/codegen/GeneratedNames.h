/// @file GeneratedNames.h
/// @brief Checks that the identifiers the emitter derives from alias names
/// (purlin_<flat>, <flat>_Policy/_Collective/_Datapath, purlin::gen::<ns>::
/// <name>) are distinct and do not shadow names the generated code uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "purlin/AST.h"

namespace purlin::codegen {

/// A clash found by checkGeneratedNames: the message and the alias it is about.
struct NameClash {
  std::string message;
  Location loc;
};

/// Names that must not be an alias name or one of its namespaces: the
/// generated code refers to them unqualified inside purlin::gen (types,
/// namespaces of the runtime and of the standard library).
const std::vector<std::string> &reservedGeneratedNames();

/// The C ABI names declared by purlin/purlin.h; `purlin_<flat>` must not be one.
const std::vector<std::string> &reservedCNames();

/// Checks the collectives that will be emitted, in order. Reports the first
/// clash at the later alias: two aliases with one flat spelling
/// ("a::x" and "a_x" both give purlin_a_x), a name or namespace in
/// reservedGeneratedNames(), a C name in reservedCNames().
std::optional<NameClash> checkGeneratedNames(const std::vector<const Collective *> &collectives);

} // namespace purlin::codegen
