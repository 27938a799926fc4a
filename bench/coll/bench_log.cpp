/// @file bench_log.cpp
/// @brief Run log and CSV output of the benchmark programs (bench_log.h).
#include "bench_log.h"

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <sys/stat.h>

#include "purlin/host/error.h"

namespace purlin::bench {

void makeDirs(const std::string &dir) {
  std::string path;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      PURLIN_THROW(Status::InvalidArgument, "cannot create directory '" + path + "': " + std::strerror(errno));
  }
}

static std::FILE *openIn(const std::string &dir, const std::string &name) {
  if (dir.empty()) return nullptr;
  makeDirs(dir);
  const std::string path = dir + "/" + name;
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) PURLIN_THROW(Status::InvalidArgument, "cannot write '" + path + "': " + std::strerror(errno));
  return f;
}

Log::Log(const std::string &dir, const std::string &name) : file_(openIn(dir, name)) {}
Log::~Log() { if (file_) std::fclose(file_); }

void Log::root(const char *fmt, ...) {
  if (!file_) return;
  va_list a, b;
  va_start(a, fmt);
  va_copy(b, a);
  std::vfprintf(stdout, fmt, a);
  std::fflush(stdout);
  std::vfprintf(file_, fmt, b);
  std::fflush(file_);
  va_end(b);
  va_end(a);
}

void Log::all(const char *fmt, ...) {
  va_list a, b;
  va_start(a, fmt);
  va_copy(b, a);
  std::vfprintf(stderr, fmt, a);
  if (file_) { std::vfprintf(file_, fmt, b); std::fflush(file_); }
  va_end(b);
  va_end(a);
}

Csv::Csv(const std::string &dir, const std::string &name, const char *header)
    : file_(openIn(dir, name)) {
  if (file_) { std::fprintf(file_, "%s\n", header); std::fflush(file_); }
}
Csv::~Csv() { if (file_) std::fclose(file_); }

void Csv::row(const char *fmt, ...) {
  if (!file_) return;
  va_list a;
  va_start(a, fmt);
  std::vfprintf(file_, fmt, a);
  va_end(a);
  std::fputc('\n', file_);
  std::fflush(file_);
}

} // namespace purlin::bench
