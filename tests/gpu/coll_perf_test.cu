/// @file coll_perf_test.cu
/// @brief Timing of AllGather, ReduceScatter, AllReduce and AllToAll
/// (snac::launch) beside NCCL on the same buffers, with the paper's method:
/// calls captured in a CUDA graph, one warm-up replay, 8 timed replays, time
/// per call, maximum over ranks. bf16 for reductions; message size = gathered
/// output for AllGather, input per rank for the others; ordinary cudaMalloc
/// buffers. Each result is checked bitwise against NCCL before it is timed
/// (inputs are multiples of 1/8, so 2-rank bf16 sums are exact).
///
/// 128 calls per graph below 64 MiB, 16 calls from 64 MiB on (pass --full
/// for 128 everywhere). Usage: coll_perf_test [--full] [--sizes a,b,...]
/// [--sweep] [--colls AG,RS,AR,A2A] (in-process, or under purlin-launch
/// -n 2). Without --sweep it times a few compiled-in policies; with --sweep
/// it walks the run-time configuration table kSweep (push and pull, CTA
/// splits, chunk sizes) through a policy whose world table is set at run
/// time, and prints one `csv,` line per measurement:
/// csv,collective,config,bytes,purlin_us,GBps,nccl_us,nccl_GBps,ctas,chunk.
/// A failed check or a timed-out wait (checked communicator) ends the
/// sweep on every rank, so the program never hangs on a broken call.
// Policies of its own: the device programs compiled here (coll_launch.cuh).
#define COLLTEST_PROGRAMS
#include "coll_test_common.cuh"
#include "perf_common.cuh"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace colltest;

namespace {

/// Variant policies for the throughput program (same latency settings).
#define PERF_POLICY(NAME, LATENCY, STAGE, CONSUME, GATHER, THREADS, CHUNK)                          \
  struct NAME {                                                                                     \
    static constexpr const char* label = #NAME;                                                     \
    static constexpr int pipelineStages = 8, stageBytes = 16384;                                    \
    static constexpr std::size_t stagingBytes = std::size_t(256) << 20;                             \
    static constexpr sn::WorldConsts world[kMaxRanks + 1] = {                                       \
        {}, {}, {LATENCY, 16, 512, STAGE, CONSUME, GATHER, THREADS, CHUNK, false}};                 \
  };
PERF_POLICY(P_8_16_8, 512u << 10, 8, 16, 8, 512, 2u << 20)
PERF_POLICY(P_11_21_c8M, 1u << 20, 11, 21, 8, 512, 8u << 20)    // copy collectives: 32 CTAs
PERF_POLICY(P_11_21_c16M, 1u << 20, 11, 21, 8, 512, 16u << 20)
PERF_POLICY(P_13_19_c32M, 1u << 20, 13, 19, 8, 512, 32u << 20)  // ReduceScatter: 32 CTAs
PERF_POLICY(P_7_11_14_c16M, 1u << 20, 7, 11, 14, 512, 16u << 20)  // AllReduce: 32 CTAs


/// A policy whose world table is set at run time (per thread: each
/// in-process rank sets its own, to the same values).
struct PSweep {
  static constexpr int pipelineStages = 8, stageBytes = 16384;
  static constexpr std::size_t stagingBytes = std::size_t(256) << 20;
  static inline thread_local sn::WorldConsts world[kMaxRanks + 1] = {};
};

/// Result of one timed configuration: agreed by every rank.
struct Timed {
  bool ok = false;
  double us = 0;
  int ctas = 0;
  std::size_t chunk = 0;
};

/// Runs policy P once (checked bitwise against NCCL's output), then times it.
/// Every rank returns the same `ok` (a failure on any rank skips the timing
/// everywhere, so the ranks never disagree on the collective calls).
template <class P>
Timed runPolicy(Rank& R, Communicator& comm, Coll c, std::size_t msg, bool full, double ncclUs, const char* label) {
  Timed t;
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.ref);
  sn::CallArgs a;
  a.in = b.in;
  a.out = b.out;
  a.count = b.count;
  a.dtype = DType::BF16;
  Status s = launchColl<P>(c, comm, a, R.stream);
  std::string why = s != Status::Ok ? sn::lastError() : "";
  CT_CUDA(cudaStreamSynchronize(R.stream));
  try {
    comm.checkDeviceErrors();
  } catch (const std::exception& e) {
    why = e.what();
  }
  int good = why.empty() && sameAsNcclLocal(R, b) ? 1 : 0, all[kMaxRanks];
  if (why.empty() && !good) why = "result differs from NCCL";
  R.boot->allGather(&good, all, sizeof good);
  for (int q = 0; q < R.n; ++q) good &= all[q];
  if (!good) {
    if (!why.empty()) std::printf("FAIL rank %d: %s %s %zu B: %s\n", R.rank, label, name(c), msg, why.c_str());
    R.fail();
    freeBufs(b);
    return t;
  }
  const int calls = full || msg < (std::size_t(64) << 20) ? 128 : 16;
  t.us = timeGraph(R, calls, [&] { launchColl<P>(c, comm, a, R.stream); });
  t.ok = true;
  sn::Plan pl;
  std::string err;
  planColl(c, R.n, R.rank, a, P::world[R.n], P::stagingBytes, comm.deviceComm().packetHalfBytes, pl, err,
           P::pipelineStages);
  t.ctas = pl.ctas();
  t.chunk = pl.latency ? 0 : pl.chunk;
  if (R.rank == 0)
    std::printf("purlin %-20s %-14s %11zu B %10.2f us %8.1f GB/s  %s %2d CTAs chunk %8zu  x%.2f vs NCCL\n", label,
                name(c), msg, t.us, double(msg) / t.us / 1e3, pl.latency ? "latency   " : (pl.push ? "push      " : "pull      "),
                t.ctas, t.chunk, ncclUs / t.us);
  freeBufs(b);
  return t;
}

double runNccl(Rank& R, Coll c, std::size_t msg, bool full) {
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.out);  // eager first: NCCL allocates lazily, which a capture forbids
  CT_CUDA(cudaStreamSynchronize(R.stream));
  const int calls = full || msg < (std::size_t(64) << 20) ? 128 : 16;
  const double us = timeGraph(R, calls, [&] { ncclCall(R, c, b, b.out); });
  if (R.rank == 0)
    std::printf("nccl                            %-14s %11zu B %10.2f us %8.1f GB/s\n", name(c), msg, us, double(msg) / us / 1e3);
  freeBufs(b);
  return us;
}

/// One run-time configuration of the sweep (world size 2, latency off).
struct SweepConfig {
  const char* label;
  bool push;
  int stage, consume, gather;  ///< gather is used by AllReduce only
  std::size_t chunk;           ///< policy chunkBytes (push: the cap)
  int chunksPerCta;            ///< push chunk sizing (0 = default)
  int lanes, consumeLanes;     ///< push lanes per stage CTA, per consume/gather CTA (1 or 2)
  bool forAllReduce;           ///< AllReduce configurations vs the others'
};
constexpr std::size_t MiB = std::size_t(1) << 20;
const SweepConfig kSweep[] = {
    // AllGather, ReduceScatter, AllToAll (label: stage/consume CTAs, chunk cap, lanes stage+consume).
    {"push-8/16-4M-L11", true, 8, 16, 0, 4 * MiB, 4, 1, 1, false},
    {"push-8/16-4M-L21", true, 8, 16, 0, 4 * MiB, 4, 2, 1, false},
    {"push-8/16-4M-L12", true, 8, 16, 0, 4 * MiB, 4, 1, 2, false},
    {"push-8/16-4M-L22", true, 8, 16, 0, 4 * MiB, 4, 2, 2, false},
    {"push-8/24-4M-L21", true, 8, 24, 0, 4 * MiB, 4, 2, 1, false},
    {"push-8/24-4M-L11", true, 8, 24, 0, 4 * MiB, 4, 1, 1, false},
    {"push-12/20-4M-L21", true, 12, 20, 0, 4 * MiB, 4, 2, 1, false},
    {"push-16/16-4M-L21", true, 16, 16, 0, 4 * MiB, 4, 2, 1, false},
    // AllReduce (stage/consume/gather).
    {"push-8/16/8-4M-L11", true, 8, 16, 8, 4 * MiB, 4, 1, 1, true},
    {"push-8/16/8-4M-L21", true, 8, 16, 8, 4 * MiB, 4, 2, 1, true},
    {"push-8/16/8-4M-L12", true, 8, 16, 8, 4 * MiB, 4, 1, 2, true},
    {"push-8/16/8-4M-L22", true, 8, 16, 8, 4 * MiB, 4, 2, 2, true},
    {"push-6/18/8-4M-L21", true, 6, 18, 8, 4 * MiB, 4, 2, 1, true},
    {"push-8/18/6-4M-L21", true, 8, 18, 6, 4 * MiB, 4, 2, 1, true},
};

/// The sweep: per collective and size, NCCL once, then every configuration.
/// Returns false when a configuration failed (the sweep stops there).
bool sweep(Rank& R, Communicator& comm, const std::vector<Coll>& colls, const std::vector<std::size_t>& sizes, bool full) {
  for (Coll c : colls)
    for (std::size_t msg : sizes) {
      const double nc = runNccl(R, c, msg, full);
      for (const SweepConfig& k : kSweep) {
        if (k.forAllReduce != (c == Coll::AllReduce)) continue;
        // The generated kernels have the push CTAs of the generated policy's
        // lanes only, (2, 1): other lanes need purlinc output of a policy
        // binding them (the launch refuses them).
        if (k.push && !(k.lanes == 2 && k.consumeLanes == 1)) continue;
        sn::WorldConsts w;
        w.latencyMaxBytes = 0;  // latency program off: every size runs the throughput program
        w.latencyCtas = 16;
        w.latencyThreads = 512;
        w.stageCtas = k.stage;
        w.consumeCtas = k.consume;
        w.gatherCtas = k.gather ? k.gather : 8;
        w.threads = 512;
        w.chunkBytes = k.chunk;
        w.push = k.push;
        w.chunksPerCta = k.chunksPerCta;
        w.lanes = k.lanes;
        w.consumeLanes = k.consumeLanes;
        PSweep::world[R.n] = w;
        const Timed t = runPolicy<PSweep>(R, comm, c, msg, full, nc, k.label);
        if (!t.ok) return false;
        if (R.rank == 0)
          std::printf("csv,%s,%s,%zu,%.3f,%.1f,%.3f,%.1f,%d,%zu\n", name(c), k.label, msg, t.us, double(msg) / t.us / 1e3,
                      nc, double(msg) / nc / 1e3, t.ctas, t.chunk);
      }
    }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  bool full = false, doSweep = false;
  std::vector<std::size_t> sizes = {4u << 10, 64u << 10, 256u << 10, 1u << 20, 16u << 20, 64u << 20, std::size_t(1) << 30};
  std::vector<Coll> colls = {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::AllToAll};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--full") full = true;
    else if (a == "--sweep") doSweep = true;
    else if ((a == "--sizes" || a == "--colls") && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      std::string tok;
      if (a == "--sizes") sizes.clear(); else colls.clear();
      while (std::getline(ss, tok, ',')) {
        if (a == "--sizes") {
          char* end = nullptr;
          const unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
          if (!end || *end || v == 0) {
            std::printf("coll_perf_test: bad size '%s'\n", tok.c_str());
            return 2;
          }
          sizes.push_back(std::size_t(v));
        } else if (tok == "AG") colls.push_back(Coll::AllGather);
        else if (tok == "RS") colls.push_back(Coll::ReduceScatter);
        else if (tok == "AR") colls.push_back(Coll::AllReduce);
        else if (tok == "A2A") colls.push_back(Coll::AllToAll);
        else {
          std::printf("coll_perf_test: unknown collective '%s' (AG, RS, AR, A2A)\n", tok.c_str());
          return 2;
        }
      }
    } else {
      std::printf("usage: coll_perf_test [--full] [--sweep] [--sizes a,b,...] [--colls AG,RS,AR,A2A]\n");
      return 2;
    }
  }
  return runRanks("coll_perf_test", [&](Rank& R) {
    CommOptions o;
    o.checked = true;        // a broken configuration times out instead of hanging
    o.waitTimeoutUs = 5'000'000;  // far above any legitimate wait of these sizes
    Communicator comm(*R.boot, R.dev, o);
    if (doSweep) {
      if (R.n != 2) {
        std::printf("SKIP --sweep: its table is for world size 2 (have %d)\n", R.n);
      } else if (!sweep(R, comm, colls, sizes, full)) {
        std::printf("sweep stopped at the first failure\n");
      }
      R.boot->barrier();
      return;
    }
    for (Coll c : colls) {
      for (std::size_t msg : sizes) {
        const double nc = runNccl(R, c, msg, full);
        bool ok = runPolicy<P_8_16_8>(R, comm, c, msg, full, nc, P_8_16_8::label).ok;
        if (ok && msg >= (1u << 20)) {
          ok = ok && runPolicy<P_11_21_c8M>(R, comm, c, msg, full, nc, P_11_21_c8M::label).ok;
          ok = ok && runPolicy<P_11_21_c16M>(R, comm, c, msg, full, nc, P_11_21_c16M::label).ok;
          ok = ok && runPolicy<P_13_19_c32M>(R, comm, c, msg, full, nc, P_13_19_c32M::label).ok;
          ok = ok && runPolicy<P_7_11_14_c16M>(R, comm, c, msg, full, nc, P_7_11_14_c16M::label).ok;
        }
        if (!ok) {
          std::printf("stopped at the first failure\n");
          R.boot->barrier();
          return;
        }
      }
    }
    R.boot->barrier();
  });
}
