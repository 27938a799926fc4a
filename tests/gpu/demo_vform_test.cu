/// @file demo_vform_test.cu
/// @brief The demo of the V collectives purlinc generated from
/// dsl_examples/{allgatherv,reducescatterv,alltoallv}.pl (generated/, library
/// purlin_generated), called through their host API (C++ and, for bad
/// arguments, the C ABI) on the GPUs it finds: count arrays with zeros, one
/// large entry among small ones, sizes from one element to several MiB
/// (AllToAllV: rank p sends rank q the count of row (p + q) mod n, its
/// blocks at MPI displacements), checked against a host reference. One thread per GPU in one process
/// (with one GPU: three ranks sharing it), or one process per GPU under
/// purlin-launch (PURLIN_RANK).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <numeric>
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

/// The count arrays of the demo for n ranks (the same on every rank).
std::vector<std::vector<std::size_t>> countArrays(int n) {
  std::vector<std::vector<std::size_t>> all;
  auto make = [&](auto f) {
    std::vector<std::size_t> c(n);
    for (int p = 0; p < n; ++p) c[p] = f(p);
    all.push_back(c);
  };
  make([](int p) { return p == 0 ? std::size_t(1) : std::size_t(0); });                         // one element in all
  make([](int p) { return std::size_t(p % 2 ? 0 : 4099 + p); });                                 // zeros between
  make([](int p) { return p == 0 ? (std::size_t(1) << 18) + 3 : std::size_t(7 * p); });           // one large, small ones
  make([](int p) { return (std::size_t(1) << 20) + std::size_t(p) * 1001; });                     // MiBs each
  return all;
}

void runRank(Bootstrap &bootstrap, int device) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  cudaSetDevice(device);
  Communicator comm(bootstrap, device, CommOptions{});
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int local = 0;
  for (bool gather : {true, false})
    for (const std::vector<std::size_t> &counts : countArrays(n)) {
      std::vector<std::size_t> displ(n + 1, 0);
      for (int p = 0; p < n; ++p) displ[p + 1] = displ[p] + counts[p];
      const std::size_t total = displ[n];
      const std::size_t inE = gather ? counts[rank] : total, outE = gather ? total : counts[rank];
      std::vector<float> host(inE), back(outE);
      for (std::size_t i = 0; i < inE; ++i) host[i] = inputValue(rank, i);
      float *in = nullptr, *out = nullptr;  // nothing to send or receive: null
      if (inE) cudaMalloc(&in, inE * 4);
      if (outE) cudaMalloc(&out, outE * 4);
      if (inE) cudaMemcpy(in, host.data(), inE * 4, cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      bootstrap.barrier();  // ranks sharing a GPU: device-wide calls before any launch
      const Status st = gather ? gen::allGatherV(comm, in, out, counts.data(), DType::F32, stream)
                               : gen::reduceScatterV(comm, in, out, counts.data(), DType::F32, RedOp::Sum, stream);
      cudaError_t ce = cudaStreamSynchronize(stream);
      bootstrap.barrier();
      std::string failure;
      if (st != Status::Ok) failure = std::string("status ") + toString(st) + ": " + purlin::lastError();
      else if (ce != cudaSuccess) failure = cudaGetErrorString(ce);
      if (failure.empty() && outE) {
        cudaMemcpy(back.data(), out, outE * 4, cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < outE && failure.empty(); ++i) {
          float want = 0;
          if (gather) {
            const int p = int(std::upper_bound(displ.begin(), displ.end(), i) - displ.begin()) - 1;
            want = inputValue(p, i - displ[p]);
          } else {
            for (int p = 0; p < n; ++p) want += inputValue(p, displ[rank] + i);
          }
          if (back[i] != want)
            failure = "out[" + std::to_string(i) + "] = " + std::to_string(back[i]) + ", expected " + std::to_string(want);
        }
      }
      cudaFree(in);
      cudaFree(out);
      std::string shape;
      for (int p = 0; p < n; ++p) shape += (p ? "," : "") + std::to_string(counts[p]);
      if (!failure.empty()) {
        std::printf("FAIL rank %d: %s counts={%s}: %s\n", rank, gather ? "allGatherV" : "reduceScatterV", shape.c_str(),
                    failure.c_str());
        ++local;
      } else if (rank == 0) {
        std::printf("ok   %-14s counts={%s} f32, %d ranks, equal to the host reference\n",
                    gather ? "allGatherV" : "reduceScatterV", shape.c_str(), n);
      }
      std::fflush(stdout);
    }
  // AllToAllV (MoE-style dispatch): rank p sends q counts[(p + q) % n]
  // elements, blocks packed in rank order; the bound is the largest count.
  for (const std::vector<std::size_t> &counts : countArrays(n)) {
    const std::size_t maxCount = *std::max_element(counts.begin(), counts.end());
    std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
    for (int q = 0; q < n; ++q) {
      sc[q] = counts[(rank + q) % n];
      rc[q] = counts[(q + rank) % n];
      sd[q] = q ? sd[q - 1] + sc[q - 1] : 0;
      rd[q] = q ? rd[q - 1] + rc[q - 1] : 0;
    }
    const std::size_t inE = sd[n - 1] + sc[n - 1], outE = rd[n - 1] + rc[n - 1];
    std::vector<float> host(inE), back(outE);
    for (std::size_t i = 0; i < inE; ++i) host[i] = inputValue(rank, i);
    float *in = nullptr, *out = nullptr;
    if (inE) cudaMalloc(&in, inE * 4);
    if (outE) cudaMalloc(&out, outE * 4);
    if (inE) cudaMemcpy(in, host.data(), inE * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    bootstrap.barrier();
    const Status st = gen::allToAllV(comm, in, out, sc.data(), sd.data(), rc.data(), rd.data(), maxCount, DType::F32,
                                     stream);
    cudaError_t ce = cudaStreamSynchronize(stream);
    bootstrap.barrier();
    std::string failure;
    if (st != Status::Ok) failure = std::string("status ") + toString(st) + ": " + purlin::lastError();
    else if (ce != cudaSuccess) failure = cudaGetErrorString(ce);
    if (failure.empty() && outE) {
      cudaMemcpy(back.data(), out, outE * 4, cudaMemcpyDeviceToHost);
      for (int p = 0; p < n && failure.empty(); ++p) {
        std::size_t from = 0;  // where rank p's block to this rank starts in p's input
        for (int q = 0; q < rank; ++q) from += counts[(p + q) % n];
        for (std::size_t i = 0; i < rc[p] && failure.empty(); ++i)
          if (back[rd[p] + i] != inputValue(p, from + i))
            failure = "out[" + std::to_string(rd[p] + i) + "] = " + std::to_string(back[rd[p] + i]) + ", expected " +
                      std::to_string(inputValue(p, from + i));
      }
    }
    cudaFree(in);
    cudaFree(out);
    if (!failure.empty()) {
      std::printf("FAIL rank %d: allToAllV maxCount=%zu: %s\n", rank, maxCount, failure.c_str());
      ++local;
    } else if (rank == 0) {
      std::printf("ok   allToAllV      maxCount=%zu f32, %d ranks, equal to the host reference\n", maxCount, n);
    }
    std::fflush(stdout);
  }
  // No count array: the same error on every rank, nothing launched.
  const Status bad = gen::allGatherV(comm, nullptr, nullptr, nullptr, DType::F32, stream);
  if (bad != Status::InvalidArgument || std::strstr(purlin::lastError(), "counts is null") == nullptr) {
    std::printf("FAIL rank %d: allGatherV(counts = null) returned %s: %s\n", rank, toString(bad), purlin::lastError());
    ++local;
  } else if (rank == 0) {
    std::printf("ok   allGatherV(counts = null) -> InvalidArgument: %s\n", purlin::lastError());
  }
  bootstrap.barrier();
  cudaStreamDestroy(stream);
  gFailures += local;
}

} // namespace

int main() {
  const size_t counts[1] = {1};
  if (purlin_reduceScatterV(nullptr, nullptr, nullptr, counts, PURLIN_FLOAT32, PURLIN_SUM, nullptr) !=
      PURLIN_INVALID_ARGUMENT) {
    std::printf("FAIL: purlin_reduceScatterV(NULL comm) did not return PURLIN_INVALID_ARGUMENT\n");
    return 1;
  }
  std::printf("ok   purlin_reduceScatterV(NULL comm) -> PURLIN_INVALID_ARGUMENT: %s\n", purlin_last_error());
  if (!demo::runDemoRanks("allGatherV, reduceScatterV, allToAllV", 3, runRank, gFailures)) return 0;
  std::printf("%s: demo V collectives, %d failure(s)\n", gFailures ? "FAIL" : "PASS", gFailures.load());
  return gFailures ? 1 : 0;
}
