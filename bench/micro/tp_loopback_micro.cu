/// @file tp_loopback_micro.cu
/// @brief The throughput program's own code on one GPU (an A/B of its code
/// shape where only one GPU is lent): two ranks as threads of one process,
/// both on device 0, the latency program off (colltest::PTput), pull and
/// push, AllGather / ReduceScatter / AllReduce / AllToAll (bf16 sum for the
/// reductions). NVLink is not involved: the ranks' staging is the same
/// HBM, so the figures say how fast the printed roles move bytes through
/// one GPU, not what two GPUs reach.
///
/// Per (collective, transfer, size): two warm-up calls, then --reps
/// repetitions of --calls back-to-back calls; a repetition's time is the
/// slowest rank's (cudaEvent around its calls, the ranks released together
/// by a host barrier) divided by the calls. The third transfer, `direct`,
/// is the direct program: one call captured into a CUDA graph (the test
/// policy colltest::PAuto, direct from 4 MiB; AllGather / AllToAll on any
/// n, the reductions on two ranks) and the graph replayed --calls times per
/// repetition; the fourth, `engine`, is its copy-engine form (the same
/// capture with PAuto's directEngineMinBytes at 4 MiB; on one GPU the copy
/// engines move device-local bytes). Prints one line per row:
///   row,<collective>,<pull|push|direct|engine>,<bytes>,<median us>,<min us>,<max us>
/// with bytes = the gathered output for AllGather, the input per rank for
/// the others (as coll_perf_test). The first call's result is checked
/// against the host reference of rank 0 (a wrong program is not timed).
///
/// Usage: tp_loopback_micro [--reps N] [--calls N] [--sizes a,b,...]
// Policies of its own: the device programs compiled here (coll_launch.cuh).
#define COLLTEST_PROGRAMS
#include "coll_test_common.cuh"

#include <algorithm>
#include <atomic>
#include <sstream>

using namespace colltest;

namespace {

struct Options {
  int reps = 7, calls = 20;
  std::vector<std::size_t> sizes = {std::size_t(4) << 20, std::size_t(16) << 20, std::size_t(64) << 20};
};

/// What rank r's output element i must be (bf16; inputs from fill()).
float reference(Coll c, int n, int r, uint32_t seed, std::size_t count, std::size_t i) {
  switch (c) {
    case Coll::AllGather: return inputValue(seed, uint32_t(i / count), i % count);
    case Coll::AllToAll: return inputValue(seed, uint32_t(i / count), r * count + i % count);
    case Coll::ReduceScatter:
    case Coll::AllReduce: {
      const std::size_t at = c == Coll::ReduceScatter ? r * count + i : i;
      float acc = inputValue(seed, 0, at);
      for (int p = 1; p < n; ++p) acc = hostOp(RedOp::Sum, acc, inputValue(seed, uint32_t(p), at));
      return acc;
    }
  }
  return 0;
}

/// The harness's policies (this program calls bf16 sums; the kernels are
/// the same for every pair: purlinc's instantiation table).
struct PAutoBf16 : PAuto {};
struct PTputBf16 : PTput {};

struct Shared {
  std::vector<double> ms;  ///< per rank: this repetition's time
  std::atomic<int> failures{0};
};

void rankMain(Bootstrap& boot, const Options& o, Shared& sh) {
  const int n = boot.size(), r = boot.rank();
  cudaStream_t s = nullptr;
  CT_CUDA(cudaSetDevice(0));
  CT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CT_CUDA(cudaEventCreate(&e0));
  CT_CUDA(cudaEventCreate(&e1));
  CommOptions co;
  co.stagingHalfBytes = 64u << 20;
  co.packetHalfBytes = 8u << 20;
  {
    Communicator comm(boot, 0, co);
    uint32_t seed = 11;
    // A failure (counted before a barrier, read after it: the same on both
    // ranks) ends the run on both ranks.
    for (int mode = 0; mode < 4; ++mode) {  // pull, push, direct, engine
      const bool push = mode == 1, engine = mode == 3, direct = mode >= 2;
      const char* const modeName = engine ? "engine" : direct ? "direct" : push ? "push" : "pull";
      setTransfer(push);
      // `engine`: the direct program's copy-engine form from 4 MiB (0: the
      // runtime's default, 128 MiB).
      for (int m = 0; m <= kMaxRanks; ++m) PAuto::world[m].directEngineMinBytes = engine ? std::size_t(4) << 20 : 0;
      for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
        for (std::size_t bytes : o.sizes) {
          if (sh.failures.load()) break;
          // The direct program reduces on two ranks only (this program's n), from 4 MiB.
          if (direct && bytes < (std::size_t(4) << 20)) continue;
          ++seed;
          const std::size_t E = 2;
          const std::size_t count = c == Coll::AllReduce ? bytes / E : bytes / (std::size_t(n) * E);
          const std::size_t inE = c == Coll::AllGather || c == Coll::AllReduce ? count : n * count;
          const std::size_t outE = c == Coll::ReduceScatter || c == Coll::AllReduce ? count : n * count;
          std::byte *in = nullptr, *out = nullptr;
          CT_CUDA(cudaMalloc(&in, inE * E));
          CT_CUDA(cudaMalloc(&out, outE * E));
          fill(in, inE, DType::BF16, seed, uint32_t(r), 0, s);
          CT_CUDA(cudaStreamSynchronize(s));
          sn::CallArgs a;
          a.in = in;
          a.out = out;
          a.count = count;
          a.dtype = DType::BF16;
          a.op = RedOp::Sum;
          boot.barrier();
          std::string why;
          cudaGraphExec_t exec = nullptr;
          const std::size_t before = comm.directRegistrations();
          if (direct) {
            // Both ranks capture the call (registerDirect is collective), then replay it.
            cudaGraph_t graph;
            CT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            const Status st = launchColl<PAutoBf16>(c, comm, a, s);
            CT_CUDA(cudaStreamEndCapture(s, &graph));
            if (st != Status::Ok) why = std::string("capture: ") + sn::lastError();
            else if (comm.directRegistrations() == before) why = "the captured call did not take the direct program";
            else CT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
            cudaGraphDestroy(graph);
          }
          auto once = [&] {
            if (direct) return exec ? cudaGraphLaunch(exec, s) == cudaSuccess : false;
            return launchColl<PTputBf16>(c, comm, a, s) == Status::Ok;
          };
          for (int w = 0; w < 2 && why.empty(); ++w)
            if (!once()) why = std::string("launch: ") + sn::lastError();
          CT_CUDA(cudaStreamSynchronize(s));
          if (why.empty()) {
            std::vector<std::byte> got(outE * E);
            CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
            std::byte want[4];
            for (std::size_t i = 0; i < outE && why.empty(); i += 97) {
              fromFloat(DType::BF16, reference(c, n, r, seed, count, i), want);
              if (std::memcmp(want, got.data() + i * E, E) != 0) why = "element " + std::to_string(i) + " differs";
            }
          }
          if (!why.empty()) {
            std::printf("FAIL rank %d: %s %s %zu B: %s\n", r, name(c), modeName, bytes, why.c_str());
            ++sh.failures;
          }
          boot.barrier();
          const bool ok = sh.failures.load() == 0;
          std::vector<double> perCall;
          for (int rep = 0; ok && rep < o.reps; ++rep) {
            boot.barrier();
            CT_CUDA(cudaEventRecord(e0, s));
            for (int i = 0; i < o.calls; ++i) (void)once();
            CT_CUDA(cudaEventRecord(e1, s));
            CT_CUDA(cudaEventSynchronize(e1));
            float ms = 0;
            CT_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            sh.ms[r] = ms;
            boot.barrier();
            perCall.push_back(*std::max_element(sh.ms.begin(), sh.ms.end()) * 1e3 / o.calls);
            boot.barrier();
          }
          if (r == 0 && ok) {
            std::sort(perCall.begin(), perCall.end());
            std::printf("row,%s,%s,%zu,%.2f,%.2f,%.2f\n", name(c), modeName, bytes,
                        perCall[perCall.size() / 2], perCall.front(), perCall.back());
            std::fflush(stdout);
          }
          if (exec) cudaGraphExecDestroy(exec);
          if (direct) comm.releaseDirect();  // before the buffers are freed
          cudaFree(in);
          cudaFree(out);
          if (!ok) break;
        }
      }
    }
    boot.barrier();
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (a == "--reps") o.reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--calls") o.calls = std::max(1, std::atoi(v.c_str()));
    else if (a == "--sizes") {
      o.sizes.clear();
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) o.sizes.push_back(std::size_t(std::strtoull(t.c_str(), nullptr, 0)));
      if (o.sizes.empty()) return false;
    } else {
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::printf("usage: tp_loopback_micro [--reps N] [--calls N] [--sizes a,b,...]\n");
    return 2;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("tp_loopback_micro: no GPU\n");
    return 2;
  }
  const int n = 2;
  InProcessGroup group(n);
  Shared sh;
  sh.ms.assign(n, 0.0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        rankMain(*group.bootstrap(r), o, sh);
      } catch (const std::exception& e) {
        std::printf("FAIL rank %d: %s\n", r, e.what());
        ++sh.failures;
      }
    });
  for (auto& t : threads) t.join();
  std::printf("tp_loopback_micro: %s\n", sh.failures.load() ? "FAIL" : "PASS");
  return sh.failures.load() ? 1 : 0;
}
