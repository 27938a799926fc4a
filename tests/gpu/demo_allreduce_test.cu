/// @file demo_allreduce_test.cu
/// @brief The demo of the fixed-size collectives: the AllReduce purlinc
/// generated from dsl_examples/allreduce.pl (generated/allreduce.cu,
/// library purlin_generated) on the GPUs it finds, checked against a host
/// reference for fp32/fp16/bf16, sum/max/min, sizes from 0 to beyond the
/// staging capacity, in place and out of place; then AllGather,
/// ReduceScatter and AllToAll (dsl_examples/{allgather,reducescatter,
/// alltoall}.pl) through their host API. One thread per GPU in one process
/// (with one GPU: two ranks sharing it, as oversub_test), or one process
/// per GPU under purlin-launch (PURLIN_RANK set).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"

#include "demo_ranks.h"

namespace {

using namespace purlin;

std::atomic<int> gFailures{0};

/// Input element i of rank r: integers in [-8, 8], exact in every dtype, so
/// sums over <= 8 ranks (|s| <= 64) are exact in fp16/bf16 too.
float inputValue(int r, std::size_t i) { return float(int((i * 7 + std::size_t(r) * 13) % 17) - 8); }

float reference(RedOp op, int n, std::size_t i) {
  float acc = inputValue(0, i);
  for (int p = 1; p < n; ++p) {
    float v = inputValue(p, i);
    acc = op == RedOp::Sum ? acc + v : op == RedOp::Max ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

/// Host <-> device element conversions.
void toDevice(DType t, const std::vector<float> &src, std::vector<unsigned char> &dst) {
  const std::size_t e = dtypeSize(t);
  dst.resize(src.size() * e);
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (t == DType::F32) std::memcpy(&dst[i * e], &src[i], 4);
    else if (t == DType::F16) { __half h = __float2half(src[i]); std::memcpy(&dst[i * e], &h, 2); }
    else { __nv_bfloat16 b = __float2bfloat16(src[i]); std::memcpy(&dst[i * e], &b, 2); }
  }
}
float fromDevice(DType t, const unsigned char *p) {
  if (t == DType::F32) { float f; std::memcpy(&f, p, 4); return f; }
  if (t == DType::F16) { __half h; std::memcpy(&h, p, 2); return __half2float(h); }
  __nv_bfloat16 b; std::memcpy(&b, p, 2); return __bfloat162float(b);
}

struct Case {
  DType dtype;
  RedOp op;
  std::size_t count;
  bool inPlace;
};

/// Every case one rank runs; identical on every rank.
std::vector<Case> cases() {
  std::vector<Case> cs;
  const std::size_t counts[] = {0, 1, 7, 1023, 4099, (1u << 18) + 3, (1u << 20) + 1};
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (RedOp op : {RedOp::Sum, RedOp::Max, RedOp::Min})
      for (std::size_t c : counts) cs.push_back({t, op, c, false});
  cs.push_back({DType::BF16, RedOp::Sum, (1u << 20) + 5, true});
  cs.push_back({DType::F32, RedOp::Sum, 1023, true});
  // Beyond a 256 MiB staging half: 96 Mi fp32 elements = 384 MiB per rank.
  cs.push_back({DType::F32, RedOp::Sum, std::size_t(96) << 20, false});
  return cs;
}

/// AllGather, ReduceScatter, AllToAll (fp32) on one rank, a few sizes each,
/// against the host reference; returns the failures. Collective.
int runOthers(Bootstrap &bootstrap, Communicator &comm, cudaStream_t stream) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  int local = 0;
  for (int kind = 0; kind < 3; ++kind)
    for (std::size_t count : {std::size_t(1), std::size_t(4099), (std::size_t(1) << 18) + 3}) {
      const char *name = kind == 0 ? "allGather" : kind == 1 ? "reduceScatter" : "allToAll";
      const std::size_t inE = kind == 0 ? count : n * count, outE = kind == 1 ? count : n * count;
      std::vector<float> host(inE), back(outE);
      for (std::size_t i = 0; i < inE; ++i) host[i] = inputValue(rank, i);
      float *in = nullptr, *out = nullptr;
      cudaMalloc(&in, inE * 4);
      cudaMalloc(&out, outE * 4);
      cudaMemcpy(in, host.data(), inE * 4, cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      bootstrap.barrier();
      const Status st = kind == 0 ? gen::allGather(comm, in, out, count, DType::F32, stream)
                        : kind == 1 ? gen::reduceScatter(comm, in, out, count, DType::F32, RedOp::Sum, stream)
                                    : gen::allToAll(comm, in, out, count, DType::F32, stream);
      const cudaError_t ce = cudaStreamSynchronize(stream);
      bootstrap.barrier();
      std::string failure;
      if (st != Status::Ok) failure = std::string("status ") + toString(st) + ": " + purlin::lastError();
      else if (ce != cudaSuccess) failure = cudaGetErrorString(ce);
      if (failure.empty()) {
        cudaMemcpy(back.data(), out, outE * 4, cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < outE && failure.empty(); ++i) {
          const std::size_t p = i / count, j = i % count;  // block p, element j
          float want = 0;
          if (kind == 0) want = inputValue(int(p), j);                       // rank p's input
          if (kind == 2) want = inputValue(int(p), std::size_t(rank) * count + j);  // p's block for this rank
          if (kind == 1)
            for (int q = 0; q < n; ++q) want += inputValue(q, std::size_t(rank) * count + i);
          if (back[i] != want)
            failure = "out[" + std::to_string(i) + "] = " + std::to_string(back[i]) + ", expected " + std::to_string(want);
        }
      }
      cudaFree(in);
      cudaFree(out);
      if (!failure.empty()) {
        std::printf("FAIL rank %d: %s count=%zu: %s\n", rank, name, count, failure.c_str());
        ++local;
      } else if (rank == 0) {
        std::printf("ok   %-13s f32 count=%-8zu %d ranks, equal to the host reference\n", name, count, n);
      }
      std::fflush(stdout);
    }
  return local;
}

/// Runs every case on one rank; prints one line per case on rank 0.
void runRank(Bootstrap &bootstrap, int device) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  cudaSetDevice(device);
  // PURLIN_DEMO_CHECKED=1: bounded waits, so a wait that never completes is
  // reported (with what it waited on) instead of hanging.
  CommOptions options;
  if (const char *c = std::getenv("PURLIN_DEMO_CHECKED")) options.checked = std::atoi(c) != 0, options.waitTimeoutUs = 5'000'000;
  Communicator comm(bootstrap, device, options);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int local = 0;
  for (const Case &c : cases()) {
    const std::size_t e = dtypeSize(c.dtype), bytes = c.count * e;
    std::vector<float> host(c.count);
    for (std::size_t i = 0; i < c.count; ++i) host[i] = inputValue(rank, i);
    std::vector<unsigned char> dev, back(bytes);
    toDevice(c.dtype, host, dev);
    // Element-aligned but not 16-byte-aligned buffers: offset by one element.
    unsigned char *inBase = nullptr, *outBase = nullptr;
    cudaMalloc(&inBase, bytes + 16);
    cudaMalloc(&outBase, bytes + 16);
    unsigned char *in = inBase + e, *out = c.inPlace ? in : outBase + e;
    cudaMemcpy(in, dev.data(), bytes, cudaMemcpyHostToDevice);
    // A pageable-memory cudaMemcpy may return before its DMA lands, and
    // `stream` does not wait for the legacy stream (non-blocking): finish it.
    cudaDeviceSynchronize();
    // Ranks sharing a GPU: cudaMalloc, cudaFree and cudaDeviceSynchronize wait
    // for the whole device, so no rank may run them while another rank's
    // collective spins on this rank's next launch. Every rank finishes its
    // set-up before any launches, and its call before any frees.
    bootstrap.barrier();
    Status st = gen::allReduce(comm, in, out, c.count, c.dtype, c.op, stream);
    cudaError_t ce = cudaStreamSynchronize(stream);
    bootstrap.barrier();
    std::string what = std::string(toString(c.dtype)) + " " + toString(c.op) + " count=" +
                       std::to_string(c.count) + (c.inPlace ? " in-place" : "");
    std::string failure;
    if (st != Status::Ok) failure = std::string("status ") + toString(st) + ": " + purlin::lastError();
    else if (ce != cudaSuccess) failure = cudaGetErrorString(ce);
    if (failure.empty() && bytes) {
      cudaMemcpy(back.data(), out, bytes, cudaMemcpyDeviceToHost);
      for (std::size_t i = 0; i < c.count; ++i) {
        float got = fromDevice(c.dtype, &back[i * e]), want = reference(c.op, n, i);
        if (got != want) {
          failure = "out[" + std::to_string(i) + "] = " + std::to_string(got) + ", expected " + std::to_string(want);
          break;
        }
      }
    }
    cudaFree(inBase);
    cudaFree(outBase);
    if (!failure.empty()) {
      std::printf("FAIL rank %d: AllReduce %s: %s\n", rank, what.c_str(), failure.c_str());
      ++local;
    } else if (rank == 0) {
      std::printf("ok   AllReduce %-28s %12zu bytes, %d ranks, equal to the host reference\n", what.c_str(), bytes, n);
    }
    std::fflush(stdout);
  }
  local += runOthers(bootstrap, comm, stream);
  // Bad arguments are returned, not crashed on.
  Status bad = gen::allReduce(comm, nullptr, nullptr, 16, DType::F32, RedOp::Sum, stream);
  if (bad != Status::InvalidArgument) {
    std::printf("FAIL rank %d: allReduce(null buffers) returned %s\n", rank, toString(bad));
    ++local;
  } else if (std::strlen(purlin::lastError()) == 0 || std::strcmp(purlin::lastError(), purlin_last_error()) != 0) {
    // The message, from the host header; the C ABI reads the same one.
    std::printf("FAIL rank %d: allReduce(null buffers): purlin::lastError() '%s', purlin_last_error() '%s'\n", rank,
                purlin::lastError(), purlin_last_error());
    ++local;
  } else if (rank == 0) {
    std::printf("ok   allReduce(null buffers) -> InvalidArgument: %s\n", purlin::lastError());
  }
  bootstrap.barrier(); // peers finish reading this rank's workspace before it goes
  cudaStreamDestroy(stream);
  gFailures += local;
}

} // namespace

int main() {
  if (purlin_allReduce(nullptr, nullptr, nullptr, 1, PURLIN_FLOAT32, PURLIN_SUM, nullptr) != PURLIN_INVALID_ARGUMENT) {
    std::printf("FAIL: purlin_allReduce(NULL comm) did not return PURLIN_INVALID_ARGUMENT\n");
    return 1;
  }
  std::printf("ok   purlin_allReduce(NULL comm) -> PURLIN_INVALID_ARGUMENT: %s\n", purlin_last_error());
  if (!demo::runDemoRanks("allReduce, allGather, reduceScatter, allToAll", 2, runRank, gFailures)) return 0;
  std::printf("%s: demo AllReduce (and AllGather, ReduceScatter, AllToAll), %d failure(s)\n", gFailures ? "FAIL" : "PASS", gFailures.load());
  return gFailures ? 1 : 0;
}
