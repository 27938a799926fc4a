/// @file coll_bench.cpp
/// @brief coll_bench: Purlin vs NCCL for the collectives of --colls (default
/// AllGather, ReduceScatter, AllReduce, AllToAll), 1 KiB to 1 GiB, one
/// process per GPU (run it under purlin-launch -n N). Each (collective,
/// size) is first checked against NCCL, then both are timed with the
/// paper's method (graph_timer.h), --samples times (median, min, max).
/// Rank 0 writes <results>/results.csv, <results>/run.log, <results>/meta.txt.
///
/// Usage: coll_bench RESULTS_DIR [--min BYTES] [--max BYTES]
///                   [--colls ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av] [--calls N] [--reps N]
///                   [--samples N] [--timeout S]
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "bench_env.h"
#include "bench_log.h"
#include "check.h"
#include "coll_shape.h"
#include "graph_timer.h"
#include "nccl_colls.h"
#include "purlin_colls.h"
#include "stats.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"
#include "purlin/host/error.h"

using namespace purlin;
using namespace purlin::bench;

namespace {

struct Options {
  std::string outDir;
  std::size_t minBytes = 1u << 10;
  std::size_t maxBytes = std::size_t(1) << 30;
  std::vector<Coll> colls{Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll};
  TimingConfig timing;
  bool direct = true;  ///< CommOptions::direct: captured calls may take the direct program
};

const char *kUsage =
    "usage: coll_bench RESULTS_DIR [--min BYTES] [--max BYTES] [--colls ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av]\n"
    "                  [--calls N] [--reps N] [--samples N] [--timeout SECONDS] [--no-direct]\n"
    "Run one process per GPU under purlin-launch -n N (2 <= N <= 8).\n";

/// Parses argv; returns false (after printing why) on bad input.
bool parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &v) {
      if (i + 1 >= argc) { std::fprintf(stderr, "coll_bench: %s needs a value\n", a.c_str()); return false; }
      v = argv[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); std::exit(0); }
    else if (a == "--no-direct") o.direct = false;
    else if (a == "--min" || a == "--max" || a == "--calls" || a == "--reps" || a == "--samples" || a == "--timeout") {
      if (!value(v)) return false;
      double x = 0;
      if (!parseNumber(v, x) || x <= 0) {
        std::fprintf(stderr, "coll_bench: %s: expected a positive number, got '%s'\n", a.c_str(), v.c_str());
        return false;
      }
      if (a == "--min") o.minBytes = static_cast<std::size_t>(x);
      else if (a == "--max") o.maxBytes = static_cast<std::size_t>(x);
      else if (a == "--calls") o.timing.calls = static_cast<int>(x);
      else if (a == "--reps") o.timing.reps = static_cast<int>(x);
      else if (a == "--samples") o.timing.samples = static_cast<int>(x);
      else o.timing.timeoutS = x;
    } else if (a == "--colls") {
      if (!value(v)) return false;
      if (!parseCollList(v, o.colls)) {
        std::fprintf(stderr, "coll_bench: --colls: expected a comma list of ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av, got '%s'\n", v.c_str());
        return false;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "coll_bench: unknown option '%s'\n%s", a.c_str(), kUsage);
      return false;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 1) { std::fputs(kUsage, stderr); return false; }
  o.outDir = pos[0];
  if (o.minBytes > o.maxBytes || o.maxBytes > (std::size_t(1) << 32)) {
    std::fprintf(stderr, "coll_bench: need --min <= --max <= 4 GiB\n");
    return false;
  }
  return true;
}

/// Result of one (collective, size) row, identical on every rank.
struct Row {
  double purlinUs = NAN, ncclUs = NAN;  ///< medians over the samples
  double purlinMin = NAN, purlinMax = NAN, ncclMin = NAN, ncclMax = NAN;
  int samples = 0;
  bool ok = false;
  int ctas = 0;
  bool direct = false;  ///< the timed graph used the direct program (registerDirect accepted it)
  std::string note;
};

struct Buffers {
  void *in = nullptr, *out = nullptr, *ref = nullptr;
  explicit Buffers(std::size_t bytes) {
    PURLIN_CUDA_CHECK(cudaMalloc(&in, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&out, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&ref, bytes));
  }
  ~Buffers() { (void)cudaFree(in); (void)cudaFree(out); (void)cudaFree(ref); }
};

/// Compares Purlin's output with NCCL's (and, for AllReduce, across ranks).
/// Returns "" if correct on this rank, otherwise why not. Collective.
std::string compare(Bootstrap &boot, Coll c, const Shape &s, const Buffers &b, cudaStream_t st,
                    const char *when) {
  std::string why;
  const std::size_t outElems = outElemsOn(c, s, boot.rank());  // Gather / Reduce: the root's only
  const std::size_t bad = countMismatches(b.out, b.ref, outElems, isReduction(c), st);
  if (bad) why = std::to_string(bad) + " of " + std::to_string(outElems) + " elements differ from NCCL " + when;
  if (c == Coll::AllReduce) { // bitwise equal across ranks
    const uint64_t mine = checksum(b.out, s.outElems, st);
    std::vector<uint64_t> all(boot.size());
    boot.allGather(&mine, all.data(), sizeof(mine));
    for (uint64_t x : all)
      if (x != mine) { why += (why.empty() ? "" : "; ") + std::string("results differ across ranks ") + when; break; }
  }
  return why;
}

/// Checks Purlin against NCCL on fresh inputs, with Purlin's call captured
/// in a CUDA graph and replayed once, as it is timed (so the direct program
/// is checked where it is used). Returns "" if correct on this rank,
/// otherwise why not. Collective over boot/comm/nccl.
std::string checkOne(Communicator &comm, ncclComm_t nccl, Bootstrap &boot, Coll c,
                     const Shape &s, const Buffers &b, uint32_t seed, cudaStream_t st,
                     double timeoutS) {
  fillInput(b.in, s.inElems, boot.rank(), seed, st);
  PURLIN_CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, s.outElems * kElemBytes, st));
  PURLIN_CUDA_CHECK(cudaMemsetAsync(b.ref, 0xEE, s.outElems * kElemBytes, st));
  ncclCall(nccl, c, s, b.in, b.ref, st);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  try {
    purlinCall(comm, c, s, b.in, b.out, st);
  } catch (...) {
    (void)cudaStreamEndCapture(st, &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    throw;
  }
  PURLIN_CUDA_CHECK(cudaStreamEndCapture(st, &graph));
  PURLIN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PURLIN_CUDA_CHECK(cudaGraphLaunch(exec, st));
  syncWithTimeout(st, timeoutS, std::string("check of ") + collName(c));
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  return compare(boot, c, s, b, st, "(check)");
}

/// Measures one row; every rank returns the same Row.
Row measure(Communicator &comm, ncclComm_t nccl, Bootstrap &boot, Coll c, std::size_t bytes,
            const Buffers &b, const Options &o, cudaStream_t st, Log &log) {
  const Shape s = shapeOf(c, bytes, boot.size());
  Row row;
  std::string why;
  bool threw = false;
  try {
    why = checkOne(comm, nccl, boot, c, s, b, static_cast<uint32_t>(bytes) ^ (static_cast<uint32_t>(c) << 28),
                   st, o.timing.timeoutS);
  } catch (const Error &e) {
    if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
    why = e.what();
    threw = true;
  }
  const std::string label = std::string(collName(c)) + " " + std::to_string(bytes) + " B";
  GraphTiming tn = timeInGraph([&](cudaStream_t x) { ncclCall(nccl, c, s, b.in, b.ref, x); }, st,
                               o.timing, boot, "NCCL " + label);
  row.ncclUs = tn.usPerCall;
  row.ncclMin = tn.usMin, row.ncclMax = tn.usMax, row.samples = tn.samples;
  // Every rank must agree whether Purlin's timing runs (a failed check on
  // one rank still times it, but a thrown call on one rank must not leave
  // the others waiting inside a kernel).
  const long long thrown = sumOverRanks(boot, threw ? 1 : 0);
  if (thrown == 0) {
    try {
      const std::size_t before = comm.directRegistrations();
      GraphTiming tp = timeInGraph([&](cudaStream_t x) { purlinCall(comm, c, s, b.in, b.out, x); }, st,
                                   o.timing, boot, "Purlin " + label);
      row.purlinUs = tp.usPerCall;
      row.purlinMin = tp.usMin, row.purlinMax = tp.usMax;
      row.ctas = static_cast<int>(maxOverRanks(boot, tp.maxCtas));
      row.direct = comm.directRegistrations() > before;
      // The timed replays computed the same inputs again: their output must
      // still match NCCL's (whose timed replays rewrote b.ref the same way).
      if (why.empty()) why = compare(boot, c, s, b, st, "(after timing)");
    } catch (const Error &e) {
      if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
      why += (why.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  const long long failures = sumOverRanks(boot, why.empty() ? 0 : 1);
  row.ok = failures == 0 && !std::isnan(row.purlinUs);
  if (!why.empty()) log.all("rank %d: %s: %s\n", boot.rank(), label.c_str(), why.c_str());
  return row;
}

int run(const Options &o) {
  setBenchEnvironment();
  std::unique_ptr<Bootstrap> boot = bootstrapFromEnv();
  const int rank = boot->rank(), n = boot->size();
  if (n < 2 || n > kMaxRanks) {
    std::fprintf(stderr, "coll_bench: world size %d not in [2, %d]; start it with purlin-launch -n N\n", n, kMaxRanks);
    return 2;
  }
  const int device = deviceForRank(rank);
  PURLIN_CUDA_CHECK(cudaSetDevice(device));
  Log log(rank == 0 ? o.outDir : std::string(), "run.log");
  CommOptions copt;
  copt.direct = o.direct;
  Communicator comm(*boot, device, copt);
  ncclComm_t nccl = createNcclComm(*boot);
  cudaStream_t st = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Buffers bufs(o.maxBytes);
  const std::string api = std::string(purlinApiName()) +
                          (o.direct ? "; direct program for captured calls where eligible"
                                    : "; direct program off (--no-direct: every call staged)");
  writeMeta(o.outDir, rank, n, device, api.c_str(), log);

  Csv csv(rank == 0 ? o.outDir : std::string(), "results.csv",
          "collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas,program,"
          "purlin_min_us,purlin_max_us,nccl_min_us,nccl_max_us,purlin_busGBps,nccl_busGBps,samples");
  int failed = 0;
  for (Coll c : o.colls) {
    for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 2) {
      const Shape s = shapeOf(c, bytes, n);
      if (s.msgBytes == 0) continue; // fewer elements than ranks (the V forms: count is unused)
      Row r = measure(comm, nccl, *boot, c, bytes, bufs, o, st, log);
      failed += !r.ok;
      const double gbP = s.msgBytes / r.purlinUs / 1e3, gbN = s.msgBytes / r.ncclUs / 1e3;
      const double bus = busFactor(c, n);
      csv.row("%s,%zu,%.3f,%.3f,%.2f,%.2f,%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%d", collName(c), bytes, r.purlinUs,
              r.ncclUs, gbP, gbN, r.ok ? 1 : 0, r.ctas, r.direct ? "direct" : "staged", r.purlinMin, r.purlinMax,
              r.ncclMin, r.ncclMax, gbP * bus, gbN * bus, r.samples);
      log.root("%-14s %11zu B  purlin %10.2f us (%.2f-%.2f) %8.2f GB/s  nccl %10.2f us (%.2f-%.2f) %8.2f GB/s  x%5.2f"
               "  ctas %3d  %-6s %s\n",
               collName(c), bytes, r.purlinUs, r.purlinMin, r.purlinMax, gbP, r.ncclUs, r.ncclMin, r.ncclMax, gbN,
               r.ncclUs / r.purlinUs, r.ctas, r.direct ? "direct" : "staged", r.ok ? "ok" : "FAILED");
    }
  }
  boot->barrier();
  (void)cudaStreamDestroy(st);
  ncclCommDestroy(nccl);
  log.root("coll_bench: %d failed row(s)\n", failed);
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) return 2;
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "coll_bench: error: %s\n", e.what());
    return 3;
  }
}
