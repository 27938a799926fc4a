/// @file bench_log.h
/// @brief Output of the benchmark programs: a run log (stdout plus a file,
/// rank 0) and a CSV file (rank 0). An empty directory disables the files
/// (ranks other than 0).
#pragma once

#include <cstdio>
#include <string>

namespace purlin::bench {

class Log {
public:
  /// Opens <dir>/<name> for writing if dir is non-empty (creating dir).
  /// Throws purlin::Error(InvalidArgument) if the file cannot be created.
  Log(const std::string &dir, const std::string &name);
  ~Log();
  Log(const Log &) = delete;
  Log &operator=(const Log &) = delete;
  /// Rank 0 only (a Log with a file): stdout and the file.
  void root(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  /// Any rank: stderr, and the file if this rank has one.
  void all(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

private:
  std::FILE *file_ = nullptr;
};

class Csv {
public:
  /// Creates <dir>/<name> with the header line if dir is non-empty.
  Csv(const std::string &dir, const std::string &name, const char *header);
  ~Csv();
  Csv(const Csv &) = delete;
  Csv &operator=(const Csv &) = delete;
  /// Appends one line (flushed, so a killed run keeps its rows).
  void row(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

private:
  std::FILE *file_ = nullptr;
};

/// Creates `dir` and its parents (like mkdir -p). Throws on failure.
void makeDirs(const std::string &dir);

} // namespace purlin::bench
