/// @file device_counts_test.cu
/// @brief The V collectives with their counts in device memory
/// (CallArgs::countsOnDevice; docs/device-counts.md), as purlinc printed
/// them (generated/), N ranks as threads of one process sharing the visible
/// GPUs (N = 1, 2, 3, 5 or --ranks N):
///  - every case of vform_test but the in-place ones (vform_cases.cuh: zeros,
///    one rank only, primes, the crossover, one block beyond the staging,
///    AllToAllV's gapped layouts, skewed pointers; latency and throughput
///    policies), with the counts copied into device memory and a bound
///    every block fits: an eager call, then the call captured in a CUDA
///    graph and replayed with other counts (rotated by one rank) and new
///    inputs written between the replays, each checked against the host
///    reference, and the output past its blocks (up to the bound's capacity)
///    untouched;
///  - bad counts, unchecked and checked: an entry above the bound on every
///    rank, ranks whose arrays disagree, an AllToAllV displacement past the
///    capacity on one rank, the two ends of an AllToAllV flow disagreeing:
///    the call moves nothing on any rank (every output untouched), ends
///    without a timeout, and every rank's asyncError() names a failure; the
///    next call is refused.
///
/// Run: gpu-bin/device_counts_test [--ranks N]
#include "vform_cases.cuh"

#include <algorithm>
#include <chrono>

using namespace colltest;
using namespace vcases;

namespace {

sn::CollKind kindOf(VColl c) {
  return c == VColl::AllGatherV ? sn::CollKind::AllGatherV
         : c == VColl::ReduceScatterV ? sn::CollKind::ReduceScatterV
                                      : sn::CollKind::AllToAllV;
}

/// Case k with its counts moved one rank on (AllGatherV, ReduceScatterV:
/// counts[p] = k.counts[p+1]; AllToAllV: m[p][q] = k.m[p+1][q+1]), for a
/// replay with other counts.
Case rotated(const Case& k, int n) {
  Case b = k;
  if (k.c == VColl::AllToAllV) {
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) b.m[p][q] = k.m[(p + 1) % n][(q + 1) % n];
  } else {
    for (int p = 0; p < n; ++p) b.counts[p] = k.counts[(p + 1) % n];
  }
  return b;
}

/// A bound every block of case k fits on every rank, with each side's
/// blocks inside the bound's capacity (deviceCountsCapacity: n*maxCount
/// elements on a scattered side, maxCount on a packed one).
std::size_t deviceBound(const Case& k, int n) {
  std::size_t m = k.c == VColl::AllToAllV ? k.maxCount : *std::max_element(k.counts.begin(), k.counts.end());
  for (int r = 0; r < n; ++r) {
    m = std::max(m, (inElems(k, r) + std::size_t(n) - 1) / std::size_t(n));
    m = std::max(m, (outElems(k, r) + std::size_t(n) - 1) / std::size_t(n));
  }
  return m;
}

/// Rank r's count arrays of case k in host memory, laid out as in device
/// memory: counts[n] (AllGatherV, ReduceScatterV) or sendCounts,
/// sendDispls, recvCounts, recvDispls (n each).
std::vector<std::size_t> hostCounts(const Case& k, int n, int r) {
  if (k.c != VColl::AllToAllV) return k.counts;
  std::vector<std::size_t> v(4 * std::size_t(n));
  for (int q = 0; q < n; ++q) {
    v[q] = k.m[r][q];
    v[n + q] = sendDispl(k, r, q);
    v[2 * n + q] = k.m[q][r];
    v[3 * n + q] = recvDispl(k, r, q);
  }
  return v;
}

/// The CallArgs of a device-count call with rank r's arrays at `dev`.
sn::CallArgs deviceArgs(const Case& k, int n, const void* in, void* out, const std::size_t* dev, std::size_t bound) {
  sn::CallArgs a;
  a.in = in;
  a.out = out;
  a.countsOnDevice = true;
  a.maxCount = bound;
  if (k.c == VColl::AllToAllV) {
    a.sendCounts = dev, a.sendDispls = dev + n, a.recvCounts = dev + 2 * n, a.recvDispls = dev + 3 * n;
  } else {
    a.counts = dev;
  }
  a.dtype = k.t;
  a.op = k.op;
  return a;
}

/// "" if rank r's output holds case k's result and its bytes past the
/// result, up to `capBytes`, still hold the 0xCD sentinel.
std::string checkOutput(const Case& k, int n, int r, uint32_t seed, const std::byte* out, std::size_t capBytes) {
  const std::size_t E = dtypeSize(k.t), outE = outElems(k, r);
  std::string why = check(k, n, r, seed, out, outE);
  if (!why.empty() || capBytes <= outE * E) return why;
  std::vector<unsigned char> rest(capBytes - outE * E);
  CT_CUDA(cudaMemcpy(rest.data(), out + outE * E, rest.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < rest.size(); ++i)
    if (rest[i] != 0xCD) return "byte " + std::to_string(outE * E + i) + " past the blocks was written";
  return "";
}

/// "" or why the communicator reports a failure: the launch's status and
/// asyncError after synchronizing.
std::string deviceError(Communicator& comm) {
  try {
    comm.checkDeviceErrors();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// One case: an eager call, then a graph replayed with the rotated counts.
std::string runCase(const Case& k, Communicator& comm, Bootstrap& boot, cudaStream_t s, uint32_t seed) {
  const int n = boot.size(), r = boot.rank();
  const Case b = rotated(k, n);
  const std::size_t E = dtypeSize(k.t), bound = std::max(deviceBound(k, n), deviceBound(b, n));
  std::size_t inCap = 0, outCap = 0;
  sn::deviceCountsCapacity(kindOf(k.c), n, bound, inCap, outCap);
  const std::size_t skew = k.skew ? E : 0;
  boot.barrier();  // cudaMalloc / cudaFree meet first: ranks share the GPU (docs/runtime.md)
  std::byte *inBase = nullptr, *outBase = nullptr;
  std::size_t* dev = nullptr;
  CT_CUDA(cudaMalloc(&inBase, inCap * E + 16));
  CT_CUDA(cudaMalloc(&outBase, outCap * E + 16));
  CT_CUDA(cudaMalloc(&dev, 4 * std::size_t(n) * sizeof(std::size_t)));
  std::byte *in = inBase + skew, *out = outBase + skew;
  boot.barrier();
  const sn::CallArgs a = deviceArgs(k, n, in, out, dev, bound);
  std::string why;
  cudaGraphExec_t exec = nullptr;
  for (int round = 0; round < 2 && why.empty(); ++round) {
    const Case& now = round == 0 ? k : b;  // round 1: the graph, with the rotated counts
    const std::vector<std::size_t> counts = hostCounts(now, n, r);
    CT_CUDA(cudaMemcpyAsync(dev, counts.data(), counts.size() * sizeof(std::size_t), cudaMemcpyHostToDevice, s));
    CT_CUDA(cudaMemsetAsync(out, 0xCD, outCap * E, s));
    fill(in, inElems(now, r), k.t, seed + uint32_t(round), uint32_t(r), 0, s);
    CT_CUDA(cudaStreamSynchronize(s));
    boot.barrier();  // every rank's counts and inputs in place before any launch
    Status st = Status::Ok;
    if (round == 0) {
      st = k.tput ? launchV<PTput>(k.c, comm, a, s) : launchV<PAuto>(k.c, comm, a, s);
    } else if (exec) {
      CT_CUDA(cudaGraphLaunch(exec, s));
    }
    CT_CUDA(cudaStreamSynchronize(s));
    if (st != Status::Ok) why = std::string("launch: ") + sn::lastError();
    if (why.empty()) why = deviceError(comm);
    if (why.empty()) why = checkOutput(now, n, r, seed + uint32_t(round), out, outCap * E);
    if (!why.empty() && round == 1) why = "graph replayed with rotated counts: " + why;
    if (round == 0 && !anyRank(boot, !why.empty())) {
      // Capture the call (counts still k's: the graph reads them at replay).
      boot.barrier();
      cudaGraph_t g;
      CT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      st = k.tput ? launchV<PTput>(k.c, comm, a, s) : launchV<PAuto>(k.c, comm, a, s);
      CT_CUDA(cudaStreamEndCapture(s, &g));
      if (st == Status::Ok) CT_CUDA(cudaGraphInstantiate(&exec, g, 0));
      else why = std::string("capture: ") + sn::lastError();
      cudaGraphDestroy(g);
    }
    if (anyRank(boot, !why.empty())) break;  // every rank replays, or none
  }
  if (exec) cudaGraphExecDestroy(exec);
  boot.barrier();
  cudaFree(inBase);
  cudaFree(outBase);
  cudaFree(dev);
  return why;
}

/// One bad call (a fresh communicator each: the failure is permanent):
/// `counts(r)` gives rank r's arrays, laid out as hostCounts.
struct BadCall {
  const char* what;
  VColl c;
  std::size_t bound;
  std::function<std::vector<std::size_t>(int r)> counts;
  /// What rank r's asyncError message must say ("" = any of the failures'
  /// texts: BadCounts, Mismatch, or PeerFailed naming either).
  std::function<std::string(int r)> says = [](int) { return std::string(); };
};

std::vector<BadCall> badCalls(int n) {
  auto even = [n](std::size_t each) { return std::vector<std::size_t>(n, each); };
  auto pair = [n](int r, std::size_t each, int badRank, int which, std::size_t value) {
    std::vector<std::size_t> v(4 * std::size_t(n));
    for (int q = 0; q < n; ++q) v[q] = v[2 * n + q] = each, v[n + q] = v[3 * n + q] = each * std::size_t(q);
    if (r == badRank) v[std::size_t(which)] = value;
    return v;
  };
  std::vector<BadCall> calls = {
      {"AllGatherV, an entry above the bound on every rank", VColl::AllGatherV, 8,
       [=](int) { auto v = even(4); v[n - 1] = 9; return v; },
       [=](int) { return "counts (or sendCounts)[" + std::to_string(n - 1) + "] in device memory is 9, above maxCount (at most 8)"; }},
      {"AllGatherV, rank 0's counts differ from the others'", VColl::AllGatherV, 8,
       [=](int r) { auto v = even(4); if (r == 0) v[1] = 3; return v; }},
      {"ReduceScatterV, rank 1's counts hold an entry above the bound", VColl::ReduceScatterV, 8,
       [=](int r) { auto v = even(4); if (r == 1) v[0] = 9; return v; }},
      {"AllToAllV, rank n-1's recvDispls[0] past the capacity", VColl::AllToAllV, 8,
       [=](int r) { return pair(r, 4, n - 1, 3 * n, 8 * std::size_t(n) - 3); },
       [=](int r) { return r == n - 1 ? std::string("recvDispls[0] in device memory is ") : std::string(); }},
      {"AllToAllV, rank 0 expects 3 elements from rank n-1, which sends 4", VColl::AllToAllV, 8,
       [=](int r) { return pair(r, 4, 0, 2 * n + n - 1, 3); }},
  };
  // One rank: no peer to disagree with (the second and third need ranks 0 and 1).
  if (n == 1) calls.erase(calls.begin() + 1, calls.begin() + 3);
  return calls;
}

int badCountCalls(Bootstrap& boot, int dev, cudaStream_t s) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  for (bool checked : {false, true})
    for (const BadCall& bc : badCalls(n)) {
      const std::size_t E = 2, capBytes = 8 * std::size_t(n) * E;
      CommOptions o = sharedGpuOptions(4u << 20, checked);
      o.waitTimeoutUs = 5'000'000;
      std::byte *in = nullptr, *out = nullptr;
      std::size_t* counts = nullptr;
      boot.barrier();
      CT_CUDA(cudaMalloc(&in, capBytes));
      CT_CUDA(cudaMalloc(&out, capBytes));
      CT_CUDA(cudaMalloc(&counts, 4 * std::size_t(n) * sizeof(std::size_t)));
      const std::vector<std::size_t> host = bc.counts(r);
      CT_CUDA(cudaMemcpy(counts, host.data(), host.size() * sizeof(std::size_t), cudaMemcpyHostToDevice));
      CT_CUDA(cudaMemset(in, 1, capBytes));
      CT_CUDA(cudaMemset(out, 0xCD, capBytes));
      boot.barrier();
      std::string why;
      {
        Communicator comm(boot, dev, o);
        Case shape{bc.c, DType::BF16, RedOp::Sum, {}, bc.what};
        const sn::CallArgs a = deviceArgs(shape, n, in, out, counts, bc.bound);
        const auto t0 = std::chrono::steady_clock::now();
        const Status st = launchV<PAuto>(bc.c, comm, a, s);
        if (st != Status::Ok) why = std::string("the launch was refused on the host: ") + sn::lastError();
        if (why.empty() && cudaStreamSynchronize(s) != cudaSuccess) why = "the stream failed";
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::string msg;
        const Status after = comm.asyncError(&msg);
        const std::string want = bc.says(r);
        const bool named = want.empty() ? msg.find("in device memory") != std::string::npos ||
                                              msg.find("called a different collective") != std::string::npos ||
                                              msg.find("its call differed") != std::string::npos
                                        : msg.find(want) != std::string::npos;
        if (why.empty() && ((after != Status::InvalidArgument && after != Status::RemoteError) || !named))
          why = std::string("asyncError: ") + toString(after) + ": " + msg + (want.empty() ? "" : " (expected: " + want + ")");
        if (why.empty() && sec > 4.0) why = "found after " + std::to_string(sec) + " s (a timeout, not the counts kernel)";
        std::vector<unsigned char> got(capBytes);
        CT_CUDA(cudaMemcpy(got.data(), out, capBytes, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < capBytes && why.empty(); ++i)
          if (got[i] != 0xCD) why = "output byte " + std::to_string(i) + " was written";
        boot.barrier();
        if (why.empty() && launchV<PAuto>(bc.c, comm, a, s) == Status::Ok) why = "the next call was not refused";
        boot.barrier();
      }
      cudaFree(in);
      cudaFree(out);
      cudaFree(counts);
      char b[200];
      std::snprintf(b, sizeof b, "%s (%s): nothing moved, every rank failed, n=%d", bc.what,
                    checked ? "checked" : "unchecked", n);
      reportCase(r, b, why, failures);
    }
  return failures;
}

int rankMain(Bootstrap& boot, int dev) {
  int failures = 0;
  cudaStream_t s = beginRank(dev);
  const int n = boot.size(), r = boot.rank();
  {
    // Every other case on a checked communicator: there the counts kernel
    // takes the place of the call check.
    Communicator unchecked(boot, dev, sharedGpuOptions(4u << 20, false));
    Communicator checked(boot, dev, sharedGpuOptions(4u << 20, true));
    std::vector<Case> all;
    for (const Case& k : cases(n))
      if (!k.inPlace) all.push_back(k);  // no in-place form with counts in device memory
    uint32_t seed = 101;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const Case& k = all[i];
      seed += 4;
      const std::string why = runCase(k, i % 2 ? checked : unchecked, boot, s, seed);
      char b[240];
      std::snprintf(b, sizeof b, "%s %s/%s counts(%s) in device memory%s%s%s, eager + graph replayed with rotated counts, n=%d",
                    name(k.c), toString(k.t), k.c == VColl::ReduceScatterV ? toString(k.op) : "copy", k.shape,
                    k.tput ? " throughput-policy" : "", k.skew ? " skewed" : "", i % 2 ? " checked" : "", n);
      reportCase(r, b, why, failures);
      boot.barrier();
      if (anyRank(boot, !why.empty())) break;  // the epochs may no longer agree
    }
  }
  failures += badCountCalls(boot, dev, s);
  cudaStreamDestroy(s);
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  // One rank too: its call is a copy kernel that reads the counts (collective.cuh).
  return sharedGpuMain(argc, argv, "device_counts_test", {1, 2, 3, 5}, rankMain, [](Rank& R) {
    std::printf("device_counts_test: the NCCL comparison is vform_test's (the same cases, host counts)\n");
    R.fail();
  });
}
