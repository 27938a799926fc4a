/// @file EmitCUDA.cpp
/// @brief Entry points of the CUDA emitter: both files, output paths and
/// file writing.
#include "codegen/EmitCUDA.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace purlin::codegen {

EmitOutput emitCUDA(const EmitInput &input) {
  EmitOutput out;
  out.cu = emitSource(input);
  out.h = emitHeader(input);
  out.plan = emitPlanHeader(input);
  out.programs = emitProgramsHeader(input);
  out.device = emitDeviceCode(input);
  for (int u = 0; u < kNumKernelUnits; ++u) out.units[u] = emitKernelUnit(input, KernelUnit(u));
  return out;
}

OutputPaths outputPaths(const std::string &cuPath) {
  std::size_t slash = cuPath.find_last_of('/');
  std::size_t dot = cuPath.find_last_of('.');
  const bool noExtension = dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
                           dot == (slash == std::string::npos ? 0 : slash + 1);
  const std::string base = noExtension ? cuPath : cuPath.substr(0, dot);
  OutputPaths p;
  p.cu = cuPath;
  p.h = base + ".h";
  p.plan = base + ".plan.h";
  p.programs = base + ".programs.h";
  p.device = base + ".device.cuh";
  for (int u = 0; u < kNumKernelUnits; ++u) p.units[u] = base + "." + unitName(KernelUnit(u)) + ".cu";
  return p;
}

std::optional<std::string> writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return "cannot open '" + path + "' for writing: " + std::strerror(errno);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return "cannot write '" + path + "': " + std::strerror(errno);
  return std::nullopt;
}

} // namespace purlin::codegen
