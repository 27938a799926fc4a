/// @file bench_args.h
/// @brief Command lines of the benchmark programs, apart from CUDA (CPU
/// unit test: coll_shape_test): byte counts, collective lists, and
/// coll_bench's options with nccl-tests' spellings (-b -e -f -d -n).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench_modes.h"
#include "coll_shape.h"
#include "timing_config.h"

namespace purlin::bench {

/// Parses a byte count or number: digits with an optional K/M/G suffix
/// (powers of 1024) or a decimal number. False for anything else.
bool parseNumber(const std::string &s, double &out);

/// Parses a comma list of collective names (ag,rs,ar,a2a or full names).
bool parseCollList(const std::string &s, std::vector<Coll> &out);

/// coll_bench's options (coll_bench.cpp).
struct CollBenchOptions {
  std::string outDir;
  std::size_t minBytes = 1u << 10;
  std::size_t maxBytes = std::size_t(1) << 30;
  int stepFactor = 2;  ///< sizes minBytes, minBytes*f, ... <= maxBytes (nccl-tests' -f)
  std::vector<Coll> colls{Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll};
  TimingConfig timing;
  PurlinMode purlin = PurlinMode::Graph;
  NcclMode nccl = NcclMode::Default;
  bool separator = false;  ///< PDL-neutral: an empty non-PDL kernel between every two timed calls
  bool inPlace = false;    ///< also an in-place row for each AllGather, ReduceScatter, AllReduce size
  int validateCalls = 3;   ///< calls of the validation sequence, each on new inputs
  int threads = 0;         ///< > 0: that many in-process ranks (no purlin-launch)
  std::string planLog;     ///< where the ranks' plan lines go ("" = RESULTS_DIR/plans.log)
};

extern const char *const kCollBenchUsage;

/// What parseCollBenchArgs decided.
enum class ParseResult { Run, Help, Error };

/// Parses coll_bench's argv into `o`; on Error, `error` says why (one
/// line, without the usage). Knows nccl-tests' spellings: -b/--minbytes,
/// -e/--maxbytes, -f/--stepfactor, -d/--datatype (bfloat16 only: the
/// device reference is bf16), -n/--iters (--calls), -h.
ParseResult parseCollBenchArgs(int argc, const char *const *argv, CollBenchOptions &o, std::string &error);

/// The message sizes of a run: minBytes, times stepFactor, up to maxBytes.
std::vector<std::size_t> messageSizes(const CollBenchOptions &o);

} // namespace purlin::bench
