/// @file demo_rooted_test.cu
/// @brief The demo of the rooted collectives purlinc generated from
/// dsl_examples/{broadcast,reduce,scatter,gather}.pl (generated/, library
/// purlin_generated), called through their host API (C++ and, for bad
/// arguments, the C ABI) on the GPUs it finds, each for every root and
/// sizes from one element to several MiB, checked against a host
/// reference. One thread per GPU in one process (with one GPU: two ranks
/// sharing it), or one process per GPU under purlin-launch (PURLIN_RANK).
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

/// Element i of rank r's input: an integer in [-8, 8] (fp32: sums exact).
float inputValue(int r, std::size_t i) { return float(int((i * 7 + std::size_t(r) * 13) % 17) - 8); }

enum class Kind { Broadcast, Reduce, Scatter, Gather };
const char *name(Kind k) { return k == Kind::Broadcast ? "Broadcast" : k == Kind::Reduce ? "Reduce" : k == Kind::Scatter ? "Scatter" : "Gather"; }

/// Rank r's expected element i of a call of `count` (host reference).
float expected(Kind k, int n, int r, int root, std::size_t count, std::size_t i) {
  switch (k) {
    case Kind::Broadcast: return inputValue(root, i);
    case Kind::Scatter: return inputValue(root, std::size_t(r) * count + i);
    case Kind::Gather: return inputValue(int(i / count), i % count);
    case Kind::Reduce: {
      float acc = 0;
      for (int p = 0; p < n; ++p) acc += inputValue(p, i);
      return acc;
    }
  }
  return 0;
}

void runRank(Bootstrap &bootstrap, int device) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  cudaSetDevice(device);
  Communicator comm(bootstrap, device, CommOptions{});
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int local = 0;
  for (Kind k : {Kind::Broadcast, Kind::Reduce, Kind::Scatter, Kind::Gather})
    for (int root = 0; root < n; ++root)
      for (std::size_t count : {std::size_t(1), std::size_t(4099), (std::size_t(1) << 18) + 3, (std::size_t(1) << 20) + 1}) {
        const bool isRoot = rank == root;
        const std::size_t inE = k == Kind::Scatter ? (isRoot ? n * count : 0) : k == Kind::Broadcast ? (isRoot ? count : 0) : count;
        const std::size_t outE = k == Kind::Gather ? (isRoot ? n * count : 0) : k == Kind::Reduce ? (isRoot ? count : 0) : count;
        std::vector<float> host(inE), back(outE);
        for (std::size_t i = 0; i < inE; ++i) host[i] = inputValue(rank, i);
        float *in = nullptr, *out = nullptr;  // a non-root's unused buffer stays null
        if (inE) cudaMalloc(&in, inE * 4);
        if (outE) cudaMalloc(&out, outE * 4);
        if (inE) cudaMemcpy(in, host.data(), inE * 4, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();
        bootstrap.barrier();  // ranks sharing a GPU: device-wide calls before any launch
        Status st = Status::Internal;
        switch (k) {
          case Kind::Broadcast: st = gen::broadcast(comm, in, out, count, DType::F32, root, stream); break;
          case Kind::Reduce: st = gen::reduce(comm, in, out, count, DType::F32, RedOp::Sum, root, stream); break;
          case Kind::Scatter: st = gen::scatter(comm, in, out, count, DType::F32, root, stream); break;
          case Kind::Gather: st = gen::gather(comm, in, out, count, DType::F32, root, stream); break;
        }
        cudaError_t ce = cudaStreamSynchronize(stream);
        bootstrap.barrier();
        std::string failure;
        if (st != Status::Ok) failure = std::string("status ") + toString(st) + ": " + purlin::lastError();
        else if (ce != cudaSuccess) failure = cudaGetErrorString(ce);
        if (failure.empty() && outE) {
          cudaMemcpy(back.data(), out, outE * 4, cudaMemcpyDeviceToHost);
          for (std::size_t i = 0; i < outE && failure.empty(); ++i)
            if (back[i] != expected(k, n, rank, root, count, i))
              failure = "out[" + std::to_string(i) + "] = " + std::to_string(back[i]) + ", expected " +
                        std::to_string(expected(k, n, rank, root, count, i));
        }
        cudaFree(in);
        cudaFree(out);
        if (!failure.empty()) {
          std::printf("FAIL rank %d: %s root=%d count=%zu: %s\n", rank, name(k), root, count, failure.c_str());
          ++local;
        } else if (rank == 0) {
          std::printf("ok   %-9s root=%d count=%-8zu f32, %d ranks, equal to the host reference\n", name(k), root, count, n);
        }
        std::fflush(stdout);
      }
  // A root that is no rank: the same error on every rank, nothing launched.
  const Status bad = gen::broadcast(comm, nullptr, nullptr, 16, DType::F32, n, stream);
  if (bad != Status::InvalidArgument || std::strstr(purlin::lastError(), "out of range") == nullptr) {
    std::printf("FAIL rank %d: broadcast(root = n) returned %s: %s\n", rank, toString(bad), purlin::lastError());
    ++local;
  } else if (rank == 0) {
    std::printf("ok   broadcast(root = %d) -> InvalidArgument: %s\n", n, purlin::lastError());
  }
  bootstrap.barrier();
  cudaStreamDestroy(stream);
  gFailures += local;
}

} // namespace

int main() {
  if (purlin_gather(nullptr, nullptr, nullptr, 1, PURLIN_FLOAT32, 0, nullptr) != PURLIN_INVALID_ARGUMENT) {
    std::printf("FAIL: purlin_gather(NULL comm) did not return PURLIN_INVALID_ARGUMENT\n");
    return 1;
  }
  std::printf("ok   purlin_gather(NULL comm) -> PURLIN_INVALID_ARGUMENT: %s\n", purlin_last_error());
  if (!demo::runDemoRanks("broadcast, reduce, scatter, gather", 2, runRank, gFailures)) return 0;
  std::printf("%s: demo rooted collectives, %d failure(s)\n", gFailures ? "FAIL" : "PASS", gFailures.load());
  return gFailures ? 1 : 0;
}
