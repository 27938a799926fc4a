/// @file graph_timer.cpp
/// @brief Implementation of the graph-replay timing method (graph_timer.h).
#include "graph_timer.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"
#include "purlin/host/error.h"
#include "stats.h"

namespace purlin::bench {

void syncWithTimeout(cudaStream_t stream, double timeoutS, const std::string &what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) PURLIN_CUDA_CHECK(e);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeoutS)
      PURLIN_THROW(Status::Timeout, what + ": GPU work did not finish within " +
                                        std::to_string(timeoutS) + " s (hung kernel?)");
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 20 : 1000));
  }
}

double maxOverRanks(Bootstrap &boot, double v) {
  std::vector<double> all(boot.size());
  boot.allGather(&v, all.data(), sizeof(double));
  return *std::max_element(all.begin(), all.end());
}

long long sumOverRanks(Bootstrap &boot, long long v) {
  std::vector<long long> all(boot.size());
  boot.allGather(&v, all.data(), sizeof(long long));
  long long s = 0;
  for (long long x : all) s += x;
  return s;
}

/// Largest grid of any kernel node of `graph` (0 if it has none).
static int maxGridOf(cudaGraph_t graph) {
  size_t num = 0;
  PURLIN_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &num));
  std::vector<cudaGraphNode_t> nodes(num);
  if (num) PURLIN_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &num));
  int best = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
      // A node type the runtime API does not name (the driver's batch
      // memory-operation nodes of the copy-engine reductions): not a kernel.
      (void)cudaGetLastError();
      continue;
    }
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p{};
    if (cudaGraphKernelNodeGetParams(node, &p) != cudaSuccess) {
      (void)cudaGetLastError(); // e.g. a node created by the driver API: skip
      continue;
    }
    best = std::max(best, static_cast<int>(p.gridDim.x * p.gridDim.y * p.gridDim.z));
  }
  return best;
}

namespace {

/// The samples of both timers: each after a barrier, `issue()` enqueues
/// `perSample` calls between events a and b; microseconds per call, the
/// maximum over ranks; fills out's median, min, max and count.
template <class Issue>
void sample(GraphTiming &out, cudaEvent_t a, cudaEvent_t b, cudaStream_t stream, const TimingConfig &cfg,
            Bootstrap &boot, double perSample, const std::string &what, Issue &&issue) {
  std::vector<double> samples;
  for (int k = 0; k < std::max(1, cfg.samples); ++k) {
    boot.barrier();
    PURLIN_CUDA_CHECK(cudaEventRecord(a, stream));
    issue();
    PURLIN_CUDA_CHECK(cudaEventRecord(b, stream));
    syncWithTimeout(stream, cfg.timeoutS * cfg.reps, what);
    float ms = 0;
    PURLIN_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    samples.push_back(maxOverRanks(boot, static_cast<double>(ms) * 1e3 / perSample));
  }
  const SampleStats st = statsOf(samples);
  out.usPerCall = st.median;
  out.usMin = st.min;
  out.usMax = st.max;
  out.samples = st.count;
}

} // namespace

GraphTiming timeInGraph(const Enqueue &enqueue, cudaStream_t stream,
                        const TimingConfig &cfg, Bootstrap &boot,
                        const std::string &what) {
  // One eager call first (lazy initialization, e.g. NCCL's, outside capture).
  enqueue(stream);
  syncWithTimeout(stream, cfg.timeoutS, what + " (eager warm-up)");

  cudaGraph_t graph = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < cfg.calls; ++i) enqueue(stream);
  } catch (...) {
    cudaGraph_t broken = nullptr;
    (void)cudaStreamEndCapture(stream, &broken);
    if (broken) (void)cudaGraphDestroy(broken);
    (void)cudaGetLastError();
    throw;
  }
  PURLIN_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  GraphTiming out;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  try {
    out.maxCtas = maxGridOf(graph);
    PURLIN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    PURLIN_CUDA_CHECK(cudaEventCreate(&a));
    PURLIN_CUDA_CHECK(cudaEventCreate(&b));
    PURLIN_CUDA_CHECK(cudaGraphLaunch(exec, stream)); // warm-up replay
    syncWithTimeout(stream, cfg.timeoutS, what + " (warm-up replay)");
    sample(out, a, b, stream, cfg, boot, static_cast<double>(cfg.calls) * cfg.reps, what + " (timed replays)", [&] {
      for (int r = 0; r < cfg.reps; ++r) PURLIN_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    });
  } catch (...) {
    if (a) (void)cudaEventDestroy(a);
    if (b) (void)cudaEventDestroy(b);
    if (exec) (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
    throw;
  }
  (void)cudaEventDestroy(a);
  (void)cudaEventDestroy(b);
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  return out;
}

GraphTiming timeEager(const Enqueue &enqueue, cudaStream_t stream, const TimingConfig &cfg, Bootstrap &boot,
                      const std::string &what) {
  enqueue(stream);
  syncWithTimeout(stream, cfg.timeoutS, what + " (eager warm-up)");
  GraphTiming out;
  cudaEvent_t a = nullptr, b = nullptr;
  try {
    PURLIN_CUDA_CHECK(cudaEventCreate(&a));
    PURLIN_CUDA_CHECK(cudaEventCreate(&b));
    const int calls = std::max(1, cfg.calls) * std::max(1, cfg.reps);
    sample(out, a, b, stream, cfg, boot, calls, what + " (timed eager calls)", [&] {
      for (int i = 0; i < calls; ++i) enqueue(stream);
    });
  } catch (...) {
    if (a) (void)cudaEventDestroy(a);
    if (b) (void)cudaEventDestroy(b);
    throw;
  }
  (void)cudaEventDestroy(a);
  (void)cudaEventDestroy(b);
  return out;
}

} // namespace purlin::bench
