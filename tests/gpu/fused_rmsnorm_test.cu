/// @file fused_rmsnorm_test.cu
/// @brief The device API (docs/device-api.md) through its shipped example,
/// AllReduce + residual add + RMSNorm in one kernel
/// (examples/fused_rmsnorm): N ranks as threads of one process sharing the
/// visible GPU (--ranks N, default 2), or one process per GPU under
/// purlin-launch (--ranks 1: one rank, whose fused kernel copies x to itself
/// and runs the rows). For hidden 2048, 4096, 8192, tokens 1, 7, 64, 256 and a
/// bf16 and an fp8 (e4m3) output:
///  - the fused call (Fusion::Auto; it must run fused: the latency program
///    up to the policy's bound, the throughput program past it) against the
///    unfused path (the
///    AllReduce, then the add-and-norm kernel) on the same inputs: x (reduced
///    in place), residualOut and out bitwise equal;
///  - both against a host reference: the reduced x and residualOut exact
///    (the inputs are multiples of 1/16 whose sums bf16 holds), out within
///    bf16's (fp8's) rounding of the double-precision norm;
///  - Fusion::Fused on 512 tokens of 8192 (8 MiB: the throughput program at
///    every world size, checked by the plan log), bf16 and e4m3 out, against
///    the unfused path, then a latency call; the same shape captured and on
///    a checked communicator;
///  - the fused call captured in a CUDA graph and replayed with new inputs;
///  - bad arguments (hidden not a multiple of 8): InvalidArgument on every rank;
///  - in place (residualOut == residual), and a checked communicator.
/// --bench: per shape, the median of 20 timed calls of each path (ranks
/// sharing one GPU: not the two-GPU figure).
///
/// Run: gpu-bin/fused_rmsnorm_test [--ranks N] [--bench]
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce.programs.h"  // allReduce_Policy: the latency bound
#include "demo_ranks.h"
#include "fused_rmsnorm.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"

namespace {

using namespace purlin;
using Bf16 = __nv_bfloat16;

std::atomic<int> gFailures{0};
bool gBench = false;
int gRanks = 2;

constexpr std::size_t kMaxTokens = 512, kMaxHidden = 8192, kMaxElems = kMaxTokens * kMaxHidden;
constexpr float kEps = 1e-6f;

/// Inputs: multiples of 1/16 in [-1, 1] (x; sums over <= 8 ranks exact in
/// bf16), multiples of 1/8 in [-2, 2] (residual), weights in [0.5, 1.5].
float xValue(int r, std::size_t i, int salt) { return float(int((i * 37 + r * 11 + salt * 5) % 33) - 16) / 16.f; }
float residualValue(std::size_t i, int salt) { return float(int((i * 13 + salt * 7) % 33) - 16) / 8.f; }
float weightValue(std::size_t i) { return 0.5f + float(i % 65) / 64.f; }

float bf(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
uint16_t bits(Bf16 v) {
  uint16_t b;
  std::memcpy(&b, &v, 2);
  return b;
}

struct Buffers {
  Bf16 *xA = nullptr, *xB = nullptr, *residual = nullptr, *resA = nullptr, *resB = nullptr, *weight = nullptr;
  void *outA = nullptr, *outB = nullptr;
  void alloc() {
    for (Bf16** p : {&xA, &xB, &residual, &resA, &resB}) cudaMalloc(p, kMaxElems * 2);
    cudaMalloc(&weight, kMaxHidden * 2);
    cudaMalloc(&outA, kMaxElems * 2 + 256);  // + the bytes past the largest output, checked untouched
    cudaMalloc(&outB, kMaxElems * 2 + 256);
  }
  void free() {
    for (void* p : {(void*)xA, (void*)xB, (void*)residual, (void*)resA, (void*)resB, (void*)weight, outA, outB})
      cudaFree(p);
  }
};

struct Shape {
  std::size_t tokens, hidden;
  DType outType;
};

class Rank {
 public:
  Rank(Bootstrap& b, int device, bool checked) : b_(b), rank_(b.rank()), n_(b.size()) {
    cudaSetDevice(device);
    CommOptions o;
    if (checked) o.checked = true, o.waitTimeoutUs = 5'000'000;
    o.logPlans = true;  // lastPlan(): which program a call took
    o.planLogPath = "/dev/null";
    comm_ = std::make_unique<Communicator>(b, device, o);
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    buf_.alloc();
    cudaDeviceSynchronize();
    b_.barrier();
  }
  ~Rank() {
    b_.barrier();
    buf_.free();
    cudaStreamDestroy(stream_);
  }

  void expect(bool ok, const std::string& what) {
    if (!ok) {
      std::string why;
      const Status async = comm_->asyncError(&why);
      std::printf("FAIL rank %d: %s%s\n", rank_, what.c_str(),
                  async == Status::Ok ? "" : (std::string(" [asyncError: ") + why + "]").c_str());
      ++gFailures;
    } else if (rank_ == 0) {
      std::printf("PASS %s\n", what.c_str());
    }
  }

  /// Writes the inputs of shape s (salt: another set) into xA, xB,
  /// residual, weight; clears the outputs. Then every rank meets.
  void setInputs(const Shape& s, int salt, bool inPlace) {
    const std::size_t elems = s.tokens * s.hidden;
    std::vector<Bf16> x(elems), res(elems), w(s.hidden);
    for (std::size_t i = 0; i < elems; ++i) x[i] = __float2bfloat16_rn(xValue(rank_, i, salt));
    for (std::size_t i = 0; i < elems; ++i) res[i] = __float2bfloat16_rn(residualValue(i, salt));
    for (std::size_t i = 0; i < s.hidden; ++i) w[i] = __float2bfloat16_rn(weightValue(i));
    cudaMemcpy(buf_.xA, x.data(), elems * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(buf_.xB, x.data(), elems * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(buf_.residual, res.data(), elems * 2, cudaMemcpyHostToDevice);
    if (inPlace) {
      cudaMemcpy(buf_.resA, res.data(), elems * 2, cudaMemcpyHostToDevice);
      cudaMemcpy(buf_.resB, res.data(), elems * 2, cudaMemcpyHostToDevice);
    } else {
      cudaMemset(buf_.resA, 0x7f, kMaxElems * 2);
      cudaMemset(buf_.resB, 0x7f, kMaxElems * 2);
    }
    cudaMemcpy(buf_.weight, w.data(), s.hidden * 2, cudaMemcpyHostToDevice);
    cudaMemset(buf_.outA, 0x7f, kMaxElems * 2 + 256);
    cudaMemset(buf_.outB, 0x7f, kMaxElems * 2 + 256);
    cudaDeviceSynchronize();
    b_.barrier();
  }

  Status fusedCall(const Shape& s, fused::Fusion mode, bool inPlace, bool* ran) {
    return fused::allReduceAddRmsNorm(*comm_, buf_.xA, inPlace ? buf_.resA : buf_.residual, buf_.resA, buf_.weight,
                                      buf_.outA, s.outType, 0.25f, s.tokens, s.hidden, kEps, stream_, mode, ran);
  }
  Status unfusedCall(const Shape& s, bool inPlace) {
    return fused::allReduceAddRmsNorm(*comm_, buf_.xB, inPlace ? buf_.resB : buf_.residual, buf_.resB, buf_.weight,
                                      buf_.outB, s.outType, 0.25f, s.tokens, s.hidden, kEps, stream_,
                                      fused::Fusion::Unfused);
  }
  /// Waits for the stream, then every rank meets; false on a CUDA error.
  bool finish() {
    const cudaError_t e = cudaStreamSynchronize(stream_);
    b_.barrier();
    return e == cudaSuccess;
  }

  /// Compares path A with path B and with the host reference.
  std::string compare(const Shape& s, int salt) {
    const std::size_t elems = s.tokens * s.hidden, ob = s.outType == DType::BF16 ? 2 : 1;
    std::vector<Bf16> xA(elems), xB(elems), rA(elems), rB(elems);
    std::vector<unsigned char> oA(elems * ob), oB(elems * ob), tail(64);
    cudaMemcpy(xA.data(), buf_.xA, elems * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(xB.data(), buf_.xB, elems * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(rA.data(), buf_.resA, elems * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(rB.data(), buf_.resB, elems * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(oA.data(), buf_.outA, elems * ob, cudaMemcpyDeviceToHost);
    cudaMemcpy(oB.data(), buf_.outB, elems * ob, cudaMemcpyDeviceToHost);
    cudaMemcpy(tail.data(), static_cast<unsigned char*>(buf_.outA) + elems * ob, 64, cudaMemcpyDeviceToHost);
    if (std::memcmp(xA.data(), xB.data(), elems * 2) != 0) return "reduced x differs between the paths";
    if (std::memcmp(rA.data(), rB.data(), elems * 2) != 0) return "residualOut differs between the paths";
    if (oA != oB) return "out differs between the paths";
    if (std::any_of(tail.begin(), tail.end(), [](unsigned char c) { return c != 0x7f; }))
      return "bytes past out written";
    for (std::size_t t = 0; t < s.tokens; ++t) {
      double sumSq = 0;
      std::vector<float> h(s.hidden);
      for (std::size_t j = 0; j < s.hidden; ++j) {
        const std::size_t i = t * s.hidden + j;
        float sum = 0;
        for (int p = 0; p < n_; ++p) sum += xValue(p, i, salt);
        if (bits(xA[i]) != bits(__float2bfloat16_rn(sum))) return "reduced x at " + std::to_string(i);
        h[j] = bf(sum + bf(residualValue(i, salt)));
        if (bits(rA[i]) != bits(__float2bfloat16_rn(h[j]))) return "residualOut at " + std::to_string(i);
        sumSq += double(h[j]) * h[j];
      }
      const double rms = 1.0 / std::sqrt(sumSq / double(s.hidden) + kEps);
      for (std::size_t j = 0; j < s.hidden; ++j) {
        const std::size_t i = t * s.hidden + j;
        const double want = double(h[j]) * rms * double(bf(weightValue(j)));
        double got;
        if (s.outType == DType::BF16) {
          Bf16 v;
          std::memcpy(&v, &oA[i * 2], 2);
          got = __bfloat162float(v);
          if (std::fabs(got - want) > std::fabs(want) / 64 + 1e-3) return "out at " + std::to_string(i);
        } else {
          __nv_fp8_e4m3 v;
          std::memcpy(&v, &oA[i], 1);
          got = float(v) * 0.25;
          const double clipped = std::min(std::max(want, -448.0 * 0.25), 448.0 * 0.25);
          if (std::fabs(got - clipped) > std::fabs(clipped) / 8 + 0.25 / 64) return "fp8 out at " + std::to_string(i);
        }
      }
    }
    return "";
  }

  void runShape(const Shape& s, bool inPlace) {
    const std::string what = "n=" + std::to_string(n_) + " tokens=" + std::to_string(s.tokens) +
                             " hidden=" + std::to_string(s.hidden) + " out=" + toString(s.outType) +
                             (inPlace ? " in-place" : "") + (comm_->options().checked ? " checked" : "");
    setInputs(s, 0, inPlace);
    bool ran = false;
    Status a = fusedCall(s, fused::Fusion::Auto, inPlace, &ran);
    bool ok = finish();
    Status bst = unfusedCall(s, inPlace);
    ok = finish() && ok;
    // One rank: the kernel always runs (NAME_device copies: deviceLocalCall).
    const bool latency = n_ == 1 || s.tokens * s.hidden * 2 <= latencyMaxBytes();
    std::string why = a != Status::Ok || bst != Status::Ok ? std::string("status ") + toString(a) + " / " + toString(bst)
                      : !ok                               ? "CUDA error"
                      : !ran                              ? "did not run fused"
                                                          : compare(s, 0);
    expect(why.empty(), what + (latency ? " fused (latency program)" : " fused (throughput program)") +
                            (why.empty() ? "" : ": " + why));
  }

  /// The latency bound of allReduce at this world size (the generated policy).
  std::size_t latencyMaxBytes() const { return gen::allReduce_Policy::world[n_].latencyMaxBytes; }

  void runRefusals() {
    // Fusion::Fused on 8 MiB of x: past the latency bound at every world
    // size (the throughput program in the user's kernel), bitwise as
    // unfused; then a call of the latency program.
    for (DType outType : {DType::BF16, DType::F8E4M3}) {
      if (n_ == 1) break;
      const Shape big{512, 8192, outType};
      setInputs(big, 1, false);
      bool ran = false;
      const Status st = fusedCall(big, fused::Fusion::Fused, false, &ran);
      const std::string plan = comm_->lastPlan();  // the first call of this shape: its plan line
      bool ok = finish();
      const Status ust = unfusedCall(big, false);
      ok = finish() && ok;
      const std::string why = st != Status::Ok || ust != Status::Ok || !ok || !ran
                                  ? std::string("status ") + toString(st) + " / " + toString(ust)
                              : plan.rfind("throughput", 0) != 0 ? "the plan was not the throughput program: " + plan
                                                                  : compare(big, 1);
      expect(why.empty(), "n=" + std::to_string(n_) + " Fusion::Fused, 512 x 8192, out " + toString(outType) +
                              " (the throughput program)" + (why.empty() ? "" : ": " + why));
    }
    if (n_ > 1) runShape({7, 4096, DType::BF16}, false);
    // Bad arguments: every rank refuses.
    const Status st = fused::allReduceAddRmsNorm(*comm_, buf_.xA, buf_.residual, buf_.resA, buf_.weight, buf_.outA,
                                                 DType::BF16, 1.f, 4, 100, kEps, stream_);
    finish();
    expect(st == Status::InvalidArgument, std::string("hidden=100 refused: ") + toString(st));
  }

  void runGraph(const Shape& s) {
    setInputs(s, 2, false);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    bool ran = false;
    const Status st = fusedCall(s, fused::Fusion::Fused, false, &ran);
    cudaError_t e = cudaStreamEndCapture(stream_, &graph);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    b_.barrier();
    bool ok = st == Status::Ok && e == cudaSuccess;
    for (int replay = 0; replay < 3 && ok; ++replay) {
      setInputs(s, 3 + replay, false);
      ok = cudaGraphLaunch(exec, stream_) == cudaSuccess;
      ok = finish() && ok;
      ok = unfusedCall(s, false) == Status::Ok && ok;
      ok = finish() && ok;
      const std::string why = ok ? compare(s, 3 + replay) : "launch failed";
      ok = why.empty();
      if (!ok) std::printf("rank %d replay %d: %s\n", rank_, replay, why.c_str());
    }
    expect(ok, "n=" + std::to_string(n_) + " fused call of " + std::to_string(s.tokens) + " x " +
                   std::to_string(s.hidden) + " captured in a graph, 3 replays with new inputs");
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }

  void runBench() {
    for (std::size_t tokens : {1, 8, 32, 128}) {
      const Shape s{tokens, 4096, DType::BF16};
      setInputs(s, 0, false);
      float med[2] = {0, 0};
      for (int path = 0; path < 2; ++path) {
        std::vector<float> ms;
        cudaEvent_t a, z;
        cudaEventCreate(&a);
        cudaEventCreate(&z);
        for (int it = 0; it < 25; ++it) {
          b_.barrier();
          cudaEventRecord(a, stream_);
          if (path == 0) fusedCall(s, fused::Fusion::Auto, false, nullptr);
          else unfusedCall(s, false);
          cudaEventRecord(z, stream_);
          cudaEventSynchronize(z);
          float t = 0;
          cudaEventElapsedTime(&t, a, z);
          if (it >= 5) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        med[path] = ms[ms.size() / 2] * 1000.f;
        cudaEventDestroy(a);
        cudaEventDestroy(z);
      }
      if (rank_ == 0)
        std::printf("BENCH n=%d tokens=%zu hidden=4096 bf16: fused %.2f us, unfused %.2f us (medians of 20)\n", n_,
                    tokens, med[0], med[1]);
    }
  }

 private:
  Bootstrap& b_;
  int rank_, n_;
  std::unique_ptr<Communicator> comm_;
  cudaStream_t stream_ = nullptr;
  Buffers buf_;
};

void runRank(Bootstrap& b, int device) {
  {
    Rank r(b, device, false);
    for (std::size_t hidden : {2048, 4096, 8192})
      for (std::size_t tokens : {1, 7, 64, 256})
        for (DType t : {DType::BF16, DType::F8E4M3}) r.runShape({tokens, hidden, t}, false);
    r.runShape({7, 2048, DType::BF16}, true);
    r.runRefusals();
    r.runGraph({7, 4096, DType::BF16});
    r.runGraph({512, 8192, DType::BF16});  // the throughput program (ranks > 1)
    if (gBench) r.runBench();
  }
  Rank checked(b, device, true);
  if (std::getenv("FUSED_CHECKED_UNFUSED_FIRST")) {  // diagnosis: two unfused calls before any device-API call
    checked.setInputs({64, 4096, DType::BF16}, 0, false);
    for (int i = 0; i < 2; ++i) {
      const Status st = checked.unfusedCall({64, 4096, DType::BF16}, false);
      const bool ok = checked.finish();
      checked.expect(st == Status::Ok && ok, std::string("checked unfused call ") + std::to_string(i) + ": " + toString(st));
    }
  }
  checked.runShape({64, 4096, DType::BF16}, false);
  checked.runShape({1, 8192, DType::F8E4M3}, true);
  checked.runShape({512, 8192, DType::BF16}, false);  // the throughput program (ranks > 1)
}

} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) gRanks = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--bench") == 0) gBench = true;
  }
  if (!demo::runDemoRanks("fused AllReduce + add + RMSNorm", gRanks, runRank, gFailures)) return 0;
  std::printf("%s: %d failure(s)\n", gFailures == 0 ? "OK" : "FAILED", gFailures.load());
  return gFailures == 0 ? 0 : 1;
}
