/// @file EmitCUDA.cpp
/// @brief Entry points of the CUDA emitter: both files, output paths and
/// file writing.
#include "codegen/EmitCUDA.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace purlin::codegen {

EmitOutput emitCUDA(const EmitInput &input) {
  return EmitOutput{emitSource(input), emitHeader(input)};
}

std::pair<std::string, std::string> outputPaths(const std::string &cuPath) {
  std::size_t slash = cuPath.find_last_of('/');
  std::size_t dot = cuPath.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
      dot == (slash == std::string::npos ? 0 : slash + 1))
    return {cuPath, cuPath + ".h"};
  return {cuPath, cuPath.substr(0, dot) + ".h"};
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
