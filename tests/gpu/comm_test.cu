/// @file comm_test.cu
/// @brief GPU test of purlin::Communicator. Run plainly: ranks are threads of
/// this process (one per visible GPU, at least 2 ranks); run under
/// `purlin-launch -n N`: one rank per process. Each mode creates and destroys
/// communicators repeatedly, moves a pattern through every peer mapping with a
/// release/acquire signal, checks for leaked device memory, checks failed
/// creations (bad device, mismatched options) fail on every rank with a
/// message, and runs the NCCL bootstrap and the C ABI. Exit status 0 = pass.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nccl.h>

#include "comm_test_kernels.cuh"
#include "purlin/host/communicator.h"
#include "purlin/purlin.h"

using namespace purlin;
using namespace commtest;

namespace {

constexpr int kIterations = 20;
constexpr unsigned long long kWaitNs = 5'000'000'000ull; // bounded device wait

std::size_t freeBytes(int device) {
  std::size_t free = 0, total = 0;
  cudaSetDevice(device);
  CUDA_OK(cudaMemGetInfo(&free, &total));
  return free;
}

/// Checks what creation promises: zeroed signals/packets/state, epoch 1, the
/// DeviceComm filled from the layout, options honored.
void verifyFresh(const Communicator &c) {
  const DeviceComm &dc = c.deviceComm();
  const WorkspaceLayout &l = c.layout();
  EXPECT(dc.rank == c.rank() && dc.size == c.size(), "rank/size %d/%d", dc.rank, dc.size);
  EXPECT(dc.numSignals == kNumSignals, "numSignals %zu", dc.numSignals);
  EXPECT(dc.stagingHalfBytes == l.stagingHalfBytes, "staging half");
  EXPECT(dc.checked == (c.options().checked ? 1u : 0u), "checked");
  {
    DeviceState head{};  // the header before the counters
    CUDA_OK(cudaMemcpy(&head, dc.state, offsetof(DeviceState, counters), cudaMemcpyDeviceToHost));
    EXPECT(head.timeoutNs == (c.options().checked ? c.options().waitTimeoutUs * 1000 : 0), "timeoutNs");
    HostStatus *hs = c.hostStatus();
    EXPECT(hs != nullptr && head.host != nullptr && hs->abortRequested == 0 && hs->error.failed == 0 && head.failed == 0,
           "rank %d: failure state not clear at creation", c.rank());
  }
  for (int p = 0; p < c.size(); ++p) {
    EXPECT(dc.signals[p] && dc.packets[p] && dc.staging[p], "null mapping of rank %d", p);
    EXPECT(reinterpret_cast<std::byte *>(dc.staging[p]) ==
               static_cast<std::byte *>(c.peerWorkspace(p)) + l.stagingOffset,
           "staging[%d] offset", p);
  }
  std::vector<uint64_t> sig(l.stagingOffset / 8);
  CUDA_OK(cudaMemcpy(sig.data(), c.peerWorkspace(c.rank()), l.stagingOffset, cudaMemcpyDeviceToHost));
  EXPECT(std::all_of(sig.begin(), sig.end(), [](uint64_t v) { return v == 0; }),
         "rank %d: signals/packets not zero at creation", c.rank());
  DeviceState st;
  CUDA_OK(cudaMemcpy(&st, dc.state, sizeof st, cudaMemcpyDeviceToHost));
  EXPECT(std::all_of(st.epochs, st.epochs + kMaxEpochSlots, [](uint64_t e) { return e == 1; }) &&
             st.failed == 0,
         "rank %d: state epoch %llu", c.rank(), (unsigned long long)st.epochs[0]);
}

/// Rank r writes a pattern into the end of staging half 1 (and the start of
/// half 0) of rank r+1 and signals STAGED[r][7] there; every rank waits for
/// its own signal and verifies what rank r-1 wrote into its workspace.
void exchange(Communicator &c, Bootstrap &b, uint32_t seed, uint64_t value) {
  const DeviceComm &dc = c.deviceComm();
  const int n = c.size(), r = c.rank();
  const int to = (r + 1) % n, from = (r + n - 1) % n;
  const std::size_t bytes = std::min<std::size_t>(dc.stagingHalfBytes, 4u << 20);
  const std::size_t words = bytes / 4;
  const std::size_t halfOneEnd = 2 * dc.stagingHalfBytes - bytes;
  const uint32_t sigIndex = kSignalStaged + uint32_t(r) * kSignalSlots + 7;
  const uint32_t mySig = kSignalStaged + uint32_t(from) * kSignalSlots + 7;
  cudaStream_t waitStream, putStream;
  CUDA_OK(cudaStreamCreateWithFlags(&waitStream, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&putStream, cudaStreamNonBlocking));
  unsigned long long *result = nullptr;
  unsigned *arrived = nullptr;
  CUDA_OK(cudaMalloc(&result, 3 * sizeof *result));
  CUDA_OK(cudaMalloc(&arrived, sizeof *arrived));
  CUDA_OK(cudaMemsetAsync(result, 0, 3 * sizeof *result, putStream));
  CUDA_OK(cudaMemsetAsync(arrived, 0, sizeof *arrived, putStream));
  CUDA_OK(cudaStreamSynchronize(putStream));
  // Ranks may share a GPU: nobody launches a waiting kernel before every
  // rank is done with calls that synchronize the device (cudaMalloc, a
  // device synchronization), or those would wait on it.
  b.barrier();
  if (n > 1) {
    // Start of half 0 without a signal (checked after the barrier), end of
    // half 1 with one (checked by the device while the peer writes).
    putAndNotify<<<8, 256, 0, putStream>>>(reinterpret_cast<uint32_t *>(dc.staging[to]), 1024,
                                          seed ^ 0x55, dc.signals[to] + sigIndex + 1, 1, arrived);
    CUDA_OK(cudaStreamSynchronize(putStream));
    CUDA_OK(cudaMemsetAsync(arrived, 0, sizeof *arrived, putStream));
    CUDA_OK(cudaStreamSynchronize(putStream));
    waitAndCheck<<<8, 256, 0, waitStream>>>(
        reinterpret_cast<const uint32_t *>(dc.staging[r] + halfOneEnd), words, seed + from,
        dc.signals[r] + mySig, value, kWaitNs, result);
    putAndNotify<<<16, 256, 0, putStream>>>(reinterpret_cast<uint32_t *>(dc.staging[to] + halfOneEnd),
                                           words, seed + r, dc.signals[to] + sigIndex, value, arrived);
    CUDA_OK(cudaStreamSynchronize(putStream));
    CUDA_OK(cudaStreamSynchronize(waitStream));
    unsigned long long h[3];
    CUDA_OK(cudaMemcpy(h, result, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 1, "rank %d: no signal %u from rank %d (observed %llu, expected %llu)",
           r, mySig, from, h[2], (unsigned long long)value);
    EXPECT(h[1] == 0, "rank %d: %llu wrong words from rank %d via the peer mapping", r, h[1], from);
  }
  b.barrier();
  std::vector<uint32_t> head(1024);
  CUDA_OK(cudaMemcpy(head.data(), dc.staging[r], 4096, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (std::size_t i = 0; n > 1 && i < head.size(); ++i)
    bad += head[i] != patternWord(i, seed ^ 0x55);
  EXPECT(bad == 0, "rank %d: %d wrong words at the start of staging half 0", r, bad);
  CUDA_OK(cudaFree(result));
  CUDA_OK(cudaFree(arrived));
  CUDA_OK(cudaStreamDestroy(waitStream));
  CUDA_OK(cudaStreamDestroy(putStream));
}

CommOptions optionsFor(int it) {
  CommOptions o; // even iterations: the default 256 MiB staging halves
  if (it % 2) {
    o.stagingHalfBytes = (1u << 20) + 4096u * it;
    o.packetHalfBytes = 64u << 10;
  }
  o.checked = it % 3 == 0;
  return o;
}

/// Creates and destroys kIterations communicators, exchanging through each;
/// then checks that device memory came back.
void repeatedCreate(Bootstrap &b, int device, const char *mode) {
  using Clock = std::chrono::steady_clock;
  double createMs[2] = {0, 0}, destroyMs[2] = {0, 0};
  int counted[2] = {0, 0};
  auto ms = [](Clock::time_point a, Clock::time_point z) {
    return std::chrono::duration<double, std::milli>(z - a).count();
  };
  auto once = [&](int it) {
    auto t0 = Clock::now();
    auto c = std::make_unique<Communicator>(b, device, optionsFor(it));
    auto t1 = Clock::now();
    verifyFresh(*c);
    b.barrier();  // every rank has checked its fresh workspace before any peer writes into it
    exchange(*c, b, 1000u * it + 17, it + 1);
    CUDA_OK(cudaDeviceSynchronize());
    b.barrier(); // nobody frees while a peer may still touch its memory
    auto t2 = Clock::now();
    c.reset();
    auto t3 = Clock::now();
    if (it > 0) {
      createMs[it % 2] += ms(t0, t1);
      destroyMs[it % 2] += ms(t2, t3);
      ++counted[it % 2];
    }
  };
  once(0); // warm-up: context, peer access
  // Free memory is per GPU, and ranks may share one: measure when every
  // rank is between communicators (barriers), so the peers' allocations
  // are the same at both measurements.
  b.barrier();
  std::size_t before = freeBytes(device);
  b.barrier();
  for (int it = 1; it <= kIterations; ++it)
    once(it);
  b.barrier();
  std::size_t after = freeBytes(device);
  b.barrier();
  long long leaked = (long long)before - (long long)after;
  EXPECT(leaked < (16ll << 20), "%s rank %d: %lld bytes of device memory not returned after %d communicators",
         mode, b.rank(), leaked, kIterations);
  std::printf("%s rank %d (device %d): %d communicators created and destroyed, leak %lld bytes; "
              "create %.2f ms (256 MiB halves) / %.2f ms (1 MiB halves), destroy %.2f / %.2f ms\n",
              mode, b.rank(), device, kIterations, leaked, createMs[0] / counted[0],
              createMs[1] / counted[1], destroyMs[0] / counted[0], destroyMs[1] / counted[1]);
}

/// Creation that must fail on every rank: returns this rank's message.
std::string expectFailure(Bootstrap &b, int device, CommOptions o, Status want) {
  try {
    Communicator c(b, device, o);
    EXPECT(false, "rank %d: creation should have failed", b.rank());
    return {};
  } catch (const Error &e) {
    EXPECT(e.status() == want, "rank %d: status %s, expected %s (%s)", b.rank(),
           toString(e.status()), toString(want), e.what());
    return e.what();
  }
}

void failures(Bootstrap &b, int device) {
  const int r = b.rank();
  CommOptions small;
  small.stagingHalfBytes = 1u << 20;
  Communicator(b, device, small); // warm-up so the next measurement is fair
  b.barrier();  // ranks may share a GPU: measure with every rank between communicators
  std::size_t before = freeBytes(device);
  b.barrier();
  // A bad device on the last rank: every rank fails, naming the culprit.
  std::string msg = expectFailure(b, r == b.size() - 1 ? 999 : device, {},
                                  r == b.size() - 1 ? Status::InvalidArgument : Status::InvalidArgument);
  EXPECT(msg.find("device 999 does not exist") != std::string::npos, "rank %d: %s", r, msg.c_str());
  // Mismatched options.
  CommOptions o = small;
  o.stagingHalfBytes += 256 * r;
  msg = expectFailure(b, device, o, Status::InvalidArgument);
  EXPECT(msg.find("CommOptions differ") != std::string::npos, "rank %d: %s", r, msg.c_str());
  // Checked mode without a bound.
  o = small;
  o.checked = true;
  o.waitTimeoutUs = 0;
  msg = expectFailure(b, device, o, Status::InvalidArgument);
  EXPECT(msg.find("waitTimeoutUs") != std::string::npos, "rank %d: %s", r, msg.c_str());
  b.barrier();
  std::size_t after = freeBytes(device);
  b.barrier();
  EXPECT((long long)before - (long long)after < (16ll << 20),
         "rank %d: failed creations leaked %lld bytes", r, (long long)before - (long long)after);
  b.barrier();
  std::printf("rank %d: failed creations threw on every rank; e.g. \"%s\"\n", r, msg.c_str());
}

/// checkDeviceErrors reports a recorded timeout, naming the signal, and
/// keeps reporting it (a failed communicator stays failed).
void checkedReport(Bootstrap &b, int device) {
  CommOptions o;
  o.stagingHalfBytes = 1u << 20;
  o.checked = true;
  Communicator c(b, device, o);
  c.checkDeviceErrors(); // nothing recorded
  EXPECT(c.asyncError() == Status::Ok && c.broken().empty(), "rank %d: fresh communicator failed", c.rank());
  // The record a kernel's recordWaitError writes (host-mapped memory).
  WaitError rec{1, c.rank(), uint32_t(kSignalStaged + 1 * kSignalSlots + 3), 0, 42, 7};
  c.hostStatus()->error = rec;  // the host-mapped record
  for (int twice = 0; twice < 2; ++twice) {
    try {
      c.checkDeviceErrors();
      EXPECT(false, "no Timeout thrown");
    } catch (const Error &e) {
      std::string w = e.what();
      EXPECT(e.status() == Status::Timeout, "status %s", toString(e.status()));
      std::string want = "rank " + std::to_string(c.rank()) +
                         " timed out waiting on signal 1027 (STAGED src 1 slot 3) (expected 42, observed 7)";
      EXPECT(w == want, "message '%s'", w.c_str());
    }
  }
  EXPECT(c.asyncError() == Status::Timeout && !c.broken().empty(), "rank %d: the failure did not stay", c.rank());
  b.barrier();
}

/// Communicator over an NCCL communicator's bootstrap.
void viaNccl(ncclComm_t nc, int device) {
  NcclBootstrap nb(nc);
  CommOptions o;
  o.stagingHalfBytes = 8u << 20;
  for (int it = 0; it < 3; ++it) {
    Communicator c(nb, device, o);
    verifyFresh(c);
    exchange(c, nb, 777u + it, 1);
    CUDA_OK(cudaDeviceSynchronize());
    nb.barrier();
  }
  std::printf("rank %d: NcclBootstrap communicators ok\n", nb.rank());
}

/// Runs body(rank) on one thread per rank; exceptions count as failures.
void onThreads(int n, const std::function<void(int)> &body) {
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception &e) {
        EXPECT(false, "rank %d threw: %s", r, e.what());
      }
    });
  for (auto &t : ts)
    t.join();
}

void inProcess() {
  int count = 0;
  CUDA_OK(cudaGetDeviceCount(&count));
  if (count < 1) {
    EXPECT(false, "no CUDA device visible");
    return;
  }
  const int n = std::max(2, count);
  std::printf("in-process: %d ranks on %d device(s)\n", n, count);
  auto dev = [&](int r) { return r % count; };
  {
    InProcessGroup g(n, 60000);
    onThreads(n, [&](int r) {
      auto b = g.bootstrap(r);
      repeatedCreate(*b, dev(r), "in-process");
      failures(*b, dev(r));
      checkedReport(*b, dev(r));
    });
  }
  // NCCL bootstrap (one NCCL communicator per device of this process).
  if (count >= 2) {
    std::vector<ncclComm_t> comms(count);
    std::vector<int> devs(count);
    for (int d = 0; d < count; ++d)
      devs[d] = d;
    ncclResult_t nr = ncclCommInitAll(comms.data(), count, devs.data());
    EXPECT(nr == ncclSuccess, "ncclCommInitAll: %s", ncclGetErrorString(nr));
    if (nr == ncclSuccess) {
      onThreads(count, [&](int r) { viaNccl(comms[r], r); });
      for (auto c : comms)
        ncclCommDestroy(c);
    }
  }
  // C ABI over a Unix socket between threads.
  const std::string path = "@comm-test-" + std::to_string(::getpid());
  // The job's secret the Unix-socket bootstrap requires (purlin-launch sets
  // one; these ranks are threads of this process).
  ::setenv("PURLIN_BOOTSTRAP_COOKIE", purlin::randomHex(16).c_str(), 0);
  onThreads(n, [&](int r) {
    purlin_comm_options_t o = purlin_comm_options_default();
    o.staging_half_bytes = 2u << 20;
    purlin_comm_t h = nullptr;
    purlin_status_t s = purlin_comm_create_unix(path.c_str(), r, n, dev(r), &o, &h);
    EXPECT(s == PURLIN_OK, "rank %d: purlin_comm_create_unix: %s", r, purlin_last_error());
    if (s != PURLIN_OK)
      return;
    EXPECT(purlin_comm_rank(h) == r && purlin_comm_size(h) == n, "C rank/size");
    EXPECT(purlin_comm_unwrap(h) && purlin_comm_unwrap(h)->device() == dev(r), "unwrap");
    EXPECT(purlin_comm_check(h) == PURLIN_OK, "check: %s", purlin_last_error());
    cudaDeviceSynchronize();
    // async_error from another thread racing destroy, then abort,
    // async_error and destroy on the destroyed handle (its tombstone): each
    // returns "destroyed" instead of reading freed memory (issue 35 item 8).
    std::atomic<bool> stop{false};
    std::atomic<int> polls{0}, bad{0};
    std::thread poller([&] {
      while (!stop.load()) {
        const purlin_status_t a = purlin_comm_async_error(h);
        if (a != PURLIN_OK && !(a == PURLIN_INVALID_ARGUMENT && std::strstr(purlin_last_error(), "destroyed")))
          bad.fetch_add(1);
        polls.fetch_add(1);
      }
    });
    while (polls.load() < 100) std::this_thread::yield();
    EXPECT(purlin_comm_destroy(h) == PURLIN_OK, "destroy");
    const int before = polls.load();
    while (polls.load() < before + 100) std::this_thread::yield();  // polls of the tombstone too
    stop = true;
    poller.join();
    EXPECT(bad.load() == 0, "rank %d: async_error racing destroy returned something else %d times", r, bad.load());
    EXPECT(purlin_comm_abort(h) == PURLIN_INVALID_ARGUMENT && std::strstr(purlin_last_error(), "destroyed"),
           "abort after destroy: %s", purlin_last_error());
    EXPECT(purlin_comm_async_error(h) == PURLIN_INVALID_ARGUMENT && std::strstr(purlin_last_error(), "destroyed"),
           "async_error after destroy: %s", purlin_last_error());
    EXPECT(purlin_comm_destroy(h) == PURLIN_INVALID_ARGUMENT && std::strstr(purlin_last_error(), "destroyed already"),
           "destroy twice: %s", purlin_last_error());
  });
  purlin_comm_t h = nullptr;
  EXPECT(purlin_comm_create_unix(nullptr, 0, 1, 0, nullptr, &h) == PURLIN_INVALID_ARGUMENT, "null path");
  EXPECT(purlin_comm_create_unix("@x", 0, 1, 0, nullptr, nullptr) == PURLIN_INVALID_ARGUMENT, "null out");
  EXPECT(purlin_comm_create_unix("@comm-test-solo", 0, 1, 4242, nullptr, &h) == PURLIN_INVALID_ARGUMENT &&
             h == nullptr && std::strstr(purlin_last_error(), "4242"),
         "bad device via C: %s", purlin_last_error());
  EXPECT(purlin_comm_rank(nullptr) == -1 && purlin_comm_destroy(nullptr) == PURLIN_OK, "null handle");
}

void multiProcess() {
  auto b = bootstrapFromEnv();
  const char *d = std::getenv("PURLIN_DEVICE");
  int count = 0;
  CUDA_OK(cudaGetDeviceCount(&count));
  const int device = d ? std::atoi(d) : b->rank() % std::max(count, 1);
  std::printf("multi-process: rank %d of %d on device %d (pid %d)\n", b->rank(), b->size(), device, (int)getpid());
  repeatedCreate(*b, device, "multi-process");
  failures(*b, device);
  checkedReport(*b, device);
  // NCCL: rank 0's unique id travels over the socket bootstrap.
  ncclUniqueId id{}, all[8];
  if (b->rank() == 0)
    ncclGetUniqueId(&id);
  // NCCL refuses two ranks on one GPU ("invalid usage"): with one GPU the
  // processes share it, and this part says so instead of running.
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, device));
  std::vector<cudaUUID_t> uuids(b->size());
  b->allGather(&prop.uuid, uuids.data(), sizeof prop.uuid);
  bool shared = false;
  for (int p = 0; p < b->size(); ++p)
    shared = shared || (p != b->rank() && std::memcmp(&uuids[p], &prop.uuid, sizeof prop.uuid) == 0);
  if (shared)
    std::printf("rank %d: SKIP the NCCL bootstrap: ranks share a GPU (NCCL refuses that)\n", b->rank());
  if (b->size() <= 8 && !shared) {
    b->allGather(&id, all, sizeof id);
    ncclComm_t nc = nullptr;
    cudaSetDevice(device);
    ncclResult_t nr = ncclCommInitRank(&nc, b->size(), all[0], b->rank());
    EXPECT(nr == ncclSuccess, "ncclCommInitRank: %s", ncclGetErrorString(nr));
    if (nr == ncclSuccess) {
      viaNccl(nc, device);
      ncclCommDestroy(nc);
    }
  }
  b->barrier();
  // C ABI from the environment (a second rendezvous on the same socket path).
  purlin_comm_options_t o = purlin_comm_options_default();
  o.staging_half_bytes = 2u << 20;
  purlin_comm_t h = nullptr;
  purlin_status_t s = purlin_comm_create_from_env(-1, &o, &h);
  EXPECT(s == PURLIN_OK, "purlin_comm_create_from_env: %s", purlin_last_error());
  if (s == PURLIN_OK) {
    EXPECT(purlin_comm_rank(h) == b->rank() && purlin_comm_unwrap(h)->device() == device, "C handle");
    b->barrier();
    purlin_comm_destroy(h);
  }
}

} // namespace

int main() {
  try {
    if (std::getenv("PURLIN_RANK"))
      multiProcess();
    else
      inProcess();
  } catch (const std::exception &e) {
    EXPECT(false, "uncaught: %s", e.what());
  }
  std::printf("%s: %d failure(s)\n", failures() ? "FAIL" : "PASS", failures());
  return failures() ? 1 : 0;
}
