/// @file FromModule.h
/// @brief Builds the emitter's input from what purlinc has: the checked
/// Module (declarations), the PolicySet, and the collectives selected with
/// --collective. The SNAC IR's facts (programs, roles, op ids) are added
/// per collective with attachProgramNotes (FromIR.h) when the IR exists.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/EmitModel.h"
#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::codegen {

/// Result of buildEmitInput: the input, or a user-facing error message.
struct BuildResult {
  EmitInput input;
  std::optional<std::string> error;
  Location errorLoc; ///< the alias the error is about (line 0 if none)
};

/// `selected`: alias names (as declared, or unqualified) to emit; empty =
/// every alias in the file. `cuPath`: where the .cu goes (its file name and
/// the header's file name are recorded; directories never reach the output).
/// Errors: a selected name the file does not declare, a policy missing from
/// `policies`, an empty file, names that clash in the generated code.
BuildResult buildEmitInput(const Module &module, const PolicySet &policies,
                           const std::vector<std::string> &selected,
                           const std::string &cuPath);

/// The file-name part of a path ("dir/a.pl" -> "a.pl").
std::string fileNameOf(const std::string &path);

} // namespace purlin::codegen
