/// @file CudaBackend.cpp
/// @brief The `--emit=cuda` step of purlinc: build the emitter input, add IR
/// notes, emit, write both files (or print them).
#include "codegen/CudaBackend.h"

#include "codegen/EmitCUDA.h"
#include "codegen/FromIR.h"
#include "codegen/EmitInstances.h"
#include "codegen/FromModule.h"
#include "codegen/Spelling.h"

namespace purlin::codegen {

namespace {

/// "dir/allreduce.pl" -> "allreduce".
std::string stemOf(const std::string &path) {
  std::string name = fileNameOf(path);
  std::size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

} // namespace

std::optional<CodegenFailure> runCudaEmit(const Module &module, const PolicySet &policies,
                                       const std::string &output, std::ostream &stdoutStream,
                                       const IRProvider &irOf, CudaEmitWhat what) {
  const bool toStdout = output.empty() || output == "-";
  const std::string cuPath = toStdout ? stemOf(module.file) + ".cu" : output;
  BuildResult built = buildEmitInput(module, policies, {}, cuPath);
  if (built.error) return CodegenFailure{*built.error, built.errorLoc};
  // The IR of every emitted collective, verified, then its device code
  // printed from that very IR object.
  std::size_t i = 0;
  for (const auto &c : module.collectives) {
    if (!c || i >= built.input.collectives.size() || built.input.collectives[i].name != c->name) continue;
    EmitCollective &e = built.input.collectives[i++];
    if (!irOf) return CodegenFailure{"internal: no SNAC IR provider", c->loc};
    if (auto err = irOf(*c, e.policy, e)) return CodegenFailure{*err, c->loc};
    try {
      printPrograms(e);
    } catch (const EmitError &err) {
      return CodegenFailure{"code generation for " + c->name + " (" + toString(e.kind) + "): " + err.what(), c->loc};
    }
  }
  if (what == CudaEmitWhat::Instances) {
    std::string text;
    for (const EmitCollective &e : built.input.collectives)
      text += "// ---- " + e.name + ": instantiation table ----\n" + printInstantiationTable(e, flatName(e.name)) + "\n";
    if (toStdout) {
      stdoutStream << text;
      stdoutStream.flush();
      return stdoutStream ? std::nullopt : std::optional<CodegenFailure>(CodegenFailure{"cannot write to standard output", {}});
    }
    if (auto err = writeFile(output, text)) return CodegenFailure{*err, {}};
    return std::nullopt;
  }
  EmitOutput out = emitCUDA(built.input);
  if (toStdout) {
    stdoutStream << "// ===== purlinc: " << built.input.headerName << " =====\n"
                 << out.h << "// ===== purlinc: " << built.input.cuName << " =====\n"
                 << out.cu;
    stdoutStream.flush();
    if (!stdoutStream) return CodegenFailure{"cannot write to standard output", {}};
    return std::nullopt;
  }
  auto [cu, h] = outputPaths(output);
  if (cu == h) return CodegenFailure{"output '" + output + "' would be overwritten by its own header", {}};
  if (auto err = writeFile(h, out.h)) return CodegenFailure{*err, {}};
  if (auto err = writeFile(cu, out.cu)) return CodegenFailure{*err, {}};
  return std::nullopt;
}

} // namespace purlin::codegen
