/// @file coll_bench.cpp
/// @brief coll_bench: one Purlin series against one NCCL series (bench_modes.h)
/// for the collectives of --colls (default AllGather, ReduceScatter,
/// AllReduce, AllToAll), 1 KiB to 1 GiB; one process per GPU under
/// purlin-launch -n N, or --threads N ranks in this process sharing the
/// visible GPUs (a dry run: --nccl none). Each (collective, size) is first
/// validated: a sequence of --validate calls, each on new inputs, captured in
/// one graph (eager in the eager modes), every call's output checked on its
/// own against the device reference (bitwise: check.h referenceOutput) for
/// the four unrooted collectives, against NCCL for the others. Then both
/// series are timed the same way (graph replays, or eager calls;
/// --separator puts an empty non-PDL kernel between every two calls of
/// both), --samples times (median, min, max). Rank 0 writes
/// <results>/results.csv (one row per collective and size, with the plan
/// Purlin logged for it and #wrong), run.log (the console: algbw, busbw,
/// #wrong per row) and meta.txt; every rank's plan lines go to
/// <results>/plans.log (--plan-log), not the console. --in-place adds a row
/// per AllGather, ReduceScatter and AllReduce size, run in place (nccl-tests'
/// in-place forms; CSV column placement).
///
/// Usage: bench_args.cpp kCollBenchUsage (nccl-tests' -b -e -f -d -n too).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "bench_env.h"
#include "bench_log.h"
#include "bench_modes.h"
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

RefColl refOf(Coll c) {
  return c == Coll::AllGather ? RefColl::AllGather : c == Coll::ReduceScatter ? RefColl::ReduceScatter
         : c == Coll::AllReduce ? RefColl::AllReduce : RefColl::AllToAll;
}

/// One series' figures for one row.
struct Series {
  double us = NAN, min = NAN, max = NAN;  ///< median, fastest and slowest sample
  int samples = 0;
};

/// Result of one (collective, size) row, identical on every rank.
struct Row {
  Series purlin, nccl;
  bool ok = false;
  long long wrong = 0;  ///< output elements off the reference, summed over ranks (nccl-tests' #wrong)
  int ctas = 0;
  std::string program;  ///< "latency", "throughput", "direct" (from the plan), or "-"
  std::string plan;     ///< Purlin's plan line for this shape (rank 0's)
};

/// This rank's buffers: Purlin's (cudaMalloc: registrable), NCCL's (per
/// mode), the reference and the validation's checksum slots.
struct Buffers {
  void *in = nullptr, *out = nullptr, *ref = nullptr;
  unsigned long long *sums = nullptr;  ///< [0, 16): the validation calls, [16, 32): NCCL's, 32: scratch
  std::unique_ptr<NcclBuffers> nccl;
  Buffers(std::size_t bytes, ncclComm_t comm, NcclMode mode) {
    PURLIN_CUDA_CHECK(cudaMalloc(&in, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&out, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&ref, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&sums, 33 * sizeof(*sums)));
    if (comm) nccl = std::make_unique<NcclBuffers>(comm, mode, bytes);
  }
  ~Buffers() {
    nccl.reset();
    (void)cudaFree(in); (void)cudaFree(out); (void)cudaFree(ref); (void)cudaFree(sums);
  }
};

/// Reads `count` slots of device memory (this stream only: no device-wide
/// synchronization, which ranks sharing a GPU must avoid between calls).
std::vector<unsigned long long> readSlots(const unsigned long long *slots, int count, cudaStream_t st) {
  std::vector<unsigned long long> v(count);
  PURLIN_CUDA_CHECK(cudaMemcpyAsync(v.data(), slots, count * sizeof(*slots), cudaMemcpyDeviceToHost, st));
  PURLIN_CUDA_CHECK(cudaStreamSynchronize(st));
  return v;
}

/// Runs `body(stream)` once: captured in a graph and replayed once, or eagerly.
void runOnce(const Enqueue &body, bool eager, cudaStream_t st, double timeoutS, const std::string &what) {
  if (eager) {
    body(st);
  } else {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    PURLIN_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    try {
      body(st);
    } catch (...) {
      (void)cudaStreamEndCapture(st, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    PURLIN_CUDA_CHECK(cudaStreamEndCapture(st, &graph));
    PURLIN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    PURLIN_CUDA_CHECK(cudaGraphLaunch(exec, st));
    syncWithTimeout(st, timeoutS, what);
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  }
  syncWithTimeout(st, timeoutS, what);
}

/// The validation of one library for a collective with a device reference:
/// K calls, call k on inputs of seed base+k, the checksum of its output
/// taken right after it (in the same graph or stream); then each compared
/// with the reference's checksum. `exact`: bitwise (else only the last
/// call, within the bf16 tolerance, element by element). "" or why not;
/// `wrong`: on a failure, the last call's output elements that differ from
/// its reference (bitwise, or beyond the tolerance).
std::string validateCalls(const std::string &who, const Enqueue &call, void *in, void *out, bool exact, Coll c,
                          const Shape &s, int rank, int n, uint32_t base, int calls, bool eager, Buffers &b,
                          unsigned long long *slots, cudaStream_t st, double timeoutS, std::size_t &wrong) {
  const std::size_t outElems = outElemsOn(c, s, rank);
  runOnce(
      [&](cudaStream_t x) {
        for (int k = 0; k < calls; ++k) {
          PURLIN_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, outElems * kElemBytes, x));
          fillInput(in, s.inElems, rank, base + k, x);  // after: in place, the input lies in the output
          call(x);
          checksumInto(out, outElems, slots + k, x);
        }
      },
      eager, st, timeoutS, who + " validation");
  const std::vector<unsigned long long> got = readSlots(slots, calls, st);
  for (int k = 0; k < calls; ++k) {
    referenceOutput(refOf(c), n, rank, s.count, base + k, b.ref, st);
    checksumInto(b.ref, outElems, b.sums + 32, st);
    const unsigned long long want = readSlots(b.sums + 32, 1, st)[0];
    if (exact && got[k] != want) {
      referenceOutput(refOf(c), n, rank, s.count, base + calls - 1, b.ref, st);  // the output held: the last call's
      wrong = countMismatches(out, b.ref, outElems, false, st);
      return who + ": call " + std::to_string(k + 1) + " of " + std::to_string(calls) +
             " (new inputs): output differs from the reference (bitwise checksum)";
    }
  }
  if (!exact) {  // the last call's output is still there, and so is its reference
    const std::size_t bad = countMismatches(out, b.ref, outElems, true, st);
    wrong = bad;
    if (bad)
      return who + ": call " + std::to_string(calls) + ": " + std::to_string(bad) + " of " +
             std::to_string(outElems) + " elements off the reference by more than the bf16 tolerance";
  }
  return "";
}

/// Collectives without a device reference: Purlin's output against NCCL's
/// (bitwise for copies and two-rank reductions, else within tolerance; and
/// across ranks). Collective.
std::string compareWithNccl(Bootstrap &boot, Coll c, const Shape &s, const void *got, const void *want,
                            cudaStream_t st, const char *when, std::size_t &wrong) {
  std::string why;
  const std::size_t outElems = outElemsOn(c, s, boot.rank());  // Gather / Reduce: the root's only
  const bool tolerance = isReduction(c) && boot.size() > 2;
  const std::size_t bad = countMismatches(got, want, outElems, tolerance, st);
  wrong = bad;
  if (bad) why = std::to_string(bad) + " of " + std::to_string(outElems) + " elements differ from NCCL " + when;
  return why;
}

/// The program a plan line names: its first word.
std::string programOf(const std::string &plan) {
  const std::size_t e = plan.find_first_of(" :");
  return plan.empty() ? "-" : plan.substr(0, e);
}

/// A CSV field: quoted, inner quotes doubled.
std::string quoted(const std::string &s) {
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

struct Context {
  const CollBenchOptions &o;
  Bootstrap &boot;
  Communicator &comm;
  ncclComm_t nccl;
  Buffers &b;
  cudaStream_t st;
  Log &log;
};

/// Validates and times one row, out of place or in place (hasInPlaceForm);
/// every rank returns the same Row (but the plan: rank 0's).
Row measure(Context &x, Coll c, std::size_t bytes, bool inPlace) {
  const CollBenchOptions &o = x.o;
  const int rank = x.boot.rank(), n = x.boot.size();
  const Shape s = shapeOf(c, bytes, n);
  const bool eager = eagerTiming(o.purlin);
  const bool ncclA2A = symmetricWindows(o.nccl);
  const uint32_t base = static_cast<uint32_t>(bytes) ^ (static_cast<uint32_t>(c) << 28);
  const std::string label = std::string(collName(c)) + " " + std::to_string(bytes) + " B" + (inPlace ? " in place" : "");
  const CallBuffers pb = callBuffers(c, s.count, rank, x.b.in, x.b.out, inPlace);  // Purlin's
  const CallBuffers nb = x.nccl ? callBuffers(c, s.count, rank, x.b.nccl->in, x.b.nccl->out, inPlace) : CallBuffers{};
  Row row;
  std::string why;
  bool threw = false;
  std::size_t wrong = 0, ncclWrong = 0;  // Purlin's output elements off the reference; NCCL's (not reported)
  const Enqueue purlinCallOnce = [&](cudaStream_t y) { purlinCall(x.comm, c, s, pb.in, pb.out, y); };
  const Enqueue ncclCallOnce = [&](cudaStream_t y) { ncclCall(x.nccl, c, s, nb.in, nb.out, y, ncclA2A); };
  const std::size_t registeredBefore = x.comm.registeredCalls(), capturedBefore = x.comm.directRegistrations();
  try {
    if (hasDeviceReference(c)) {
      if (o.purlin != PurlinMode::None)
        why = validateCalls("Purlin", purlinCallOnce, pb.in, pb.out, true, c, s, rank, n, base, o.validateCalls,
                            eager, x.b, x.b.sums, x.st, o.timing.timeoutS, wrong);
      if (why.empty() && x.nccl)
        why = validateCalls("NCCL", ncclCallOnce, nb.in, nb.out, !isReduction(c) || n == 2, c, s, rank, n, base,
                            o.validateCalls, eager, x.b, x.b.sums + 16, x.st, o.timing.timeoutS, ncclWrong);
    } else {  // NCCL is the reference (parseCollBenchArgs refuses --nccl none here)
      fillInput(x.b.in, s.inElems, rank, base, x.st);
      PURLIN_CUDA_CHECK(cudaMemcpyAsync(x.b.nccl->in, x.b.in, s.inElems * kElemBytes, cudaMemcpyDeviceToDevice, x.st));
      PURLIN_CUDA_CHECK(cudaMemsetAsync(x.b.out, 0xFF, s.outElems * kElemBytes, x.st));
      PURLIN_CUDA_CHECK(cudaMemsetAsync(x.b.nccl->out, 0xEE, s.outElems * kElemBytes, x.st));
      ncclCallOnce(x.st);
      if (o.purlin != PurlinMode::None) {
        runOnce(purlinCallOnce, eager, x.st, o.timing.timeoutS, "check of " + label);
        why = compareWithNccl(x.boot, c, s, x.b.out, x.b.nccl->out, x.st, "(check)", wrong);
      }
    }
  } catch (const Error &e) {
    if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
    why = e.what();
    threw = true;
  }
  row.plan = x.comm.lastPlan();
  row.program = o.purlin == PurlinMode::None ? "-" : programOf(row.plan);
  const auto timed = [&](const Enqueue &call) -> Enqueue {
    return [&, call](cudaStream_t y) {
      call(y);
      if (o.separator) launchSeparator(y);
    };
  };
  const auto time = [&](const Enqueue &call, const std::string &what) {
    return eager ? timeEager(timed(call), x.st, o.timing, x.boot, what)
                 : timeInGraph(timed(call), x.st, o.timing, x.boot, what);
  };
  // Every rank must agree whether the timing runs (a thrown call on one
  // rank must not leave the others waiting inside a kernel).
  const long long thrown = sumOverRanks(x.boot, threw ? 1 : 0);
  if (thrown == 0) {
    try {
      if (x.nccl) {
        const GraphTiming t = time(ncclCallOnce, "NCCL " + label);
        row.nccl = {t.usPerCall, t.usMin, t.usMax, t.samples};
      }
      if (o.purlin != PurlinMode::None) {
        const GraphTiming t = time(purlinCallOnce, "Purlin " + label);
        row.purlin = {t.usPerCall, t.usMin, t.usMax, t.samples};
        row.ctas = static_cast<int>(maxOverRanks(x.boot, t.maxCtas));
      }
    } catch (const Error &e) {
      if (e.status() == Status::Timeout || e.status() == Status::BootstrapError) throw;
      why += (why.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  // The direct program, seen from the counters (the plan line says why).
  const bool direct = x.comm.registeredCalls() > registeredBefore || x.comm.directRegistrations() > capturedBefore;
  if (direct && row.program != "direct") why += (why.empty() ? "" : "; ") + std::string("plan line and program differ");
  const long long failures = sumOverRanks(x.boot, why.empty() ? 0 : 1);
  row.wrong = sumOverRanks(x.boot, static_cast<long long>(wrong));
  row.ok = failures == 0 && (o.purlin == PurlinMode::None || !std::isnan(row.purlin.us)) &&
           (!x.nccl || !std::isnan(row.nccl.us));
  if (!why.empty()) x.log.all("rank %d: %s: %s\n", rank, label.c_str(), why.c_str());
  return row;
}

int runRank(const CollBenchOptions &o, Bootstrap &boot, int device) {
  const int rank = boot.rank(), n = boot.size();
  PURLIN_CUDA_CHECK(cudaSetDevice(device));
  Log log(rank == 0 ? o.outDir : std::string(), "run.log");
  CommOptions copt;
  copt.direct = o.purlin != PurlinMode::Staged;
  copt.logPlans = true;  // once per shape: the plan line of every row, to the plan log
  copt.planLogPath = o.planLog.empty() ? o.outDir + "/plans.log" : o.planLog;
  boot.barrier();        // ranks sharing a GPU: allocations only while no kernel of theirs runs
  Communicator comm(boot, device, copt);
  ncclComm_t nccl = o.nccl == NcclMode::None ? nullptr : createNcclComm(boot, o.nccl);
  cudaStream_t st = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto bufs = std::make_unique<Buffers>(o.maxBytes, nccl, o.nccl);
  uint64_t registration = 0;
  if (o.purlin == PurlinMode::Registered) registration = comm.registerBuffer(bufs->out, o.maxBytes);
  PURLIN_CUDA_CHECK(cudaDeviceSynchronize());
  boot.barrier();
  const std::string purlinSeries = o.purlin == PurlinMode::None ? "-"
                                   : seriesName("purlin", modeName(o.purlin), eagerTiming(o.purlin), o.separator);
  const std::string ncclSeries = o.nccl == NcclMode::None ? "-"
                                 : seriesName("nccl", modeName(o.nccl), eagerTiming(o.purlin), o.separator);
  const std::string api = std::string(purlinApiName()) + "; purlin series " + purlinSeries + " (" +
                          legendOf(o.purlin) + "); nccl series " + ncclSeries + " (" + legendOf(o.nccl) + ")" +
                          (o.separator ? "; PDL-neutral: an empty kernel between calls" : "") +
                          (o.threads ? "; " + std::to_string(n) + " in-process ranks (dry run)" : "");
  writeMeta(o.outDir, rank, n, device, api.c_str(), log,
            {{"purlin_series", purlinSeries}, {"purlin_legend", legendOf(o.purlin)},
             {"nccl_series", ncclSeries}, {"nccl_legend", legendOf(o.nccl)},
             {"separator", o.separator ? "1" : "0"}, {"in_process_ranks", std::to_string(o.threads)}});

  Csv csv(rank == 0 ? o.outDir : std::string(), "results.csv",
          "collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas,program,"
          "purlin_min_us,purlin_max_us,nccl_min_us,nccl_max_us,purlin_busGBps,nccl_busGBps,samples,"
          "purlin_series,nccl_series,plan,wrong,placement");
  Context x{o, boot, comm, nccl, *bufs, st, log};
  int failed = 0;
  log.root("# per row: us per call (min-max of the samples), algbw and busbw GB/s, for Purlin and NCCL;\n"
           "# x = NCCL's us / Purlin's; #wrong = Purlin's output elements off the reference, all ranks\n");
  // One row: validated, timed, printed (console and CSV).
  const auto measureRow = [&](Coll c, std::size_t bytes, bool inPlace) {
    const Shape s = shapeOf(c, bytes, n);
    Row r = measure(x, c, bytes, inPlace);
    failed += !r.ok;
    const std::string name = std::string(collName(c)) + (inPlace ? " (in)" : "");
    const double gbP = s.msgBytes / r.purlin.us / 1e3, gbN = s.msgBytes / r.nccl.us / 1e3;
    const double bus = busFactor(c, n);
    const int samples = std::max(r.purlin.samples, r.nccl.samples);
    csv.row("%s,%zu,%.3f,%.3f,%.2f,%.2f,%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%d,%s,%s,%s,%lld,%s", collName(c), bytes,
            r.purlin.us, r.nccl.us, gbP, gbN, r.ok ? 1 : 0, r.ctas, r.program.c_str(), r.purlin.min, r.purlin.max,
            r.nccl.min, r.nccl.max, gbP * bus, gbN * bus, samples, purlinSeries.c_str(), ncclSeries.c_str(),
            quoted(r.plan).c_str(), r.wrong, inPlace ? "in" : "out");
    log.root("%-19s %11zu B  purlin %10.2f us (%.2f-%.2f) %8.2f %8.2f GB/s  nccl %10.2f us (%.2f-%.2f) %8.2f %8.2f GB/s"
             "  x%5.2f  ctas %3d  #wrong %lld  %-10s %s\n",
             name.c_str(), bytes, r.purlin.us, r.purlin.min, r.purlin.max, gbP, gbP * bus, r.nccl.us, r.nccl.min,
             r.nccl.max, gbN, gbN * bus, r.nccl.us / r.purlin.us, r.ctas, r.wrong, r.program.c_str(),
             r.ok ? "ok" : "FAILED");
  };
  for (Coll c : o.colls) {
    for (const std::size_t bytes : messageSizes(o)) {
      if (shapeOf(c, bytes, n).msgBytes == 0) continue; // fewer elements than ranks (the V forms: count is unused)
      measureRow(c, bytes, false);
      if (o.inPlace && hasInPlaceForm(c)) measureRow(c, bytes, true);
    }
  }
  PURLIN_CUDA_CHECK(cudaStreamSynchronize(st));
  boot.barrier();
  if (registration) comm.deregisterBuffer(registration);
  boot.barrier();
  bufs.reset();
  (void)cudaStreamDestroy(st);
  if (nccl) ncclCommDestroy(nccl);
  log.root("coll_bench: %d failed row(s)\n", failed);
  boot.barrier();
  return failed ? 1 : 0;
}

int run(const CollBenchOptions &o) {
  setBenchEnvironment();
  if (o.threads > 0) {  // a dry run: ranks as threads sharing the visible GPUs
    // Load every kernel at CUDA's start: under lazy loading a rank's first
    // launch of a kernel (a fill, a checksum) waits for the device, where a
    // peer's collective kernel spins for this rank's (docs/runtime.md
    // "Ranks sharing a GPU"; it hung the registered dry run at its first row).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    int gpus = 0;
    PURLIN_CUDA_CHECK(cudaGetDeviceCount(&gpus));
    InProcessGroup group(o.threads, 600000);
    std::vector<int> status(o.threads, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < o.threads; ++r)
      threads.emplace_back([&, r] {
        try {
          status[r] = runRank(o, *group.bootstrap(r), r % gpus);
        } catch (const std::exception &e) {
          std::fprintf(stderr, "coll_bench: rank %d: error: %s\n", r, e.what());
          status[r] = 3;
        }
      });
    for (auto &t : threads) t.join();
    int worst = 0;
    for (int s : status) worst = std::max(worst, s);
    return worst;
  }
  std::unique_ptr<Bootstrap> boot = bootstrapFromEnv();
  const int n = boot->size();
  if (n < 2 || n > kMaxRanks) {
    std::fprintf(stderr, "coll_bench: world size %d not in [2, %d]; start it with purlin-launch -n N\n", n, kMaxRanks);
    return 2;
  }
  return runRank(o, *boot, deviceForRank(boot->rank()));
}

} // namespace

int main(int argc, char **argv) {
  CollBenchOptions o;
  std::string error;
  switch (parseCollBenchArgs(argc, argv, o, error)) {
    case ParseResult::Help: std::fputs(kCollBenchUsage, stdout); return 0;
    case ParseResult::Error: std::fprintf(stderr, "coll_bench: %s\n%s", error.c_str(), kCollBenchUsage); return 2;
    case ParseResult::Run: break;
  }
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "coll_bench: error: %s\n", e.what());
    return 3;
  }
}
