/// @file main.cu
/// @brief The consumer's program: the AllReduce purlinc generated from
/// allreduce.pl, run in-process on every visible GPU (one thread and one
/// communicator per GPU), checked against a host reference. Prints SKIP
/// and exits 0 with fewer than two GPUs.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "allreduce.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"

namespace {

/// Input element i of rank r: small integers, so fp32 sums are exact.
float inputValue(int r, std::size_t i) { return float((r + 1) * int(i % 13) - 6); }

/// Runs one rank: returns "" on success, else what went wrong.
std::string runRank(purlin::InProcessGroup &group, int rank, int n,
                    const std::vector<std::size_t> &counts) {
  try {
    auto bootstrap = group.bootstrap(rank);
    if (cudaSetDevice(rank) != cudaSuccess) return "cudaSetDevice failed";
    purlin::Communicator comm(*bootstrap, rank);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    std::string failure;
    for (std::size_t count : counts) {
      std::vector<float> host(count), got(count);
      for (std::size_t i = 0; i < count; ++i) host[i] = inputValue(rank, i);
      float *in = nullptr, *out = nullptr;
      cudaMalloc(&in, count * sizeof(float) + 16);
      cudaMalloc(&out, count * sizeof(float) + 16);
      cudaMemcpy(in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
      purlin::Status st = purlin::gen::allReduce(comm, in, out, count, purlin::DType::F32,
                                                 purlin::RedOp::Sum, stream);
      if (st != purlin::Status::Ok && failure.empty())
        failure = "allReduce(count=" + std::to_string(count) + ") failed: " + purlin::toString(st);
      cudaStreamSynchronize(stream);
      cudaMemcpy(got.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost);
      for (std::size_t i = 0; i < count && failure.empty(); ++i) {
        float want = 0;
        for (int p = 0; p < n; ++p) want += inputValue(p, i);
        if (got[i] != want)
          failure = "count " + std::to_string(count) + ": out[" + std::to_string(i) + "] = " +
                    std::to_string(got[i]) + ", expected " + std::to_string(want);
      }
      cudaFree(in);
      cudaFree(out);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess && failure.empty()) failure = cudaGetErrorString(err);
    bootstrap->barrier(); // nobody frees its workspace while peers may read it
    cudaStreamDestroy(stream);
    return failure;
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace

int main() {
  // The C ABI rejects a NULL communicator with a status and a message.
  if (purlin_allReduce(nullptr, nullptr, nullptr, 1, PURLIN_FLOAT32, PURLIN_SUM, nullptr) !=
          PURLIN_INVALID_ARGUMENT ||
      std::strlen(purlin_last_error()) == 0) {
    std::printf("FAIL: purlin_allReduce(NULL comm) did not return PURLIN_INVALID_ARGUMENT\n");
    return 1;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  if (gpus < 2) {
    std::printf("SKIP: consumer AllReduce needs 2 GPUs, found %d (build and C ABI check passed)\n", gpus);
    return 0;
  }
  const int n = gpus > 8 ? 8 : gpus;
  const std::vector<std::size_t> counts = {1, 7, 1023, 4096, (1u << 20) + 3, 48u << 20};
  purlin::InProcessGroup group(n);
  std::vector<std::string> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { results[r] = runRank(group, r, n, counts); });
  for (auto &t : threads) t.join();
  int failed = 0;
  for (int r = 0; r < n; ++r) {
    if (!results[r].empty()) {
      std::printf("FAIL: rank %d: %s\n", r, results[r].c_str());
      ++failed;
    }
  }
  if (failed) return 1;
  std::printf("PASS: AllReduce fp32 sum on %d GPUs, %zu sizes (1 .. %zu elements), equal to the host reference\n",
              n, counts.size(), counts.back());
  return 0;
}
