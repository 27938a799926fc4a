/// @file CudaBackend.h
/// @brief purlinc's `--emit=cuda` step: from a checked Module and its
/// PolicySet, emit and write `<out>.cu` and `<out>.h` (header beside the
/// .cu), or print both to a stream when no output file is given.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/EmitModel.h"
#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::codegen {

/// Supplies the verified SNAC IR of one collective (EmitCollective::ir) and
/// its notes (programs, roles, op ids), or an error message.
using IRProvider = std::function<std::optional<std::string>(const Collective &, const Policy &, EmitCollective &)>;

/// Emits every collective of `module` (already filtered by --collective).
/// `output`: the .cu path (header = same path with ".h"); "" or "-" prints
/// the header and then the .cu to `stdoutStream`, each after a marker line
/// `// ===== purlinc: <name> =====` (names from the input's stem).
/// Returns nullopt on success, else the error: a one-line message
/// (unsupported collective, missing policy, unwritable file, IR failure)
/// and, when it concerns one declaration, that alias's location.
struct CodegenFailure {
  std::string message;
  Location loc; ///< line 0: not tied to a declaration
};
/// What runCudaEmit writes: the .cu and .h, or (--emit=instances) only
/// the instantiation table of each collective (EmitInstances.h), or
/// (--emit=api) the host API as JSON (EmitApi.h), to `output` or the stream.
enum class CudaEmitWhat { Files, Instances, Api };
std::optional<CodegenFailure> runCudaEmit(const Module &module, const PolicySet &policies,
                                       const std::string &output, std::ostream &stdoutStream,
                                       const IRProvider &irOf, CudaEmitWhat what = CudaEmitWhat::Files);

} // namespace purlin::codegen
