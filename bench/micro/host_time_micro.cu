/// @file host_time_micro.cu
/// @brief Host time of an eager call (issue 34: "an eager call's host time
/// is <= 1.3x an empty kernel launch on the same stream"): two ranks as
/// threads of one process sharing device 0. Per rank and repetition, the
/// wall time of --calls back-to-back calls on the host (no synchronization
/// inside the loop; the device keeps up at these sizes), divided by the
/// calls; rows are rank 0's medians over --reps repetitions:
///   empty      an empty kernel, <<<1, 32>>>, on the rank's stream
///   AllReduce  1 KiB bf16 sum (the latency program), colltest::PAuto
///   AllGather  1 KiB per rank
/// and the ratio of each call to the empty launch. The output of the last
/// call of each row is checked against the host reference.
///   row,<what>,<bytes>,<median us>,<min us>,<max us>,<median / empty>
/// Usage: host_time_micro [--reps N] [--calls N]
#include "coll_test_common.cuh"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace colltest;

namespace {

__global__ void emptyKernel() {}

struct Options {
  int reps = 5, calls = 2000;
};

/// What rank r's output element i must be (bf16 inputs from fill()):
/// AllReduce's sum over ranks, or AllGather's block of rank i / count.
float reference(Coll c, int n, uint32_t seed, std::size_t count, std::size_t i) {
  if (c == Coll::AllGather) return inputValue(seed, uint32_t(i / count), i % count);
  float acc = inputValue(seed, 0, i);
  for (int p = 1; p < n; ++p) acc = hostOp(RedOp::Sum, acc, inputValue(seed, uint32_t(p), i));
  return acc;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// One rank on device 0; returns its failures.
int rankMain(Bootstrap& boot, const Options& o) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  cudaStream_t s = nullptr;
  CT_CUDA(cudaSetDevice(0));
  CT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CommOptions co;
  co.stagingHalfBytes = 16u << 20;
  co.packetHalfBytes = 8u << 20;
  Communicator comm(boot, 0, co);
  auto timeLoop = [&](auto&& call) {
    std::vector<double> us;
    for (int rep = 0; rep < o.reps; ++rep) {
      CT_CUDA(cudaStreamSynchronize(s));
      boot.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < o.calls; ++i) call();
      const auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / o.calls);
      CT_CUDA(cudaStreamSynchronize(s));
    }
    return us;
  };
  std::vector<double> empty = timeLoop([&] { emptyKernel<<<1, 32, 0, s>>>(); });
  CT_CUDA(cudaGetLastError());
  const double emptyMedian = median(empty);
  auto report = [&](const char* what, std::size_t bytes, const std::vector<double>& us) {
    if (r != 0) return;
    std::printf("row,%s,%zu,%.3f,%.3f,%.3f,%.2f\n", what, bytes, median(us),
                *std::min_element(us.begin(), us.end()), *std::max_element(us.begin(), us.end()),
                median(us) / emptyMedian);
    std::fflush(stdout);
  };
  report("empty", 0, empty);
  for (Coll c : {Coll::AllReduce, Coll::AllGather}) {
    const std::size_t E = 2, count = 512;  // 1 KiB of bf16 per rank
    const std::size_t inE = count, outE = c == Coll::AllGather ? n * count : count;
    std::byte *in = nullptr, *out = nullptr;
    CT_CUDA(cudaMalloc(&in, inE * E));
    CT_CUDA(cudaMalloc(&out, outE * E));
    const uint32_t seed = 5;
    fill(in, inE, DType::BF16, seed, uint32_t(r), 0, s);
    sn::CallArgs a;
    a.in = in;
    a.out = out;
    a.count = count;
    a.dtype = DType::BF16;
    a.op = RedOp::Sum;
    int bad = 0;
    std::vector<double> us = timeLoop([&] { bad += launchColl<PAuto>(c, comm, a, s) != Status::Ok; });
    CT_CUDA(cudaStreamSynchronize(s));
    std::string why = bad ? std::string("launch: ") + sn::lastError() : std::string();
    if (why.empty())
      why = firstMismatch(DType::BF16, out, outE, [&](std::size_t i, std::byte* want) {
        fromFloat(DType::BF16, reference(c, n, seed, count, i), want);
        return true;
      });
    if (!why.empty()) {
      std::printf("FAIL rank %d: %s: %s\n", r, name(c), why.c_str());
      ++failures;
    }
    report(name(c), count * E, us);
    boot.barrier();
    CT_CUDA(cudaFree(in));
    CT_CUDA(cudaFree(out));
  }
  boot.barrier();
  CT_CUDA(cudaStreamSynchronize(s));
  CT_CUDA(cudaStreamDestroy(s));
  return failures;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && std::strcmp(argv[i], "--reps") == 0) o.reps = std::atoi(argv[++i]);
    else if (i + 1 < argc && std::strcmp(argv[i], "--calls") == 0) o.calls = std::atoi(argv[++i]);
    else return false;
  }
  return o.reps >= 1 && o.calls >= 1;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::printf("usage: host_time_micro [--reps N] [--calls N]\n");
    return 2;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("host_time_micro: no GPU\n");
    return 2;
  }
  // Two ranks as threads, both on device 0.
  const int failures = runOversubscribed(2, 1, [&](Bootstrap& boot, int) { return rankMain(boot, o); });
  std::printf("host_time_micro: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
