/// @file policy_classes_test.cu
/// @brief A reduction built for some (dtype, op) pairs only: allreduce.pl's
/// allReduce compiled by purlinc with its own policy file
/// (tests/gpu/policies/bf16_sum.json: reductions bf16 x sum, one class), in
/// its own library (purlin_add_collective, not the generated/ one). The
/// class it lists runs both of its pairs (bf16 sum and bf16 avg, equal to a
/// host reference); every other pair returns Unsupported on every rank,
/// before any data access (the output keeps its contents), and the
/// communicator stays usable. The policy also binds push lanes the
/// generated/ policy does not (world 2: two lanes per stage and per consume
/// CTA, and the latency program up to 256 KiB so that the second count
/// takes the throughput program; 3 and 4: one lane per stage CTA), so its
/// throughput kernel instantiates those push CTAs (purlinc compiles the
/// policy's shapes only) and the throughput case here (two ranks) runs the
/// two-lane consume role. Ranks as in the demos (demo_ranks.h).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce.h"  // this test's own purlinc output (policy_classes_programs)
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"

#include "demo_ranks.h"

namespace {

using namespace purlin;

std::atomic<int> gFailures{0};

/// Rank r's input element i: small integers, exact in bf16 sums of up to
/// 8 ranks; the reference rounds the avg once, as the kernels do.
float inputValue(int r, std::size_t i) { return float(int((i * 5 + std::size_t(r) * 3) % 11) - 5); }

void runRank(Bootstrap &bootstrap, int device) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  cudaSetDevice(device);
  Communicator comm(bootstrap, device);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int local = 0;
  // A latency-program size, and a throughput-program one (an odd count:
  // the element tails): the kernels of the policy's pair (bf16 sum,
  // specialized by default) and of every pair (bf16 avg).
  for (const std::size_t count : {std::size_t(3000), std::size_t(1572867)}) {
    std::vector<__nv_bfloat16> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = __float2bfloat16(inputValue(rank, i));
    __nv_bfloat16 *in = nullptr, *out = nullptr;
    cudaMalloc(&in, count * sizeof(__nv_bfloat16));
    cudaMalloc(&out, count * sizeof(__nv_bfloat16));
    cudaMemcpy(in, host.data(), count * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    struct Case {
      DType dtype;
      RedOp op;
      bool compiled;
    };
    const Case cases[] = {{DType::BF16, RedOp::Sum, true},     {DType::F32, RedOp::Sum, false},
                          {DType::BF16, RedOp::Avg, true},     {DType::BF16, RedOp::Max, false},
                          {DType::BF16, RedOp::Product, false}, {DType::I32, RedOp::Sum, false},
                          {DType::BF16, RedOp::Sum, true}};
    for (const Case &c : cases) {
      const std::string what = std::string(toString(c.dtype)) + " " + toString(c.op);
      // A refused call must not touch the output: fill it with a marker.
      cudaMemset(out, 0x7b, count * sizeof(__nv_bfloat16));
      cudaDeviceSynchronize();
      bootstrap.barrier();
      const std::size_t elems = c.dtype == DType::BF16 ? count : count / 2;  // the same bytes
      const Status st = gen::allReduce(comm, in, out, elems, c.dtype, c.op, stream);
      const cudaError_t ce = cudaStreamSynchronize(stream);
      bootstrap.barrier();
      std::string failure;
      std::vector<__nv_bfloat16> back(count);
      cudaMemcpy(back.data(), out, count * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost);
      if (ce != cudaSuccess) {
        failure = cudaGetErrorString(ce);
      } else if (!c.compiled) {
        if (st != Status::Unsupported) failure = std::string("returned ") + toString(st) + ", expected Unsupported";
        else if (std::strstr(lastError(), "no reduction class") == nullptr)
          failure = std::string("message without the reason: ") + lastError();
        for (std::size_t i = 0; failure.empty() && i < count; ++i) {
          uint16_t bits;
          std::memcpy(&bits, &back[i], 2);
          if (bits != 0x7b7b) failure = "the output was written at element " + std::to_string(i);
        }
      } else if (st != Status::Ok) {
        failure = std::string("status ") + toString(st) + ": " + lastError();
      } else {
        for (std::size_t i = 0; failure.empty() && i < count; ++i) {
          float want = 0;
          for (int p = 0; p < n; ++p) want += inputValue(p, i);
          if (c.op == RedOp::Avg) want = want / float(n);
          want = __bfloat162float(__float2bfloat16(want));
          const float got = __bfloat162float(back[i]);
          if (got != want)
            failure = "out[" + std::to_string(i) + "] = " + std::to_string(got) + ", expected " + std::to_string(want);
        }
      }
      if (!failure.empty()) {
        std::printf("FAIL rank %d: allReduce %s: %s\n", rank, what.c_str(), failure.c_str());
        ++local;
      } else if (rank == 0) {
        std::printf("ok   allReduce %-13s count=%-8zu %s\n", what.c_str(), count,
                    c.compiled ? "(its class is compiled): equal to the host reference"
                               : "(no class): Unsupported on every rank, output untouched");
      }
      std::fflush(stdout);
    }
    bootstrap.barrier();
    cudaFree(in);
    cudaFree(out);
  }
  cudaStreamDestroy(stream);
  gFailures += local;
}

} // namespace

int main() {
  if (!demo::runDemoRanks("allReduce with a bf16-sum-only policy", 2, runRank, gFailures)) return 0;
  std::printf("%s: policy_classes_test, %d failure(s)\n", gFailures ? "FAIL" : "PASS", gFailures.load());
  return gFailures ? 1 : 0;
}
