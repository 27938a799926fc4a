/// @file lat_perf_test.cu
/// @brief Latency-program experiments (bench/NOTES.md E5): per-call time of
/// AllGather, ReduceScatter, AllReduce and AllToAll for launch-shape and
/// programmatic-launch variants of the latency program, and the throughput
/// program at the same sizes (crossover), beside NCCL on the same buffers.
/// Paper method: 128 calls captured in a CUDA graph, one warm-up replay, 8
/// timed replays, time per call, maximum over ranks; bf16 for reductions.
/// Every variant's result is checked bitwise against NCCL before it is timed
/// (inputs are multiples of 1/8, so 2-rank bf16 sums are exact), and again
/// after the timed replays (graph replays with per-CTA epochs and PDL).
///
/// Usage: lat_perf_test [--sizes a,b,...] (in-process) or under
/// purlin-launch -n 2. Prints one line per (collective, size, variant) and a
/// geomean (1 KiB - 512 KiB) of NCCL / variant per collective.
// Policies of its own: the device programs compiled here (coll_launch.cuh).
#define COLLTEST_PROGRAMS
#include "coll_test_common.cuh"
#include "perf_common.cuh"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace colltest;

namespace {

/// Latency-program variants: crossover, max CTAs x threads, packet slots per thread
/// (-1 = fixed full shape), programmatic dependent launch on/off.
#define LAT_POLICY(NAME, MAXB, CTAS, THREADS, SPT, PDL)                                                \
  struct NAME {                                                                                      \
    static constexpr const char* label = #NAME;                                                      \
    static constexpr bool programmaticLaunch = PDL;                                                  \
    static constexpr int pipelineStages = 8, stageBytes = 16384;                                     \
    static constexpr std::size_t stagingBytes = std::size_t(256) << 20;                              \
    static constexpr sn::WorldConsts world[kMaxRanks + 1] = {                                        \
        {}, {}, {.latencyMaxBytes = MAXB, .latencyCtas = CTAS, .latencyThreads = THREADS,               \
                 .stageCtas = 8, .consumeCtas = 16, .gatherCtas = 8, .threads = 512,                      \
                 .chunkBytes = 2u << 20, .push = false, .latencySlotsPerThread = SPT}};                    \
  };
constexpr std::size_t kAll = std::size_t(8) << 20;  // latency program for every size swept
LAT_POLICY(L16_fixed_nopdl, kAll, 16, 512, -1, false)  // the configuration before E5
LAT_POLICY(L128_nopdl, kAll, 128, 512, 0, false)       // default shape (spread, 1 slot per thread), no PDL
LAT_POLICY(L128, kAll, 128, 512, 0, true)              // the sm_90 world-2 default (Defaults.cpp)
LAT_POLICY(L128_w2, kAll, 128, 512, 2, true)

/// Throughput program only (crossover reference): push, 32 CTAs.
#define TP_POLICY(NAME, STAGE, CONSUME, GATHER, CHUNK, PUSH)                                           \
  struct NAME {                                                                                      \
    static constexpr const char* label = #NAME;                                                      \
    static constexpr int pipelineStages = 8, stageBytes = 16384;  /* the generated kernels' Atom */   \
    static constexpr std::size_t stagingBytes = std::size_t(256) << 20;                              \
    static constexpr sn::WorldConsts world[kMaxRanks + 1] = {                                        \
        {}, {}, {.latencyMaxBytes = 0, .latencyCtas = 16, .latencyThreads = 512, .stageCtas = STAGE,    \
                 .consumeCtas = CONSUME, .gatherCtas = GATHER, .threads = 512, .chunkBytes = CHUNK,       \
                 .push = PUSH}};                                                                          \
  };
TP_POLICY(T_push_8_16_8, 8, 16, 8, 2u << 20, true)


/// Purlin's output equals NCCL's on every rank.
bool sameAsNccl(Rank& R, const Bufs& b) {
  int ok = sameAsNcclLocal(R, b) ? 1 : 0, all[kMaxRanks];
  R.boot->allGather(&ok, all, sizeof ok);
  return std::all_of(all, all + R.n, [](int v) { return v != 0; });
}

/// log(NCCL / variant) sums per (variant, collective) over 1 KiB - 512 KiB.
std::map<std::string, std::pair<double, int>> gLogRatio;  // rank 0 only

template <class P> void runPolicy(Rank& R, Communicator& comm, Coll c, std::size_t msg, double ncclUs) {
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.ref);
  sn::CallArgs a;
  a.in = b.in;
  a.out = b.out;
  a.count = b.count;
  a.dtype = DType::BF16;
  CT_CUDA(cudaMemsetAsync(b.out, 0xff, b.outBytes, R.stream));
  Status s = launchColl<P>(c, comm, a, R.stream);
  CT_CUDA(cudaStreamSynchronize(R.stream));
  comm.checkDeviceErrors();
  if (s != Status::Ok || !sameAsNccl(R, b)) {
    std::printf("FAIL rank %d: %s %s %zu B: %s\n", R.rank, P::label, name(c), msg,
                s != Status::Ok ? sn::lastError() : "result differs from NCCL");
    R.fail();
    freeBufs(b);
    return;
  }
  CT_CUDA(cudaMemsetAsync(b.out, 0xff, b.outBytes, R.stream));
  const double us = timeGraph(R, 128, [&] { launchColl<P>(c, comm, a, R.stream); });
  comm.checkDeviceErrors();
  if (!sameAsNccl(R, b)) {
    std::printf("FAIL rank %d: %s %s %zu B: result after graph replays differs from NCCL\n", R.rank, P::label, name(c), msg);
    R.fail();
  }
  sn::Plan pl;
  std::string err;
  planColl(c, R.n, R.rank, a, P::world[R.n], P::stagingBytes, comm.deviceComm().packetHalfBytes, pl, err,
           P::pipelineStages);
  if (R.rank == 0)
    std::printf("purlin %-16s %-14s %9zu B %9.2f us %7.1f GB/s %s %3d x %4d  x%.2f vs NCCL\n", P::label, name(c), msg, us,
                double(msg) / us / 1e3, pl.latency ? "lat" : "tp ", pl.ctas(), pl.threadsPerCta(), ncclUs / us);
  if (R.rank == 0 && msg <= (std::size_t(512) << 10)) {  // rank threads share the map
    auto& acc = gLogRatio[std::string(P::label) + " " + name(c)];
    acc.first += std::log(ncclUs / us);
    acc.second += 1;
  }
  freeBufs(b);
}

double runNccl(Rank& R, Coll c, std::size_t msg) {
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.out);  // eager first: NCCL allocates lazily, which a capture forbids
  CT_CUDA(cudaStreamSynchronize(R.stream));
  const double us = timeGraph(R, 128, [&] { ncclCall(R, c, b, b.out); });
  if (R.rank == 0)
    std::printf("nccl                    %-14s %9zu B %9.2f us %7.1f GB/s\n", name(c), msg, us, double(msg) / us / 1e3);
  freeBufs(b);
  return us;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {1u << 10, 4u << 10, 16u << 10, 64u << 10, 256u << 10, 512u << 10,
                                    1u << 20, 2u << 20, 4u << 20};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      std::string tok;
      while (std::getline(ss, tok, ',')) sizes.push_back(std::stoull(tok));
    } else {
      std::fprintf(stderr, "usage: lat_perf_test [--sizes a,b,...]\n");
      return 2;
    }
  }
  return runRanks("lat_perf_test", [&](Rank& R) {
    Communicator comm(*R.boot, R.dev, CommOptions{});
    for (Coll c : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::AllToAll}) {
      for (std::size_t msg : sizes) {
        const double nc = runNccl(R, c, msg);
        runPolicy<L16_fixed_nopdl>(R, comm, c, msg, nc);
        runPolicy<L128_nopdl>(R, comm, c, msg, nc);
        runPolicy<L128>(R, comm, c, msg, nc);
        runPolicy<L128_w2>(R, comm, c, msg, nc);
        if (msg >= (std::size_t(1) << 20)) runPolicy<T_push_8_16_8>(R, comm, c, msg, nc);
      }
    }
    if (R.rank == 0)
      for (auto& [k, v] : gLogRatio)
        std::printf("geomean NCCL/purlin 1K-512K %-32s x%.2f (%d sizes)\n", k.c_str(), std::exp(v.first / v.second), v.second);
    R.boot->barrier();
  });
}
