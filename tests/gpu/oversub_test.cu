/// @file oversub_test.cu
/// @brief World sizes beyond the GPUs at hand: N ranks (default 4, then 8)
/// as threads of one process on the visible GPUs (rank r on device r mod
/// #GPUs), so the runtime's n > 2 paths run on real hardware even where only
/// two GPUs are lent: latency, staged throughput (pull and push) and, for
/// captured AllGather/AllToAll, the direct program. Checked against host
/// references (NCCL cannot put two ranks on one GPU): copies bitwise,
/// reductions bitwise equal to the fp32 ascending-rank reference. Checked
/// mode bounds every wait, so a rank pair that is not co-resident reports a
/// timeout instead of hanging. Not a performance test (ranks share GPUs).
///
/// Ranks that share a GPU run with programs sized so that all of them are
/// resident together (Communicator::ranksPerDevice, snac/resident.cuh).
///
/// Each world runs the cases under pull and under push, then (unchecked)
/// the direct program's copy-engine forms.
///
/// Run: gpu-bin/oversub_test [--ranks N]   (N in 2..8; default: 4, then 8)
#include "coll_test_common.cuh"

#include <atomic>
#include <chrono>

using namespace colltest;

namespace {

struct Case {
  Coll c;
  DType t;
  RedOp op;
  std::size_t count;
  bool tput;   ///< PTput (no latency program)
  bool graph;  ///< captured and replayed once
  bool engine = false;  ///< a copy-engine case (unchecked communicator; the form expected where it applies)
};

Status run(const Case& k, Communicator& comm, const sn::CallArgs& a, cudaStream_t s, int* memcpyNodes) {
  if (!k.graph) return k.tput ? launchColl<PTput>(k.c, comm, a, s) : launchColl<PAuto>(k.c, comm, a, s);
  return captureAndReplay(s, 1, [&] { return launchColl<PAuto>(k.c, comm, a, s); }, memcpyNodes);
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    for (std::size_t cnt : {std::size_t(1), std::size_t(1023), std::size_t(65539), std::size_t(1) << 18,
                            (std::size_t(1) << 20) + 5})
      cs.push_back({c, DType::BF16, RedOp::Sum, cnt, false, false});
    cs.push_back({c, DType::F32, RedOp::Max, 4099, true, false});
    cs.push_back({c, DType::F16, RedOp::Sum, 300007, true, false});
    // Captured: AllGather/AllToAll of >= 4 MiB take the direct program.
    cs.push_back({c, DType::BF16, RedOp::Sum, std::size_t(1) << 20, false, true});
    cs.push_back({c, DType::F32, RedOp::Min, std::size_t(3) << 19, false, true});
  }
  return cs;
}

/// The copy-engine form of the direct program: captured calls of 128 MiB
/// (sn::kDirectEngineMinBytes) of bf16 on an unchecked communicator (a copy
/// cannot be withheld after a timeout, so checked ones never take it);
/// reductions only on two ranks.
std::vector<Case> engineCases(int n) {
  std::vector<Case> cs;
  const std::size_t msgElems = sn::kDirectEngineMinBytes / 2;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    if (isReduce(c) && n != 2) continue;
    // Per-rank blocks of whole 16-byte units (the direct program's rule) and
    // at least the threshold in all.
    std::size_t count = c == Coll::AllReduce ? msgElems : (msgElems + std::size_t(n) - 1) / std::size_t(n);
    count = (count + 7) / 8 * 8;
    cs.push_back({c, DType::BF16, RedOp::Sum, count, false, true, true});
  }
  return cs;
}

/// One rank's whole run; returns its failures. `engine`: the copy-engine
/// cases on an unchecked communicator (waits never give up: a hang, which
/// the caller's timeout reports), else every other case, checked.
int rankMain(Bootstrap& boot, int dev, bool push, bool engine) {
  int failures = 0;
  cudaStream_t s = beginRank(dev, push);
  const CommOptions o = sharedGpuOptions(64u << 20, !engine);
  const int n = boot.size(), r = boot.rank();
  {
    Communicator comm(boot, dev, o);
    uint32_t seed = 7;
    for (const Case& k : engine ? engineCases(n) : cases()) {
      ++seed;
      const std::size_t E = dtypeSize(k.t);
      const std::size_t inE = inElems(k.c, n, k.count), outE = outElems(k.c, n, k.count);
      std::byte *in = nullptr, *out = nullptr;
      CT_CUDA(cudaMalloc(&in, inE * E));
      CT_CUDA(cudaMalloc(&out, outE * E));
      fill(in, inE, k.t, seed, uint32_t(r), 0, s);
      CT_CUDA(cudaMemsetAsync(out, 0xCD, outE * E, s));
      CT_CUDA(cudaStreamSynchronize(s));
      const sn::CallArgs a = callArgs(k, in, out);
      const std::size_t before = comm.directRegistrations();
      int memcpyNodes = 0;
      Status st = run(k, comm, a, s, &memcpyNodes);
      CT_CUDA(cudaStreamSynchronize(s));
      std::string why;
      if (st != Status::Ok) why = std::string("launch: ") + sn::lastError();
      try {
        comm.checkDeviceErrors();
      } catch (const Error& e) {
        why = e.what();
      }
      if (why.empty()) {
        std::vector<std::byte> got(outE * E);
        CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
        std::byte want[4];
        for (std::size_t i = 0; i < outE && why.empty(); ++i) {
          expectedElem(k.c, k.t, k.op, k.count, n, r, seed, i, want);
          if (std::memcmp(want, got.data() + i * E, E) != 0)
            why = "element " + std::to_string(i) + " = " + std::to_string(toFloat(k.t, got.data() + i * E)) +
                  ", reference " + std::to_string(toFloat(k.t, want));
        }
      }
      const bool direct = comm.directRegistrations() > before;
      // The direct program: captured calls of >= 4 MiB (the default policy's
      // directMinBytes) of a copy, or of a reduction on two ranks.
      const std::size_t msgBytes = (k.c == Coll::AllReduce ? 1 : std::size_t(n)) * k.count * E;
      const bool wantDirect = k.graph && (!isReduce(k.c) || n == 2) && msgBytes >= (std::size_t(4) << 20);
      if (why.empty() && direct != wantDirect)
        why = std::string("direct program ") + (direct ? "used" : "not used") + " for this captured call";
      // The copy-engine form: for the engine cases, while the ranks sharing
      // a GPU fit its hardware queues (resident.cuh engineFitsQueues; past
      // that the direct kernel), reductions only with stream memory operations.
      const bool wantEngine = k.engine && sn::detail::engineFitsQueues(comm.ranksPerDevice()) &&
                              (!isReduce(k.c) || streamMemOpsAvailable());
      if (why.empty() && k.graph && (memcpyNodes > 0) != wantEngine)
        why = std::to_string(memcpyNodes) + " memcpy nodes captured: copy-engine form " +
              (wantEngine ? "expected" : "not expected");
      if (k.graph) comm.releaseDirect();  // before the buffers are freed
      cudaFree(in);
      cudaFree(out);
      char b[160];
      std::snprintf(b, sizeof b, "%s %s/%s count=%zu%s%s n=%d %s", name(k.c), toString(k.t),
                    isReduce(k.c) ? toString(k.op) : "copy", k.count, k.tput ? " throughput-policy" : "",
                    k.graph ? (direct ? (memcpyNodes > 0 ? " graph(direct, copy engine)" : " graph(direct)") : " graph") : "", n,
                    engine ? "unchecked" : push ? "push" : "pull");
      reportCase(r, b, why, failures);
      boot.barrier();
      if (!comm.broken().empty()) break;  // a timeout: the ranks' epochs no longer agree
    }
    boot.barrier();
  }
  cudaStreamDestroy(s);
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> worlds = {4, 8};
  if (!worldsFromArgs(argc, argv, "oversub_test", worlds)) return 2;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("oversub_test: no GPU\n");
    return 2;
  }
  int total = 0;
  for (int n : worlds)
    for (int pass = 0; pass < 3; ++pass) {  // pull, push, then the copy-engine cases
      const bool push = pass == 1, engine = pass == 2;
      const auto t0 = std::chrono::steady_clock::now();
      const int failures = runOversubscribed(
          n, gpus, [&](Bootstrap& boot, int dev) { return rankMain(boot, dev, push, engine); });
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("oversub_test: %d ranks on %d GPU(s), %s: %d failure(s), %.1f s\n", n, gpus,
                  engine ? "copy-engine forms (unchecked)" : push ? "push transfer" : "pull transfer", failures, sec);
      total += failures;
    }
  std::printf("oversub_test: %s\n", total ? "FAIL" : "PASS");
  return total ? 1 : 0;
}
