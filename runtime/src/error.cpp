/// @file error.cpp
/// @brief purlin::Error and the "what at file:line" message helper (no CUDA
/// calls here, so CPU-only code can use them).
#include "purlin/host/error.h"

#include <cstring>

namespace purlin {

Error::Error(Status status, std::string what)
    : std::runtime_error(std::move(what)), status_(status) {}

std::string where(const std::string &what, const char *file, int line) {
  const char *slash = file ? std::strrchr(file, '/') : nullptr;
  std::string out = what;
  out += " at ";
  out += slash ? slash + 1 : (file ? file : "?");
  out += ':';
  out += std::to_string(line);
  return out;
}

} // namespace purlin
