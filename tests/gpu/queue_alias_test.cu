/// @file queue_alias_test.cu
/// @brief Ranks sharing a GPU whose streams share one of the device's
/// hardware work queues (issue 35 item 10). A device has
/// CUDA_DEVICE_MAX_CONNECTIONS queues (default 8) and the driver maps
/// streams onto them in turn as they are created, so with more streams than
/// queues two ranks' streams can land in one queue. Work in one queue
/// starts in order: a kernel that waits for the one before it on its own
/// stream (a rank's program after its call check, or its next call) holds
/// back everything queued behind it, including a peer's kernel that the
/// first one's predecessor spins on.
///
/// Two ranks as threads, streams created on purpose `gap` streams apart:
///   gap 0                        distinct queues: the calls pass;
///   gap = connections - 1        (default 8 - 1) the streams share a queue,
///                                and rank 1 enqueues its calls 300 ms after
///                                rank 0.
/// With the runtime's default (libpurlin sets CUDA_DEVICE_MAX_CONNECTIONS=32
/// before CUDA starts, where the application has not set it), the aliasing
/// case needs 31 streams between the ranks'. The test states what happens
/// in each case: with the streams adjacent every call must pass; with them
/// in one queue a checked communicator may time out (the test reports it:
/// it is the experiment) and must then refuse every later call at once.
/// Seen on one H100 (2026-12-06, bench/results/2026-12-06-s12-device): every
/// call passed in both cases, with 8 queues and with 32.
///
/// Run: gpu-bin/queue_alias_test [--gap G]   (default: 0, then connections-1)
#include "coll_test_common.cuh"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

using namespace colltest;

namespace {

struct Outcome {
  Status first[2] = {Status::Ok, Status::Ok};   ///< asyncError after the calls
  Status later[2] = {Status::Ok, Status::Ok};   ///< a further call's launch status
  double seconds[2] = {0, 0};
  std::string why[2];
};

/// Streams for ranks 0 and 1 with `gap` streams created between them.
void makeStreams(int gap, cudaStream_t (&s)[2], std::vector<cudaStream_t>& fillers) {
  CT_CUDA(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  for (int i = 0; i < gap; ++i) {
    cudaStream_t f = nullptr;
    CT_CUDA(cudaStreamCreateWithFlags(&f, cudaStreamNonBlocking));
    fillers.push_back(f);
  }
  CT_CUDA(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
}

Outcome runGap(int gap, int calls, std::size_t count) {
  CT_CUDA(cudaSetDevice(0));
  cudaStream_t s[2];
  std::vector<cudaStream_t> fillers;
  makeStreams(gap, s, fillers);
  InProcessGroup group(2);
  Outcome o;
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      CT_CUDA(cudaSetDevice(0));
      const std::unique_ptr<Bootstrap> own = group.bootstrap(r);  // held: the rank's endpoint lives as long as its thread
      Bootstrap& boot = *own;
      CommOptions opt = sharedGpuOptions(16u << 20, true);
      opt.waitTimeoutUs = 3'000'000;
      struct Buffers {  // freed on every path
        std::byte *in = nullptr, *out = nullptr;
        ~Buffers() { cudaFree(in), cudaFree(out); }
      } buf;
      try {
        Communicator comm(boot, 0, opt);
        std::byte *&in = buf.in, *&out = buf.out;
        CT_CUDA(cudaMalloc(&in, count * 2));
        CT_CUDA(cudaMalloc(&out, count * 2));
        CT_CUDA(cudaMemset(in, 0, count * 2));
        CT_CUDA(cudaDeviceSynchronize());
        boot.barrier();
        struct {
          std::size_t count;
          DType t;
          RedOp op;
        } const k{count, DType::BF16, RedOp::Sum};
        const sn::CallArgs a = callArgs(k, in, out);
        if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; ++c) (void)launchColl<PAuto>(Coll::AllReduce, comm, a, s[r]);
        CT_CUDA(cudaStreamSynchronize(s[r]));
        o.seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::string msg;
        o.first[r] = comm.asyncError(&msg);
        o.why[r] = msg;
        boot.barrier();
        o.later[r] = launchColl<PAuto>(Coll::AllReduce, comm, a, s[r]);
        CT_CUDA(cudaStreamSynchronize(s[r]));
        boot.barrier();
      } catch (const std::exception& e) {
        o.first[r] = Status::Internal;
        o.why[r] = e.what();
        boot.abort();  // the peer's next barrier fails at once instead of waiting
      }
    });
  for (auto& t : threads) t.join();
  for (cudaStream_t f : fillers) cudaStreamDestroy(f);
  cudaStreamDestroy(s[0]);
  cudaStreamDestroy(s[1]);
  return o;
}

} // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("queue_alias_test: no GPU\n");
    return 2;
  }
  const int connections = purlin::deviceQueues();
  std::vector<int> gaps = {0, connections - 1};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--gap" && i + 1 < argc && std::atoi(argv[i + 1]) >= 0) gaps = {std::atoi(argv[++i])};
    else {
      std::printf("usage: queue_alias_test [--gap G]   (G >= 0 streams between the two ranks' streams)\n");
      return 2;
    }
  }
  const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf("queue_alias_test: CUDA_DEVICE_MAX_CONNECTIONS=%s (%d queues)\n", env ? env : "(unset)", connections);
  int failures = 0;
  for (int gap : gaps)
    for (std::size_t count : {std::size_t(2048), std::size_t(4) << 20}) {  // latency, throughput
      const Outcome o = runGap(gap, 3, count);
      for (int r = 0; r < 2; ++r)
        std::printf("gap %d count %zu rank %d: %.2f s, %s%s%s; a later call: %s\n", gap, count, r, o.seconds[r],
                    toString(o.first[r]), o.why[r].empty() ? "" : ": ", o.why[r].c_str(), toString(o.later[r]));
      const bool aliased = gap > 0 && gap % connections == connections - 1;
      for (int r = 0; r < 2; ++r) {
        std::string why;
        if (!aliased && (o.first[r] != Status::Ok || o.later[r] != Status::Ok))
          why = "distinct queues: the calls must pass";
        if (aliased && o.first[r] != Status::Ok && o.later[r] == Status::Ok)
          why = "after a failure a later call must be refused";
        char b[120];
        std::snprintf(b, sizeof b, "gap %d (%s), count %zu", gap, aliased ? "one queue" : "distinct queues", count);
        reportCase(r, b, why, failures);
      }
    }
  std::printf("queue_alias_test: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
