/// @file perf_common.cuh
/// @brief Shared by the GPU timing programs (coll_perf_test, lat_perf_test):
/// bf16 buffers sized by message bytes per collective, the same call through
/// NCCL (AllToAll as grouped send/recv), a device-side word comparison, and
/// the paper's timing method (captured calls, 1 warm-up + 8 timed replays,
/// max over ranks).
#pragma once

#include "coll_test_common.cuh"

#include <algorithm>

namespace colltest {

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

/// Checks this rank's Purlin output against NCCL's bitwise (on the device).
bool sameAsNcclLocal(Rank& R, const Bufs& b) {
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

} // namespace colltest
