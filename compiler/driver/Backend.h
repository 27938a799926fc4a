/// @file Backend.h
/// @brief The driver's single entry into the SNAC IR and CUDA back end.
#pragma once

#include "Options.h"
#include "purlin/AST.h"
#include "purlin/Diagnostics.h"
#include "purlin/Policy.h"

namespace purlin {

/// Runs everything after the front end for `--emit=ir|ir-json|cuda`,
/// `--print-ir-after-all` and `--simulate`. `m` passed sema and holds only
/// the collectives selected by --collective. Returns the process exit status.
int runBackend(const Options &opts, const Module &m, const PolicySet &policies, Diagnostics &diags);

} // namespace purlin
