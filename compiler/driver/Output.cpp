/// @file Output.cpp
/// @brief Output: the -o file or standard output, with checked writes.
#include "Output.h"

#include <cerrno>
#include <cstring>
#include <iostream>

namespace purlin {

bool Output::open(const std::string &path, Diagnostics &diags) {
  toStdout_ = path.empty() || path == "-";
  path_ = toStdout_ ? std::string("<stdout>") : path;
  if (toStdout_) return true;
  errno = 0;
  file_.open(path, std::ios::binary | std::ios::trunc);
  if (!file_) {
    diags.report(DiagKind::CannotWrite, Location{}, path_,
                 errno ? std::strerror(errno) : "cannot open the file for writing");
    return false;
  }
  return true;
}

std::ostream &Output::stream() { return toStdout_ ? std::cout : file_; }

bool Output::finish(Diagnostics &diags) {
  errno = 0;
  std::ostream &os = stream();
  os.flush();
  if (!toStdout_) file_.close();
  if (!os) {
    diags.report(DiagKind::CannotWrite, Location{}, path_, errno ? std::strerror(errno) : "write failed");
    return false;
  }
  return true;
}

} // namespace purlin
