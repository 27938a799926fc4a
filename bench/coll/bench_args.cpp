/// @file bench_args.cpp
/// @brief The benchmark programs' command lines (bench_args.h).
#include "bench_args.h"

#include <cstdlib>

#include "purlin/types.h"

namespace purlin::bench {

bool parseNumber(const std::string &s, double &out) {
  if (s.empty()) return false;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  std::string suffix(end);
  if (suffix == "K" || suffix == "k" || suffix == "KiB") v *= 1024.0;
  else if (suffix == "M" || suffix == "MiB") v *= 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "GiB") v *= 1024.0 * 1024.0 * 1024.0;
  else if (!suffix.empty()) return false;
  if (!(v >= 0) || v > 1e15) return false;
  out = v;
  return true;
}

bool parseCollList(const std::string &s, std::vector<Coll> &out) {
  std::vector<Coll> r;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    Coll c;
    if (!parseColl(item, c)) return false;
    r.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (r.empty()) return false;
  out = r;
  return true;
}

const char *const kCollBenchUsage =
    "usage: coll_bench RESULTS_DIR [-b|--min BYTES] [-e|--max BYTES] [-f|--stepfactor F]\n"
    "                  [--colls ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av] [-d bfloat16]\n"
    "                  [-n|--calls N] [--reps N] [--samples N] [--timeout SECONDS]\n"
    "                  [--purlin graph|staged|eager|registered|none]\n"
    "                  [--nccl default|legacy-register|symmetric|copy-engine|none]\n"
    "                  [--separator] [--in-place] [--validate K] [--threads N] [--no-direct]\n"
    "                  [--plan-log FILE]\n"
    "Run one process per GPU under purlin-launch -n N (2 <= N <= 8), or --threads N\n"
    "(ranks in this process sharing the visible GPUs; needs --nccl none).\n"
    "Sizes: BYTES takes K/M/G suffixes; from -b to -e, each -f times the one before\n"
    "(nccl-tests' -b -e -f). -d: the element type (bfloat16, the only one: the device\n"
    "reference is bf16). --no-direct is --purlin staged. Purlin's plan lines go to\n"
    "--plan-log (default RESULTS_DIR/plans.log), not the console. --in-place: after each\n"
    "AllGather, ReduceScatter and AllReduce row, the same size in place (nccl-tests'\n"
    "in-place columns: one buffer for AllReduce, the own block of the output or input).\n";

ParseResult parseCollBenchArgs(int argc, const char *const *argv, CollBenchOptions &o, std::string &error) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &v) {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      v = argv[++i];
      return true;
    };
    // nccl-tests' spellings.
    if (a == "-b" || a == "--minbytes") a = "--min";
    else if (a == "-e" || a == "--maxbytes") a = "--max";
    else if (a == "-n" || a == "--iters") a = "--calls";
    else if (a == "-f") a = "--stepfactor";
    else if (a == "-d") a = "--datatype";
    std::string v;
    if (a == "-h" || a == "--help") return ParseResult::Help;
    if (a == "--no-direct") o.purlin = PurlinMode::Staged;
    else if (a == "--separator") o.separator = true;
    else if (a == "--in-place") o.inPlace = true;
    else if (a == "--purlin" || a == "--nccl") {
      if (!value(v)) return ParseResult::Error;
      const bool ok = a == "--purlin" ? parsePurlinMode(v, o.purlin) : parseNcclMode(v, o.nccl);
      if (!ok) {
        error = a + ": unknown mode '" + v + "'";
        return ParseResult::Error;
      }
    } else if (a == "--datatype") {
      if (!value(v)) return ParseResult::Error;
      if (v != "bfloat16" && v != "bf16") {
        error = "-d " + v + ": coll_bench measures bfloat16 only (its device reference and inputs are bf16)";
        return ParseResult::Error;
      }
    } else if (a == "--plan-log") {
      if (!value(o.planLog)) return ParseResult::Error;
    } else if (a == "--min" || a == "--max" || a == "--calls" || a == "--reps" || a == "--samples" ||
               a == "--timeout" || a == "--validate" || a == "--threads" || a == "--stepfactor") {
      if (!value(v)) return ParseResult::Error;
      double x = 0;
      if (!parseNumber(v, x) || x <= 0) {
        error = a + ": expected a positive number, got '" + v + "'";
        return ParseResult::Error;
      }
      if (a == "--min") o.minBytes = static_cast<std::size_t>(x);
      else if (a == "--max") o.maxBytes = static_cast<std::size_t>(x);
      else if (a == "--calls") o.timing.calls = static_cast<int>(x);
      else if (a == "--reps") o.timing.reps = static_cast<int>(x);
      else if (a == "--samples") o.timing.samples = static_cast<int>(x);
      else if (a == "--validate") o.validateCalls = static_cast<int>(x);
      else if (a == "--threads") o.threads = static_cast<int>(x);
      else if (a == "--stepfactor") {
        if (x < 2 || x != static_cast<double>(static_cast<int>(x)) || x > 1024) {
          error = "-f: the step factor is a whole number in [2, 1024], got '" + v + "'";
          return ParseResult::Error;
        }
        o.stepFactor = static_cast<int>(x);
      } else o.timing.timeoutS = x;
    } else if (a == "--colls") {
      if (!value(v)) return ParseResult::Error;
      if (!parseCollList(v, o.colls)) {
        error = "--colls: expected a comma list of ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av, got '" + v + "'";
        return ParseResult::Error;
      }
    } else if (!a.empty() && a[0] == '-') {
      error = "unknown option '" + a + "'";
      return ParseResult::Error;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 1) {
    error = pos.empty() ? "RESULTS_DIR is required" : "one RESULTS_DIR expected, got " + std::to_string(pos.size());
    return ParseResult::Error;
  }
  o.outDir = pos[0];
  if (o.minBytes < 1) {
    error = "--min: at least 1 byte";
    return ParseResult::Error;
  }
  if (o.minBytes > o.maxBytes || o.maxBytes > (std::size_t(1) << 32)) {
    error = "need --min <= --max <= 4 GiB";
    return ParseResult::Error;
  }
  if (o.validateCalls > 16) {
    error = "--validate takes at most 16 calls";
    return ParseResult::Error;
  }
  if (o.threads > 0 && (o.threads < 2 || o.threads > kMaxRanks || o.nccl != NcclMode::None)) {
    error = "--threads takes 2.." + std::to_string(kMaxRanks) +
            " ranks and needs --nccl none (NCCL refuses two ranks on one GPU)";
    return ParseResult::Error;
  }
  if (o.purlin == PurlinMode::None && o.nccl == NcclMode::None) {
    error = "--purlin none and --nccl none leave nothing to time";
    return ParseResult::Error;
  }
  for (Coll c : o.colls)
    if (o.nccl == NcclMode::None && !hasDeviceReference(c)) {
      error = std::string("--nccl none checks against the device reference, which covers ag, rs, ar and a2a only (not ") +
              collName(c) + ")";
      return ParseResult::Error;
    }
  return ParseResult::Run;
}

std::vector<std::size_t> messageSizes(const CollBenchOptions &o) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= static_cast<std::size_t>(o.stepFactor)) {
    sizes.push_back(bytes);
    if (bytes > o.maxBytes / static_cast<std::size_t>(o.stepFactor)) break;  // the next would overflow or pass max
  }
  return sizes;
}

} // namespace purlin::bench
