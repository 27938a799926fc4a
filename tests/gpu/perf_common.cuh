/// @file perf_common.cuh
/// @brief Shared by the GPU timing programs (coll_perf_test, lat_perf_test):
/// bf16 buffers sized by message bytes per collective, the same call through
/// NCCL (AllToAll as grouped send/recv), and a device-side word comparison.
#pragma once

#include "coll_test_common.cuh"

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

} // namespace colltest
