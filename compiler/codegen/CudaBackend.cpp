/// @file CudaBackend.cpp
/// @brief The `--emit=cuda` step of purlinc: build the emitter input, add IR
/// notes, emit, write both files (or print them).
#include "codegen/CudaBackend.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <sys/stat.h>

#include "codegen/EmitApi.h"
#include "codegen/EmitCUDA.h"
#include "codegen/FromIR.h"
#include "codegen/EmitInstances.h"
#include "codegen/FromModule.h"
#include "codegen/Spelling.h"

namespace purlin::codegen {

namespace {
/// Whether `path` is a regular file holding exactly `text`.
bool sameContent(const std::string &path, const std::string &text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || std::size_t(st.st_size) != text.size()) return false;
  std::ifstream in(path, std::ios::binary);
  const std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return have == text;  // a read that failed differs, so the file is rewritten
}

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
  // The instantiation table and the API alone name the files as `-o NAME.cu` would.
  const std::string cuPath = toStdout || what != CudaEmitWhat::Files ? stemOf(module.file) + ".cu" : output;
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
  if (what != CudaEmitWhat::Files) {
    std::string text;
    if (what == CudaEmitWhat::Api)
      text = printApiJson(built.input);
    else
      for (const EmitCollective &e : built.input.collectives)
        text += "// ---- " + e.name + ": instantiation table ----\n" + printInstantiationTable(built.input, e, flatName(e.name)) + "\n";
    if (toStdout) {
      stdoutStream << text;
      stdoutStream.flush();
      return stdoutStream ? std::nullopt : std::optional<CodegenFailure>(CodegenFailure{"cannot write to standard output", {}});
    }
    if (auto err = writeFile(output, text)) return CodegenFailure{*err, {}};
    return std::nullopt;
  }
  EmitOutput out = emitCUDA(built.input);
  const EmitInput &in = built.input;
  // In dependency order: the API header, the plan header, the programs
  // header, the device code, the host API, the kernel units.
  std::vector<std::pair<std::string, const std::string *>> files{
      {in.headerName, &out.h}, {in.planName, &out.plan}, {in.programsName, &out.programs}, {in.deviceName, &out.device}, {in.cuName, &out.cu}};
  for (int u = 0; u < kNumKernelUnits; ++u) files.push_back({in.unitNames[u], &out.units[u]});
  if (toStdout) {
    for (const auto &[name, text] : files) stdoutStream << "// ===== purlinc: " << name << " =====\n" << *text;
    stdoutStream.flush();
    if (!stdoutStream) return CodegenFailure{"cannot write to standard output", {}};
    return std::nullopt;
  }
  const OutputPaths paths = outputPaths(output);
  std::vector<std::string> where{paths.h, paths.plan, paths.programs, paths.device, paths.cu};
  for (const std::string &u : paths.units) where.push_back(u);
  for (std::size_t i = 0; i < where.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (where[i] == where[j]) return CodegenFailure{"output '" + output + "' would be overwritten by another generated file", {}};
  // Every file to a temporary beside it, then all renamed: a failed write
  // (a full disk) leaves the previous output whole, not half replaced.
  std::vector<std::string> temps;
  const auto dropTemps = [&] {
    for (const std::string &t : temps) std::remove(t.c_str());
  };
  for (std::size_t i = 0; i < where.size(); ++i) {
    const std::string temp = where[i] + ".purlinc-tmp";
    struct stat st {};
    if (::stat(temp.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {  // not ours to replace or remove
      dropTemps();
      return CodegenFailure{"cannot write '" + where[i] + "': its temporary '" + temp + "' exists and is not a file",
                            {}};
    }
    temps.push_back(temp);
    if (auto err = writeFile(temp, *files[i].second)) {
      dropTemps();
      // Name the file the user asked for, not its temporary.
      std::string message = *err;
      if (const std::size_t at = message.find(temp); at != std::string::npos) message.replace(at, temp.size(), where[i]);
      return CodegenFailure{message, {}};
    }
  }
  for (std::size_t i = 0; i < where.size(); ++i) {
    // A file whose bytes are already these is left as it is (its time
    // too), so a build system that checks outputs after the command
    // (Ninja's restat: purlin_add_collective) recompiles only the units
    // that changed.
    if (sameContent(where[i], *files[i].second)) {
      std::remove(temps[i].c_str());
      continue;
    }
    if (std::rename(temps[i].c_str(), where[i].c_str()) != 0) {
      const std::string why = std::strerror(errno);
      dropTemps();
      return CodegenFailure{"cannot write '" + where[i] + "': " + why, {}};
    }
  }
  return std::nullopt;
}

} // namespace purlin::codegen
