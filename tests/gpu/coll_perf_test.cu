/// @file coll_perf_test.cu
/// @brief Quick timing of AllGather, ReduceScatter, AllReduce and AllToAll
/// (snac::launch) beside NCCL on the same buffers, with the paper's method:
/// calls captured in a CUDA graph, one warm-up replay, 8 timed replays, time
/// per call, maximum over ranks. bf16 for reductions; message size = gathered
/// output for AllGather, input per rank for the others; ordinary cudaMalloc
/// buffers. Each result is checked bitwise against NCCL before it is timed
/// (inputs are multiples of 1/8, so 2-rank bf16 sums are exact).
///
/// 128 calls per graph below 64 MiB, 16 calls from 64 MiB on (pass --full
/// for 128 everywhere). Usage: coll_perf_test [--full] [--sizes a,b,...]
/// (in-process), or under purlin-launch -n 2.
#include "coll_test_common.cuh"

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

__global__ void countDiff(const uint32_t* a, const uint32_t* b, std::size_t words, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += std::size_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}

struct Bufs {
  std::byte *in = nullptr, *out = nullptr, *ref = nullptr;
  std::size_t inBytes = 0, outBytes = 0, count = 0;
};

Bufs makeBufs(Rank& R, Coll c, std::size_t msg) {
  Bufs b;
  const int n = R.n;
  const std::size_t E = 2;
  b.count = c == Coll::AllReduce ? msg / E : msg / E / n;
  const std::size_t inE = c == Coll::AllGather || c == Coll::AllReduce ? b.count : n * b.count;
  const std::size_t outE = c == Coll::ReduceScatter || c == Coll::AllReduce ? b.count : n * b.count;
  b.inBytes = inE * E;
  b.outBytes = outE * E;
  CT_CUDA(cudaMalloc(&b.in, b.inBytes));
  CT_CUDA(cudaMalloc(&b.out, b.outBytes));
  CT_CUDA(cudaMalloc(&b.ref, b.outBytes));
  fill(b.in, inE, DType::BF16, 7, R.rank, 0, R.stream);
  return b;
}
void freeBufs(Bufs& b) { cudaFree(b.in); cudaFree(b.out); cudaFree(b.ref); }

void ncclCall(Rank& R, Coll c, const Bufs& b, std::byte* out) {
  const std::size_t E = 2;
  switch (c) {
    case Coll::AllGather: ncclAllGather(b.in, out, b.count, ncclBfloat16, R.nccl, R.stream); break;
    case Coll::ReduceScatter: ncclReduceScatter(b.in, out, b.count, ncclBfloat16, ncclSum, R.nccl, R.stream); break;
    case Coll::AllReduce: ncclAllReduce(b.in, out, b.count, ncclBfloat16, ncclSum, R.nccl, R.stream); break;
    case Coll::AllToAll:
      ncclGroupStart();
      for (int p = 0; p < R.n; ++p) {
        ncclSend(b.in + p * b.count * E, b.count, ncclBfloat16, p, R.nccl, R.stream);
        ncclRecv(out + p * b.count * E, b.count, ncclBfloat16, p, R.nccl, R.stream);
      }
      ncclGroupEnd();
      break;
  }
}

/// Per-call microseconds of `calls` captured invocations of f (max over ranks).
template <class F> double timeGraph(Rank& R, int calls, F&& f) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CT_CUDA(cudaStreamBeginCapture(R.stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) f();
  CT_CUDA(cudaStreamEndCapture(R.stream, &g));
  CT_CUDA(cudaGraphInstantiate(&ge, g, 0));
  CT_CUDA(cudaGraphLaunch(ge, R.stream));  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  R.boot->barrier();
  CT_CUDA(cudaStreamSynchronize(R.stream));
  cudaEventRecord(e0, R.stream);
  for (int i = 0; i < 8; ++i) CT_CUDA(cudaGraphLaunch(ge, R.stream));
  cudaEventRecord(e1, R.stream);
  CT_CUDA(cudaStreamSynchronize(R.stream));
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  double us = double(ms) * 1000.0 / (8.0 * calls), all[kMaxRanks];
  R.boot->allGather(&us, all, sizeof us);
  return *std::max_element(all, all + R.n);
}

/// Checks Purlin's output against NCCL's bitwise (on the device).
bool sameAsNccl(Rank& R, const Bufs& b) {
  unsigned long long* bad;
  CT_CUDA(cudaMalloc(&bad, sizeof *bad));
  CT_CUDA(cudaMemsetAsync(bad, 0, sizeof *bad, R.stream));
  countDiff<<<264, 512, 0, R.stream>>>(reinterpret_cast<const uint32_t*>(b.out), reinterpret_cast<const uint32_t*>(b.ref),
                                       b.outBytes / 4, bad);
  unsigned long long h = 0;
  CT_CUDA(cudaMemcpyAsync(&h, bad, sizeof h, cudaMemcpyDeviceToHost, R.stream));
  CT_CUDA(cudaStreamSynchronize(R.stream));
  cudaFree(bad);
  return h == 0;
}

template <class P>
void runPolicy(Rank& R, Communicator& comm, Coll c, std::size_t msg, bool full, double ncclUs) {
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.ref);
  sn::CallArgs a;
  a.in = b.in;
  a.out = b.out;
  a.count = b.count;
  a.dtype = DType::BF16;
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
  const int calls = full || msg < (std::size_t(64) << 20) ? 128 : 16;
  const double us = timeGraph(R, calls, [&] { launchColl<P>(c, comm, a, R.stream); });
  sn::Plan pl;
  std::string err;
  sn::makePlan(sn::CollKind(int(c)), R.n, R.rank, a, P::world[R.n], P::stagingBytes, comm.deviceComm().packetHalfBytes, pl, err);
  if (R.rank == 0)
    std::printf("purlin %-10s %-14s %11zu B %10.2f us %8.1f GB/s  %s %2d CTAs  x%.2f vs NCCL\n", P::label, name(c), msg,
                us, double(msg) / us / 1e3, pl.latency ? "latency   " : "throughput", pl.ctas(), ncclUs / us);
  freeBufs(b);
}

double runNccl(Rank& R, Coll c, std::size_t msg, bool full) {
  Bufs b = makeBufs(R, c, msg);
  ncclCall(R, c, b, b.out);  // eager first: NCCL allocates lazily, which a capture forbids
  CT_CUDA(cudaStreamSynchronize(R.stream));
  const int calls = full || msg < (std::size_t(64) << 20) ? 128 : 16;
  const double us = timeGraph(R, calls, [&] { ncclCall(R, c, b, b.out); });
  if (R.rank == 0)
    std::printf("nccl                      %-14s %11zu B %10.2f us %8.1f GB/s\n", name(c), msg, us, double(msg) / us / 1e3);
  freeBufs(b);
  return us;
}

} // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::vector<std::size_t> sizes = {4u << 10, 64u << 10, 256u << 10, 1u << 20, 16u << 20, 64u << 20, std::size_t(1) << 30};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--full") full = true;
    else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      std::string tok;
      while (std::getline(ss, tok, ',')) sizes.push_back(std::stoull(tok));
    }
  }
  return runRanks("coll_perf_test", [&](Rank& R) {
    Communicator comm(*R.boot, R.dev, CommOptions{});
    for (Coll c : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::AllToAll}) {
      for (std::size_t msg : sizes) {
        const double nc = runNccl(R, c, msg, full);
        runPolicy<P_8_16_8>(R, comm, c, msg, full, nc);
        if (msg >= (1u << 20)) {
          runPolicy<P_11_21_c8M>(R, comm, c, msg, full, nc);
          runPolicy<P_11_21_c16M>(R, comm, c, msg, full, nc);
          runPolicy<P_13_19_c32M>(R, comm, c, msg, full, nc);
          runPolicy<P_7_11_14_c16M>(R, comm, c, msg, full, nc);
        }
      }
    }
    R.boot->barrier();
  });
}
