/// @file tune_main.cpp
/// @brief purlin_tune: sweeps the policy knobs on the machine it runs on
/// (one process per GPU, under purlin-launch -n N) and writes every
/// measurement to <dir>/measurements.csv; bench/tune/make_policy.py turns
/// that into a policy JSON for purlinc (bench/tune/tune.sh does both).
///
/// Sweeps, per collective, each point checked against NCCL first and timed
/// with the benchmark's graph method (graph_timer.h):
///  1. latency program (packets): CTAs x threads over 1 KiB .. --lat-max;
///  2. throughput program at --large bytes: stage/consume/gather CTAs
///     (total <= --max-ctas), chunk bytes, and each compiled-in Atom
///     pipeline variant (stages x stage bytes);
///  3. crossover: the throughput program with this collective's best
///     configuration of step 2 over 4 KiB .. --cross-max, to set against
///     step 1 (make_policy.py picks the crossover).
///
/// Usage: purlin_tune DIR [--colls ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av] [--large BYTES] [--lat-max BYTES]
///                    [--cross-max BYTES] [--max-ctas N] [--quick] [--timeout S]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_env.h"
#include "bench_log.h"
#include "check.h"
#include "graph_timer.h"
#include "nccl_colls.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"
#include "purlin/host/error.h"
#include "tune_launch.h"

using namespace purlin;
using namespace purlin::bench;

namespace {

struct Options {
  std::string dir;
  std::vector<Coll> colls{Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll};
  std::size_t large = 64u << 20;
  std::size_t latMax = 4u << 20;
  std::size_t crossMax = 8u << 20;
  int maxCtas = 32;
  bool quick = false;
  double timeoutS = 30;
};

const char *kUsage =
    "usage: purlin_tune DIR [--colls ag,rs,ar,a2a,bc,rd,sc,ga,agv,rsv,a2av] [--large BYTES] [--lat-max BYTES]\n"
    "                   [--cross-max BYTES] [--max-ctas N] [--quick] [--timeout SECONDS]\n"
    "Run one process per GPU under purlin-launch -n N; then bench/tune/make_policy.py.\n";

bool parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); std::exit(0); }
    if (a == "--quick") { o.quick = true; continue; }
    if (a.rfind("--", 0) == 0) {
      if (i + 1 >= argc) { std::fprintf(stderr, "purlin_tune: %s needs a value\n", a.c_str()); return false; }
      const std::string v = argv[++i];
      double x = 0;
      if (a == "--colls") {
        if (!parseCollList(v, o.colls)) { std::fprintf(stderr, "purlin_tune: bad --colls '%s'\n", v.c_str()); return false; }
        continue;
      }
      if (!parseNumber(v, x) || x <= 0) {
        std::fprintf(stderr, "purlin_tune: %s: expected a positive number, got '%s'\n", a.c_str(), v.c_str());
        return false;
      }
      if (a == "--large") o.large = std::size_t(x);
      else if (a == "--lat-max") o.latMax = std::size_t(x);
      else if (a == "--cross-max") o.crossMax = std::size_t(x);
      else if (a == "--max-ctas") o.maxCtas = int(x);
      else if (a == "--timeout") o.timeoutS = x;
      else { std::fprintf(stderr, "purlin_tune: unknown option '%s'\n%s", a.c_str(), kUsage); return false; }
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 1) { std::fputs(kUsage, stderr); return false; }
  o.dir = pos[0];
  if (o.large > (std::size_t(1) << 31) || o.latMax > o.large || o.crossMax > o.large) {
    std::fprintf(stderr, "purlin_tune: need --lat-max, --cross-max <= --large <= 2 GiB\n");
    return false;
  }
  return true;
}

/// One swept configuration.
struct Config {
  int variant = 0;
  snac::WorldConsts world{};
};

/// Everything a measurement needs, shared by the three sweeps.
struct Ctx {
  Communicator &comm;
  ncclComm_t nccl;
  Bootstrap &boot;
  cudaStream_t st;
  void *in, *out, *ref;
  const Options &o;
  Csv &csv;
  Log &log;
};

/// Timing for a size: the paper's 128 x 8 up to 4 MiB; fewer calls above,
/// where a replay is long enough that 16 x 2 is stable (saves device time).
TimingConfig timingFor(std::size_t bytes, const Options &o) {
  TimingConfig t;
  t.timeoutS = o.timeoutS;
  t.samples = 1;  // a sweep of many points: one sample each (coll_bench repeats its rows)
  if (bytes > (4u << 20) || o.quick) { t.calls = 16; t.reps = 2; }
  return t;
}

/// Prepares inputs and NCCL's reference for (c, bytes). Collective.
void prepare(Ctx &x, Coll c, const Shape &s, uint32_t seed) {
  fillInput(x.in, s.inElems, x.boot.rank(), seed, x.st);
  ncclCall(x.nccl, c, s, x.in, x.ref, x.st);
  syncWithTimeout(x.st, x.o.timeoutS, "NCCL reference");
}

/// Checks and times one configuration; writes one CSV row; returns us per
/// call (NaN when the configuration failed on any rank). Collective.
double measure(Ctx &x, Coll c, std::size_t bytes, const Shape &s, const char *program, const Config &cfg) {
  std::string why;
  try {
    PURLIN_CUDA_CHECK(cudaMemsetAsync(x.out, 0xFF, s.outElems * kElemBytes, x.st));
    tunedCall(x.comm, c, s, x.in, x.out, x.st, cfg.world, cfg.variant);
    syncWithTimeout(x.st, x.o.timeoutS, "tuner check");
    const std::size_t bad = countMismatches(x.out, x.ref, outElemsOn(c, s, x.boot.rank()), isReduction(c), x.st);
    if (bad) why = std::to_string(bad) + " elements differ from NCCL";
  } catch (const Error &e) {
    if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
    why = e.what();
  }
  double us = NAN;
  int grid = 0;
  if (sumOverRanks(x.boot, why.empty() ? 0 : 1) == 0) {
    try {
      GraphTiming t = timeInGraph(
          [&](cudaStream_t st) { tunedCall(x.comm, c, s, x.in, x.out, st, cfg.world, cfg.variant); }, x.st,
          timingFor(bytes, x.o), x.boot, std::string("tune ") + collName(c));
      us = t.usPerCall;
      grid = static_cast<int>(maxOverRanks(x.boot, t.maxCtas));
    } catch (const Error &e) {
      if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
      why = e.what();
    }
    if (sumOverRanks(x.boot, why.empty() ? 0 : 1) != 0) us = NAN;
  }
  if (!why.empty() && x.boot.rank() == 0) x.log.all("  %s %zu B %s: %s\n", collName(c), bytes, program, why.c_str());
  const PipelineVariant v = variant(cfg.variant);
  const snac::WorldConsts &w = cfg.world;
  x.csv.row("%s,%d,%d,%d,%s,%zu,%d,%d,%d,%d,%d,%d,%zu,%.3f,%d,%d", collName(c), x.boot.size(), v.stages,
            v.stageBytes, program, bytes, w.latencyCtas, w.latencyThreads, w.stageCtas, w.consumeCtas,
            w.gatherCtas, w.threads, w.chunkBytes, us, std::isnan(us) ? 0 : 1, grid);
  return us;
}

snac::WorldConsts latencyOnly(int ctas, int threads) {
  snac::WorldConsts w{};
  w.latencyMaxBytes = ~std::size_t(0);
  w.latencyCtas = ctas;
  w.latencyThreads = threads;
  return w; // no throughput CTAs: a message the packets cannot hold fails
}

snac::WorldConsts throughputOnly(int stage, int consume, int gather, int threads, std::size_t chunk) {
  snac::WorldConsts w{};
  w.stageCtas = stage;
  w.consumeCtas = consume;
  w.gatherCtas = gather;
  w.threads = threads;
  w.chunkBytes = chunk;
  w.push = false;
  return w; // latencyCtas = 0: never the packet program
}

void tuneCollective(Ctx &x, Coll c) {
  const int n = x.boot.size();
  // A composition (AllReduce, Broadcast, Reduce) has a gather role.
  const bool ar = c == Coll::AllReduce || c == Coll::Broadcast || c == Coll::Reduce;
  uint32_t seed = 1000u * (uint32_t(c) + 1);
  // 1. Latency program.
  const std::vector<std::pair<int, int>> latCfgs =
      x.o.quick ? std::vector<std::pair<int, int>>{{8, 512}, {16, 512}}
                : std::vector<std::pair<int, int>>{{4, 512}, {8, 512}, {16, 512}, {32, 512}, {16, 256}, {8, 1024}};
  for (std::size_t b = 1024; b <= x.o.latMax; b *= 2) {
    const Shape s = shapeOf(c, b, n);
    if (s.msgBytes == 0) continue;
    prepare(x, c, s, ++seed);
    for (auto [ctas, thr] : latCfgs) measure(x, c, b, s, "latency", Config{0, latencyOnly(ctas, thr)});
  }
  x.log.root("purlin_tune: %s latency sweep done\n", collName(c));
  // 2. Throughput program at the large size.
  const std::vector<int> stages = x.o.quick ? std::vector<int>{8} : std::vector<int>{4, 8, 16};
  const std::vector<int> consumes = x.o.quick ? std::vector<int>{16} : std::vector<int>{8, 12, 16};
  const std::vector<int> gathers = ar ? (x.o.quick ? std::vector<int>{8} : std::vector<int>{4, 8, 16})
                                      : std::vector<int>{0};
  const std::vector<std::size_t> chunks = x.o.quick ? std::vector<std::size_t>{2u << 20}
                                                    : std::vector<std::size_t>{512u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20};
  const Shape big = shapeOf(c, x.o.large, n);
  prepare(x, c, big, ++seed);
  Config best;
  double bestUs = INFINITY;
  for (int v = 0; v < numVariants(); ++v)
    for (int sc : stages)
      for (int cc : consumes)
        for (int gc : gathers) {
          if (sc + cc + gc > x.o.maxCtas) continue;
          for (std::size_t ch : chunks) {
            Config cfg{v, throughputOnly(sc, cc, ar ? gc : 0, 512, ch)};
            const double us = measure(x, c, x.o.large, big, "throughput", cfg);
            if (us < bestUs) { bestUs = us; best = cfg; }
          }
        }
  if (!std::isfinite(bestUs)) {
    x.log.root("purlin_tune: %s: no throughput configuration worked; crossover sweep skipped\n", collName(c));
    return;
  }
  const PipelineVariant bv = variant(best.variant);
  x.log.root("purlin_tune: %s best at %zu B: %.1f GB/s with stage %d consume %d gather %d chunk %zu, S=%d B=%d\n",
             collName(c), x.o.large, big.msgBytes / bestUs / 1e3, best.world.stageCtas, best.world.consumeCtas,
             best.world.gatherCtas, best.world.chunkBytes, bv.stages, bv.stageBytes);
  // 3. Throughput program of the best configuration near the crossover.
  for (std::size_t b = 4096; b <= x.o.crossMax; b *= 2) {
    const Shape s = shapeOf(c, b, n);
    if (s.msgBytes == 0) continue;
    prepare(x, c, s, ++seed);
    measure(x, c, b, s, "crossover", best);
  }
}

int run(const Options &o) {
  setBenchEnvironment();
  std::unique_ptr<Bootstrap> boot = bootstrapFromEnv();
  const int rank = boot->rank(), n = boot->size();
  if (n < 2 || n > kMaxRanks) {
    std::fprintf(stderr, "purlin_tune: world size %d not in [2, %d]; start it with purlin-launch -n N\n", n, kMaxRanks);
    return 2;
  }
  const int device = deviceForRank(rank);
  PURLIN_CUDA_CHECK(cudaSetDevice(device));
  Log log(rank == 0 ? o.dir : std::string(), "tune.log");
  CommOptions copt;
  copt.stagingHalfBytes = tuneStagingBytes();
  // The sweep times captured calls; keep them on the staged programs whose
  // knobs it tunes (the direct program's knobs are not swept: bench/NOTES.md E9).
  copt.direct = false;
  Communicator comm(*boot, device, copt);
  ncclComm_t nccl = createNcclComm(*boot);
  writeMeta(o.dir, rank, n, device, "purlin_tune (runtime launch with run-time WorldConsts)", log);
  cudaStream_t st = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  void *in = nullptr, *out = nullptr, *ref = nullptr;
  PURLIN_CUDA_CHECK(cudaMalloc(&in, o.large));
  PURLIN_CUDA_CHECK(cudaMalloc(&out, o.large));
  PURLIN_CUDA_CHECK(cudaMalloc(&ref, o.large));
  Csv csv(rank == 0 ? o.dir : std::string(), "measurements.csv",
          "collective,world,stages,stage_bytes,program,bytes,latency_ctas,latency_threads,"
          "stage_ctas,consume_ctas,gather_ctas,threads,chunk_bytes,us,ok,grid");
  Ctx x{comm, nccl, *boot, st, in, out, ref, o, csv, log};
  for (Coll c : o.colls) tuneCollective(x, c);
  boot->barrier();
  (void)cudaFree(in);
  (void)cudaFree(out);
  (void)cudaFree(ref);
  (void)cudaStreamDestroy(st);
  ncclCommDestroy(nccl);
  log.root("purlin_tune: done; now: bench/tune/make_policy.py %s/measurements.csv -o policy.json\n", o.dir.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) return 2;
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "purlin_tune: error: %s\n", e.what());
    return 3;
  }
}
