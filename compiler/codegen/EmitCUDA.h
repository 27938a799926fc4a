/// @file EmitCUDA.h
/// @brief The CUDA emitter: one .cu and one .h per .pl file, thin and
/// deterministic (same EmitInput -> byte-identical text). The .cu holds,
/// per collective, a policy struct with the IR's constants per world size,
/// the runtime Transform/Compose type, and the host API (C++ and C ABI)
/// that calls purlin::snac::launch; the .h declares that API.
#pragma once

#include <optional>
#include <string>

#include "codegen/EmitModel.h"

namespace purlin::codegen {

/// The header text (API declarations; includable from C and C++).
std::string emitHeader(const EmitInput &input);

/// The .cu text (policy structs, instantiations, host API definitions).
std::string emitSource(const EmitInput &input);

/// Both files (every collective of collectives.def runs; a program the
/// printers have no form for was reported when the input was built).
EmitOutput emitCUDA(const EmitInput &input);

/// Where the two files go for `-o <cuPath>`: cuPath itself and the same
/// path with its extension replaced by ".h" (or ".h" appended if the name
/// has none). Returns {cu, h}.
std::pair<std::string, std::string> outputPaths(const std::string &cuPath);

/// Writes `text` to `path`; on failure returns a message naming the path
/// and the OS error, else nullopt.
std::optional<std::string> writeFile(const std::string &path, const std::string &text);

} // namespace purlin::codegen
