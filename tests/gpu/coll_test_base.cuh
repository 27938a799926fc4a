/// @file coll_test_base.cuh
/// @brief Harness of the collective GPU tests and the timing program (no
/// collective in it: coll_test_common.cuh adds the four unrooted ones,
/// rooted_test.cu the rooted ones): one
/// rank per GPU, either in-process (one thread per GPU, InProcessGroup) or
/// one process per GPU under purlin-launch (PURLIN_RANK set); a Purlin
/// communicator and an NCCL communicator per rank; the test policies;
/// deterministic inputs reproducible on the host.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <climits>
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"
#include "purlin/snac/collective.cuh"
#include "test_policies.cuh"

namespace colltest {

using namespace purlin;
namespace sn = purlin::snac;

/// One rank: its bootstrap, CUDA device, stream and NCCL communicator.
struct Rank {
  int rank = 0, n = 1, dev = 0;
  Bootstrap* boot = nullptr;
  cudaStream_t stream = nullptr;
  ncclComm_t nccl = nullptr;
  int failures = 0;
  bool verbose = true;
  void fail() { ++failures; }
};

#define CT_CUDA(call)                                                                       \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("FAIL rank ?: CUDA %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #call); \
      std::fflush(stdout);                                                                  \
      throw std::runtime_error("cuda error");                                               \
    }                                                                                       \
  } while (0)

/// The launcher's arguments for test case `k` (any case type with count,
/// t, op) on buffers `in` / `out`.
template <class Case>
sn::CallArgs callArgs(const Case& k, const void* in, void* out) {
  sn::CallArgs a;
  a.in = in;
  a.out = out;
  a.count = k.count;
  a.dtype = k.t;
  a.op = k.op;
  return a;
}

/// Captures `launch()` (one collective call, thread-local capture mode) on
/// stream s into a CUDA graph and replays the graph `replays` times, then
/// synchronizes s. Returns launch()'s status; on failure nothing is replayed.
/// A capture is where the launcher may register the direct program.
/// `memcpyNodes` (optional) receives the number of memcpy nodes captured
/// (the direct program's copy-engine form has some, every kernel form none).
template <class Launch>
Status captureAndReplay(cudaStream_t s, int replays, Launch&& launch, int* memcpyNodes = nullptr) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const Status st = launch();
  CT_CUDA(cudaStreamEndCapture(s, &graph));
  if (memcpyNodes) {
    std::size_t num = 0;
    CT_CUDA(cudaGraphGetNodes(graph, nullptr, &num));
    std::vector<cudaGraphNode_t> nodes(num);
    if (num) CT_CUDA(cudaGraphGetNodes(graph, nodes.data(), &num));
    *memcpyNodes = 0;
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type;
      if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
        (void)cudaGetLastError();  // driver memory-operation nodes have no runtime type
        continue;
      }
      if (type == cudaGraphNodeTypeMemcpy) ++*memcpyNodes;
    }
  }
  if (st == Status::Ok) {
    CT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < replays; ++rep) CT_CUDA(cudaGraphLaunch(exec, s));
    CT_CUDA(cudaStreamSynchronize(s));
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
  return st;
}
/// Sets up NCCL on the ranks of `boot` (rank 0's unique id, shared by allGather).
inline void initNccl(Rank& R) {
  ncclUniqueId id{};
  if (R.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId");
  // A plain array: nvcc 13's front end crashes on std::vector<ncclUniqueId> here.
  if (R.n > kMaxRanks) throw std::runtime_error("too many ranks");
  ncclUniqueId all[kMaxRanks];
  R.boot->allGather(&id, all, sizeof(id));
  if (ncclCommInitRank(&R.nccl, R.n, all[0], R.rank) != ncclSuccess) throw std::runtime_error("ncclCommInitRank");
}

/// n ranks as threads of this process, rank r on device r mod `gpus`
/// (ranks share GPUs when n > gpus: oversub_test, rooted_test): runs
/// rankMain(bootstrap, device) on each and returns the sum of what they
/// return (an exception counts as one failure, reported with its rank).
inline int runOversubscribed(int n, int gpus, const std::function<int(Bootstrap&, int)>& rankMain) {
  InProcessGroup group(n);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        failures += rankMain(*group.bootstrap(r), r % gpus);
      } catch (const std::exception& e) {
        std::printf("FAIL rank %d: %s\n", r, e.what());
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  return failures.load();
}

/// A two-rank test run twice (lifetime_test, vmm_test): first as threads
/// of this process; then, if they passed, as two processes, by starting
/// itself again under purlin-launch (next to it), each process one rank
/// from bootstrapFromEnv (they share the GPU when there is one). `body`
/// runs one rank on its device and stream. Returns main's exit status.
inline int runThreadsThenProcesses(const char* name, const std::function<void(Rank&)>& body) {
  auto prepare = [](Rank& R, Bootstrap& boot, int dev) {
    R.boot = &boot;
    R.rank = boot.rank();
    R.n = boot.size();
    R.dev = dev;
    CT_CUDA(cudaSetDevice(dev));
    CT_CUDA(cudaStreamCreateWithFlags(&R.stream, cudaStreamNonBlocking));
  };
  int gpus = 1;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    if (std::getenv("PURLIN_RANK") == nullptr) {
      std::printf("FAIL %s: no GPU\n", name);
      return 2;
    }
    gpus = 1;
  }
  if (std::getenv("PURLIN_RANK") == nullptr) {
    const int failures = runOversubscribed(2, gpus, [&](Bootstrap& boot, int dev) {
      Rank R;
      prepare(R, boot, dev);
      body(R);
      cudaStreamDestroy(R.stream);
      return R.failures;
    });
    std::printf("%s: 2 ranks as threads of one process: %s\n", name, failures ? "FAIL" : "PASS");
    if (failures) return 1;
    char self[PATH_MAX] = {};
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
      std::printf("%s: cannot find itself\n", name);
      return 2;
    }
    std::string dir(self, std::size_t(len));
    dir = dir.substr(0, dir.rfind('/'));
    const std::string launch = dir + "/purlin-launch";
    if (access(launch.c_str(), X_OK) != 0) {  // a test that did not run has not passed
      std::printf("FAIL %s: %s not found (it runs the two rank processes; build it beside this test)\n", name,
                  launch.c_str());
      return 2;
    }
    std::fflush(stdout);
    execl(launch.c_str(), launch.c_str(), "-n", "2", self, static_cast<char*>(nullptr));
    std::printf("%s: exec %s failed\n", name, launch.c_str());
    return 2;
  }
  // One rank of this process (no NCCL: it refuses two ranks on one GPU).
  Rank R;
  std::unique_ptr<Bootstrap> boot;
  try {
    boot = bootstrapFromEnv();
    prepare(R, *boot, boot->rank() % gpus);
    std::printf("%s: rank %d of %d (pid %d) on GPU %d\n", name, R.rank, R.n, int(getpid()), R.dev);
    body(R);
  } catch (const std::exception& e) {
    std::printf("FAIL rank %d: exception: %s\n", R.rank, e.what());
    R.fail();
  }
  if (R.stream) cudaStreamDestroy(R.stream);
  std::printf("%s: rank %d: %s\n", name, R.rank, R.failures ? "FAIL" : "PASS");
  return R.failures ? 1 : 0;
}

/// One case's verdict: "FAIL rank R: what: why" on the failing rank (and
/// counted in `failures`), "PASS what" on rank 0 otherwise.
inline void reportCase(int rank, const char* what, const std::string& why, int& failures) {
  if (!why.empty()) {
    ++failures;
    std::printf("FAIL rank %d: %s: %s\n", rank, what, why.c_str());
  } else if (rank == 0) {
    std::printf("PASS %s\n", what);
  }
  std::fflush(stdout);
}

/// Whether `mine` holds on any rank (collective over `boot`): a decision
/// every rank must take alike (replay a graph, stop after a timeout).
inline bool anyRank(Bootstrap& boot, bool mine) {
  int all[kMaxRanks] = {};
  const int v = mine ? 1 : 0;
  boot.allGather(&v, all, sizeof(v));
  for (int i = 0; i < boot.size(); ++i)
    if (all[i]) return true;
  return false;
}

/// One call through `launch()` (a Status), or, for a `graph` case, the
/// call captured into a CUDA graph on stream s, instantiated into *exec
/// and replayed once (the caller may refill and replay *exec again).
template <class Launch>
Status launchOrCapture(bool graph, cudaStream_t s, cudaGraphExec_t* exec, Launch&& launch) {
  if (!graph) return launch();
  cudaGraph_t g;
  CT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const Status st = launch();
  CT_CUDA(cudaStreamEndCapture(s, &g));
  if (st == Status::Ok) {
    CT_CUDA(cudaGraphInstantiate(exec, g, 0));
    CT_CUDA(cudaGraphLaunch(*exec, s));
  }
  cudaGraphDestroy(g);
  return st;
}

/// Runs body on one rank (its own thread or process); returns its failures.
inline int runRank(Bootstrap* boot, int dev, const std::function<void(Rank&)>& body) {
  Rank R;
  R.boot = boot;
  R.rank = boot->rank();
  R.n = boot->size();
  R.dev = dev;
  try {
    CT_CUDA(cudaSetDevice(dev));
    CT_CUDA(cudaStreamCreateWithFlags(&R.stream, cudaStreamNonBlocking));
    initNccl(R);
    body(R);
  } catch (const std::exception& e) {
    std::printf("FAIL rank %d: exception: %s\n", R.rank, e.what());
    R.fail();
  }
  if (R.nccl) ncclCommDestroy(R.nccl);
  if (R.stream) cudaStreamDestroy(R.stream);
  return R.failures;
}

/// Runs body(rank) on every rank: in-process threads (no PURLIN_RANK) or
/// this process's rank (under purlin-launch). Returns the exit status.
inline int runRanks(const char* program, const std::function<void(Rank&)>& body) {
  int total = 0;
  if (std::getenv("PURLIN_RANK")) {
    std::unique_ptr<Bootstrap> boot;
    try {
      boot = bootstrapFromEnv();
    } catch (const std::exception& e) {
      std::printf("FAIL bootstrap: %s\n", e.what());
      return 1;
    }
    const char* d = std::getenv("PURLIN_DEVICE");
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) gpus = 1;
    const int dev = d ? std::atoi(d) : boot->rank() % gpus;  // purlin-launch sets it only with --devices
    std::printf("%s: multi-process, rank %d of %d on GPU %d\n", program, boot->rank(), boot->size(), dev);
    total = runRank(boot.get(), dev, body);
  } else {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
      std::printf("SKIP %s: needs 2 GPUs (found %d)\n", program, ndev);
      return 0;
    }
    const int n = 2;
    std::printf("%s: in-process, %d ranks (threads)\n", program, n);
    InProcessGroup group(n);
    std::vector<std::unique_ptr<Bootstrap>> boots;
    for (int r = 0; r < n; ++r) boots.push_back(group.bootstrap(r));
    std::vector<int> fails(n, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&fails, &boots, &body, r] { fails[r] = runRank(boots[r].get(), r, body); });
    for (auto& t : threads) t.join();
    for (int f : fails) total += f;
  }
  std::printf("%s: %s (%d failure%s)\n", program, total ? "FAIL" : "PASS", total, total == 1 ? "" : "s");
  return total ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Deterministic inputs: element i of rank p's input, reproducible on host.
// Values are multiples of 1/8 in [-15.875, 15.875]: exact in bf16 and fp16.
// ---------------------------------------------------------------------------

__host__ __device__ inline uint32_t mix(uint32_t seed, uint32_t p, uint64_t i) {
  uint64_t x = (uint64_t(seed) << 40) ^ (uint64_t(p) << 32) ^ i;
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return uint32_t(x);
}
__host__ __device__ inline float inputValue(uint32_t seed, uint32_t p, uint64_t i) {
  return float(int(mix(seed, p, i) % 255u) - 127) / 8.0f;
}

__global__ void fillKernel(std::byte* dst, std::size_t count, DType t, uint32_t seed, uint32_t p, uint64_t first) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = inputValue(seed, p, first + i);
    if (t == DType::F32) reinterpret_cast<float*>(dst)[i] = v;
    else if (t == DType::F16) reinterpret_cast<__half*>(dst)[i] = __float2half_rn(v);
    else reinterpret_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(v);
  }
}
/// Fills `count` elements at dst with rank p's input elements first.. (stream-ordered).
inline void fill(std::byte* dst, std::size_t count, DType t, uint32_t seed, uint32_t p, uint64_t first, cudaStream_t s) {
  if (!count) return;
  fillKernel<<<256, 256, 0, s>>>(dst, count, t, seed, p, first);
}

inline ncclDataType_t ncclType(DType t) {
  return t == DType::F32 ? ncclFloat32 : t == DType::F16 ? ncclFloat16 : ncclBfloat16;
}
inline ncclRedOp_t ncclOp(RedOp o) { return o == RedOp::Sum ? ncclSum : o == RedOp::Max ? ncclMax : ncclMin; }

/// Host conversions between element bits and float.
inline float toFloat(DType t, const std::byte* p) {
  if (t == DType::F32) { float f; std::memcpy(&f, p, 4); return f; }
  uint16_t b; std::memcpy(&b, p, 2);
  if (t == DType::F16) { __half_raw r; r.x = b; return __half2float(__half(r)); }
  uint32_t u = uint32_t(b) << 16; float f; std::memcpy(&f, &u, 4); return f;
}
inline void fromFloat(DType t, float f, std::byte* p) {
  if (t == DType::F32) { std::memcpy(p, &f, 4); return; }
  if (t == DType::F16) { __half_raw r = __half_raw(__float2half_rn(f)); std::memcpy(p, &r.x, 2); return; }
  uint32_t u; std::memcpy(&u, &f, 4);
  uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // RNE (inputs are finite)
  uint16_t b = uint16_t(rounded);
  std::memcpy(p, &b, 2);
}
inline float hostOp(RedOp o, float a, float b) {
  return o == RedOp::Sum ? a + b : o == RedOp::Max ? std::fmax(a, b) : std::fmin(a, b);
}

/// A hash of n bytes (8-byte words, then the tail), to compare across ranks.
inline uint64_t fnv(const std::byte* p, std::size_t n) {
  uint64_t h = 1469598103934665603ull;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ uint64_t(uint8_t(p[i]))) * 1099511628211ull;
  return h;
}

/// Compares `outE` elements of type t at device address `out` with the
/// host reference want(i, bytes) (which writes element i's expected bytes
/// and returns false where the element must be the untouched sentinel);
/// "" or the first mismatch.
template <class Want>
std::string firstMismatch(DType t, const std::byte* out, std::size_t outE, Want&& want) {
  const std::size_t E = dtypeSize(t);
  std::vector<std::byte> got(outE * E);
  if (outE) CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
  std::byte expect[4];
  for (std::size_t i = 0; i < outE; ++i) {
    const bool data = want(i, expect);
    if (std::memcmp(expect, got.data() + i * E, E) != 0)
      return data ? "element " + std::to_string(i) + " = " + std::to_string(toFloat(t, got.data() + i * E)) +
                        ", reference " + std::to_string(toFloat(t, expect))
                  : "element " + std::to_string(i) + " outside the written blocks was written";
  }
  return "";
}

/// The start of one rank of a test of ranks sharing GPUs: device `dev`
/// current, the throughput transfer selected (setTransfer), and a
/// non-blocking stream for its calls (the caller destroys it).
inline cudaStream_t beginRank(int dev, bool push = false) {
  cudaStream_t s = nullptr;
  CT_CUDA(cudaSetDevice(dev));
  CT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  setTransfer(push);
  return s;
}

/// The communicator options of those tests: `stagingHalfBytes`, 8 MiB
/// packet halves, and (checked) every wait bounded by 20 s (ranks share a
/// GPU: a legitimate wait can be long).
inline CommOptions sharedGpuOptions(std::size_t stagingHalfBytes, bool checked = true) {
  CommOptions o;
  o.stagingHalfBytes = stagingHalfBytes;
  o.packetHalfBytes = 8u << 20;
  o.checked = checked;
  o.waitTimeoutUs = 20'000'000;
  return o;
}

/// The command line of the tests of ranks sharing GPUs: `--ranks N`
/// (2..8) sets `worlds` to {N} (else the default stays), and, where `nccl`
/// is given, `--nccl` sets *nccl; false (after saying why) on anything
/// else, for an exit status of 2.
inline bool worldsFromArgs(int argc, char** argv, const char* program, std::vector<int>& worlds,
                           bool* nccl = nullptr) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (nccl && a == "--nccl") {
      *nccl = true;
    } else if (a == "--ranks" && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      if (v < 2 || v > kMaxRanks) {
        std::printf("%s: --ranks takes 2..%d, not '%s'\n", program, kMaxRanks, argv[i]);
        return false;
      }
      worlds = {v};
    } else {
      std::printf("usage: %s [--ranks N]%s\n", program, nccl ? " [--nccl]" : "");
      return false;
    }
  }
  return true;
}

/// The main of the tests of ranks sharing GPUs against host references
/// (rooted_test, vform_test): `--ranks N` (2..8) or the default `worlds`,
/// each run by runOversubscribed(rankMain); `--nccl`, and every run under
/// purlin-launch, the comparison with NCCL (runRanks(ncclBody)).
inline int sharedGpuMain(int argc, char** argv, const char* program, std::vector<int> worlds,
                         const std::function<int(Bootstrap&, int)>& rankMain,
                         const std::function<void(Rank&)>& ncclBody) {
  bool nccl = false;
  if (!worldsFromArgs(argc, argv, program, worlds, &nccl)) return 2;
  if (nccl || std::getenv("PURLIN_RANK")) return runRanks((std::string(program) + " --nccl").c_str(), ncclBody);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("%s: no GPU\n", program);
    return 2;
  }
  int total = 0;
  for (int n : worlds) {
    const auto t0 = std::chrono::steady_clock::now();
    const int failures = runOversubscribed(n, gpus, rankMain);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %d ranks on %d GPU(s): %d failure(s), %.1f s\n", program, n, gpus, failures, sec);
    total += failures;
  }
  std::printf("%s: %s\n", program, total ? "FAIL" : "PASS");
  return total ? 1 : 0;
}

} // namespace colltest
