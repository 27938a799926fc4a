/// @file register_test.cu
/// @brief Registered buffers (Communicator::registerBuffer, the C ABI's
/// purlin_comm_register; docs/runtime.md "Registered buffers"): eager calls
/// whose output lies in a registration take the direct program, move the
/// right bytes and write nothing outside the output; the others stage; the
/// registration outlives captures and releaseDirect; misuse is an error on
/// every rank; an output at another offset of the registration on one rank
/// fails every rank before any write. N ranks as threads of one process on the visible GPUs
/// (ranks share GPUs when N > #GPUs), checked against host references
/// (copies bitwise, reductions bitwise equal to the fp32 ascending-rank
/// reference).
///
/// Each world runs: the data cases on a checked communicator; the
/// copy-engine forms (128 MiB, unchecked: a copy cannot be withheld after a
/// timeout); the misuse cases; the C ABI over a Unix-socket bootstrap.
///
/// Run: gpu-bin/register_test [--ranks N]   (N in 2..8; default: 2, 3, then 8)
#include "coll_test_common.cuh"

#include <unistd.h>

#include "purlin/host/bootstrap.h"
#include "purlin/purlin.h"

using namespace colltest;

namespace {

constexpr std::size_t kGuard = 4096;      ///< sentinel bytes before the registration inside the allocation
constexpr std::size_t kOutOffset = 256;   ///< the output's offset inside the registration (same on every rank)
constexpr unsigned char kSentinel = 0xCD;

struct Case {
  Coll c;
  DType t;
  RedOp op;
  std::size_t count;
  enum Where { Registered, Unregistered, PastEnd } where;
  bool graph = false;  ///< captured and replayed (registerDirect), after an eager call on the same buffers
  int calls = 3;       ///< eager calls, each with new inputs, each checked
  bool engine = false; ///< the captured call takes the copy-engine form where it applies (eager calls never do)
};

/// Per-rank block counts of at least `minMsgBytes` message bytes, in whole
/// 16-byte units (the direct program's rule).
std::size_t countFor(Coll c, int n, DType t, std::size_t minMsgBytes) {
  const std::size_t E = dtypeSize(t), perUnit = 16 / E;
  std::size_t count = c == Coll::AllReduce ? minMsgBytes / E : (minMsgBytes / E + n - 1) / n;
  return (count + perUnit - 1) / perUnit * perUnit;
}

std::vector<Case> dataCases(int n) {
  std::vector<Case> cs;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    const std::size_t big = countFor(c, n, DType::BF16, std::size_t(4) << 20);
    cs.push_back({c, DType::BF16, RedOp::Sum, big, Case::Registered});
    cs.push_back({c, DType::F32, RedOp::Max, countFor(c, n, DType::F32, std::size_t(6) << 20), Case::Registered});
    cs.push_back({c, DType::BF16, RedOp::Sum, big, Case::Unregistered, false, 1});
    cs.push_back({c, DType::BF16, RedOp::Sum, big, Case::PastEnd, false, 1});
    cs.push_back({c, DType::BF16, RedOp::Sum, 4099, Case::Registered, false, 2});  // below directMinBytes
    cs.push_back({c, DType::BF16, RedOp::Sum, big, Case::Registered, true, 1});
  }
  return cs;
}

/// At least directEngineMinBytes on an unchecked communicator: two eager
/// calls (the SM direct form: eager calls never take the copy-engine form,
/// whose copies the host enqueues before the tags are compared), then a
/// captured one (the copy-engine form where it applies: its memcpy nodes
/// are counted).
std::vector<Case> engineCases(int n) {
  std::vector<Case> cs;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll})
    if (!isReduce(c) || n == 2)  // the direct program reduces on two ranks only
      cs.push_back({c, DType::BF16, RedOp::Sum, countFor(c, n, DType::BF16, sn::kDirectEngineMinBytes),
                    Case::Registered, true, 2, true});
  return cs;
}

/// Whether the default policy (PAuto) takes the direct program for case k
/// when its output is registered: >= 4 MiB, copies any n, reductions n = 2.
bool directExpected(const Case& k, int n) {
  const std::size_t msgBytes = (k.c == Coll::AllReduce ? 1 : std::size_t(n)) * k.count * dtypeSize(k.t);
  return k.where == Case::Registered && (!isReduce(k.c) || n == 2) && msgBytes >= (std::size_t(4) << 20);
}

/// "" or what is wrong with the bytes of `arena` around the output (every
/// byte outside [out, out+outBytes) must still be the sentinel).
std::string checkGuards(const std::byte* arena, std::size_t arenaBytes, const std::byte* out, std::size_t outBytes) {
  std::vector<unsigned char> host(arenaBytes);
  CT_CUDA(cudaMemcpy(host.data(), arena, arenaBytes, cudaMemcpyDeviceToHost));
  const std::size_t b = std::size_t(out - arena), e = b + outBytes;
  for (std::size_t i = 0; i < arenaBytes; ++i)
    if ((i < b || i >= e) && host[i] != kSentinel)
      return "byte " + std::to_string(i) + " of the allocation, outside the output [" + std::to_string(b) + ", " +
             std::to_string(e) + "), was written";
  return "";
}

/// One data case on one rank; returns "" or why it failed.
std::string runCase(const Case& k, Communicator& comm, Bootstrap& boot, cudaStream_t s, uint32_t& seed) {
  const int n = boot.size(), r = boot.rank();
  const std::size_t E = dtypeSize(k.t), inE = inElems(k.c, n, k.count), outE = outElems(k.c, n, k.count);
  const std::size_t outBytes = outE * E;
  // One allocation: guard | registration (output at kOutOffset, then the rest) | guard.
  const std::size_t regBytes = kOutOffset + outBytes + (k.where == Case::PastEnd ? 0 : 4096);
  const std::size_t arenaBytes = kGuard + regBytes + 4096 + kGuard;
  std::byte *arena = nullptr, *in = nullptr, *loose = nullptr;
  boot.barrier();  // co-located ranks: no allocation while a peer's kernel waits
  CT_CUDA(cudaMalloc(&arena, arenaBytes));
  CT_CUDA(cudaMalloc(&in, inE * E));
  if (k.where == Case::Unregistered) CT_CUDA(cudaMalloc(&loose, outBytes + kGuard));
  CT_CUDA(cudaMemset(arena, kSentinel, arenaBytes));
  std::byte* regBegin = arena + kGuard;
  // PastEnd: the output starts inside the registration and ends 16 bytes past it.
  std::byte* out = k.where == Case::Unregistered ? loose
                   : k.where == Case::PastEnd    ? regBegin + kOutOffset + 16
                                                 : regBegin + kOutOffset;
  CT_CUDA(cudaDeviceSynchronize());
  boot.barrier();
  const uint64_t handle = comm.registerBuffer(regBegin, regBytes);
  std::string why;
  const std::size_t before = comm.registeredCalls();
  for (int call = 0; call < k.calls + (k.graph ? 1 : 0) && why.empty(); ++call) {
    const bool graph = k.graph && call == k.calls;
    ++seed;  // new inputs for every call: a stale output fails the check
    fill(in, inE, k.t, seed, uint32_t(r), 0, s);
    CT_CUDA(cudaMemsetAsync(out, kSentinel, outBytes, s));
    CT_CUDA(cudaStreamSynchronize(s));
    boot.barrier();
    const sn::CallArgs a = callArgs(k, in, out);
    const std::size_t captures = comm.directRegistrations();
    int memcpyNodes = 0;
    Status st = graph ? captureAndReplay(s, 2, [&] { return launchColl<PAuto>(k.c, comm, a, s); }, &memcpyNodes)
                      : launchColl<PAuto>(k.c, comm, a, s);
    CT_CUDA(cudaStreamSynchronize(s));
    if (st != Status::Ok) why = std::string("launch: ") + sn::lastError();
    try {
      comm.checkDeviceErrors();
    } catch (const Error& e) {
      why = e.what();
    }
    if (why.empty())
      why = firstMismatch(k.t, out, outE, [&](std::size_t i, std::byte* want) {
        expectedElem(k.c, k.t, k.op, k.count, n, r, seed, i, want);
        return true;
      });
    if (why.empty() && k.where != Case::Unregistered) why = checkGuards(arena, arenaBytes, out, outBytes);
    if (why.empty() && graph && comm.directRegistrations() != captures + (directExpected(k, n) ? 1 : 0))
      why = "the captured call did not take the direct program as expected";
    // The copy-engine form: captured calls only, while the co-located
    // ranks' streams fit the hardware queues; reductions need stream
    // memory operations.
    const bool wantEngine = k.engine && graph && sn::detail::engineFitsQueues(comm.ranksPerDevice()) &&
                            (!isReduce(k.c) || streamMemOpsAvailable());
    if (why.empty() && (memcpyNodes > 0) != wantEngine)
      why = std::to_string(memcpyNodes) + " memcpy nodes in the call: copy-engine form " +
            (wantEngine ? "expected" : "not expected");
    if (why.empty() && graph) {
      comm.releaseDirect();  // closes what the capture mapped, not what the registration holds
      if (comm.registeredBuffers() != 1) why = "releaseDirect dropped the registration";
    }
    boot.barrier();
  }
  const std::size_t eagerDirect = comm.registeredCalls() - before;
  const std::size_t wantDirect = directExpected(k, n) ? std::size_t(k.calls) : 0;
  if (why.empty() && eagerDirect != wantDirect)
    why = std::to_string(eagerDirect) + " of " + std::to_string(k.calls) + " eager calls took the direct program, " +
          std::to_string(wantDirect) + " expected";
  comm.deregisterBuffer(handle);  // collective: every rank's mappings closed before the frees below
  if (why.empty() && comm.registeredBuffers() != 0) why = "deregisterBuffer left a registration";
  boot.barrier();
  cudaFree(arena);
  cudaFree(in);
  if (loose) cudaFree(loose);
  return why;
}

const char* whereName(Case::Where w) {
  return w == Case::Registered ? "registered" : w == Case::Unregistered ? "unregistered" : "past the registration";
}

/// Runs `body` on every rank and expects it to throw Error(`status`) whose
/// text contains `text` on every rank; "" or why not.
template <class Body>
std::string expectError(Status status, const std::string& text, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (e.status() != status) return std::string("status ") + toString(e.status()) + ": " + e.what();
    if (std::string(e.what()).find(text) == std::string::npos)
      return std::string("message '") + e.what() + "' does not say '" + text + "'";
    return "";
  }
  return "no error (expected " + std::string(toString(status)) + " saying '" + text + "')";
}

/// Misuse: every rank gets the same error, and nothing stays registered.
int misuseCases(Communicator& comm, Bootstrap& boot) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  const std::size_t bytes = std::size_t(1) << 20;
  std::byte* buf = nullptr;
  boot.barrier();
  CT_CUDA(cudaMalloc(&buf, 2 * bytes));
  CT_CUDA(cudaDeviceSynchronize());
  boot.barrier();
  const auto report = [&](const char* what, std::string why) {
    if (why.empty() && comm.registeredBuffers() != 0) why = "a registration was left behind";
    reportCase(r, what, why, failures);
    boot.barrier();
  };
  report("register: a null pointer on the last rank", expectError(Status::InvalidArgument, "rank " + std::to_string(n - 1) + " passes a null pointer", [&] {
           comm.registerBuffer(r == n - 1 ? nullptr : buf, bytes);
         }));
  report("register: sizes differ", expectError(Status::InvalidArgument, "the same size on every rank", [&] {
           comm.registerBuffer(buf, r == n - 1 ? bytes - 256 : bytes);
         }));
  std::vector<std::byte> host(bytes);
  report("register: host memory on rank 0", expectError(Status::InvalidArgument, "rank 0 passes a range that is neither inside one cudaMalloc", [&] {
           comm.registerBuffer(r == 0 ? host.data() : buf, bytes);
         }));
  report("register: a range past the end of its allocation", expectError(Status::InvalidArgument, "neither inside one cudaMalloc", [&] {
           comm.registerBuffer(buf + bytes, bytes + 1);
         }));
  {
    const uint64_t h = comm.registerBuffer(buf, bytes);
    std::string why = expectError(Status::InvalidArgument, "overlaps its registration " + std::to_string(h), [&] {
      comm.registerBuffer(buf + bytes / 2, bytes);
    });
    if (why.empty())
      why = expectError(Status::InvalidArgument, "has no registration", [&] { comm.deregisterBuffer(h + 100); });
    const uint64_t h2 = comm.registerBuffer(buf + bytes, bytes);
    if (why.empty() && h2 == h) why = "two registrations share a handle";
    if (why.empty())
      why = expectError(Status::InvalidArgument, "every rank deregisters the same registration", [&] {
        comm.deregisterBuffer(r == 0 ? h : h2);
      });
    if (why.empty() && comm.registeredBuffers() != 2) why = "a refused deregistration dropped a registration";
    comm.deregisterBuffer(h2);
    comm.deregisterBuffer(h);
    report("register: overlap, an unknown handle, handles that differ", why);
  }
  {
    // A captured call whose count differs on the last rank: refused on every
    // rank (the exchange compares the output sizes) instead of a rank
    // writing past its peers' outputs.
    const std::size_t count = countFor(Coll::AllGather, n, DType::BF16, std::size_t(4) << 20) + (r == n - 1 ? 8 : 0);
    std::byte *in = nullptr, *out = nullptr;
    boot.barrier();
    CT_CUDA(cudaMalloc(&in, count * 2));
    CT_CUDA(cudaMalloc(&out, n * count * 2));
    CT_CUDA(cudaDeviceSynchronize());
    boot.barrier();
    cudaStream_t s = nullptr;
    CT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Case k{Coll::AllGather, DType::BF16, RedOp::Sum, count, Case::Unregistered};
    const sn::CallArgs a = callArgs(k, in, out);
    const Status st = captureAndReplay(s, 1, [&] { return launchColl<PAuto>(k.c, comm, a, s); });
    std::string why;
    if (st != Status::InvalidArgument)
      why = std::string("status ") + toString(st) + " (expected InvalidArgument): " + sn::lastError();
    else if (std::string(sn::lastError()).find("every rank must pass the same count") == std::string::npos)
      why = std::string("unclear message: ") + sn::lastError();
    reportCase(r, "capture: counts that differ between ranks refused on every rank", why, failures);
    CT_CUDA(cudaStreamDestroy(s));
    boot.barrier();
    cudaFree(in);
    cudaFree(out);
  }
  boot.barrier();
  cudaFree(buf);
  return failures;
}

/// Issue 35 item 3: an eager call on a registered buffer whose output lies
/// at another offset of the registration on the last rank (another tensor
/// of the same registration; every rank's count alike). Each rank writes
/// into its peers' registrations at its own offset, so without agreement
/// the ranks would write over the last rank's other bytes. The direct
/// program's ARRIVED_TAG carries the registration and the offset: every
/// rank's call fails (InvalidArgument "direct call differs", or
/// RemoteError), no byte of any rank's allocation outside its own output
/// is written, and later calls are refused. Unchecked and checked (the
/// call check does not see offsets: the tag finds it in both).
int placeMismatchCase(Bootstrap& boot, int dev, cudaStream_t s, bool checked) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  const Case k{Coll::AllGather, DType::BF16, RedOp::Sum, countFor(Coll::AllGather, n, DType::BF16, std::size_t(4) << 20),
               Case::Registered};
  const std::size_t inE = inElems(k.c, n, k.count), outBytes = outElems(k.c, n, k.count) * 2;
  constexpr std::size_t kShift = 4096;  ///< the last rank's output: this much further into the registration
  const std::size_t regBytes = kOutOffset + kShift + outBytes;
  const std::size_t arenaBytes = kGuard + regBytes + kGuard;
  std::string why;
  {
    Communicator comm(boot, dev, sharedGpuOptions(64u << 20, checked));
    std::byte *arena = nullptr, *in = nullptr;
    CT_CUDA(cudaMalloc(&arena, arenaBytes));
    CT_CUDA(cudaMalloc(&in, inE * 2));
    CT_CUDA(cudaMemset(arena, kSentinel, arenaBytes));
    fill(in, inE, k.t, 5, uint32_t(r), 0, s);
    CT_CUDA(cudaDeviceSynchronize());
    boot.barrier();
    std::byte* regBegin = arena + kGuard;
    std::byte* out = regBegin + kOutOffset + (r == n - 1 ? kShift : 0);
    const uint64_t handle = comm.registerBuffer(regBegin, regBytes);
    const std::size_t before = comm.registeredCalls();
    const Status st = launchColl<PAuto>(k.c, comm, callArgs(k, in, out), s);
    why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : "";
    const auto t0 = std::chrono::steady_clock::now();
    while (why.empty() && cudaStreamQuery(s) == cudaErrorNotReady)
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) why = "the call did not end within 10 s";
    if (why.empty() && comm.registeredCalls() != before + 1) why = "the call did not take the direct program";
    std::string msg;
    const Status after = comm.asyncError(&msg);
    const bool named = (after == Status::InvalidArgument && msg.find("direct call differs") != std::string::npos) ||
                       (after == Status::RemoteError && msg.find("its call differed") != std::string::npos);
    if (why.empty() && !named) why = std::string("asyncError: ") + toString(after) + ": " + msg;
    if (why.empty()) why = checkGuards(arena, arenaBytes, out, outBytes);
    if (why.empty() && launchColl<PAuto>(k.c, comm, callArgs(k, in, out), s) == Status::Ok)
      why = "a later call was launched on the failed communicator";
    // A failure may leave a kernel waiting (unchecked: no timeout): abort
    // it, so that destruction returns; the ranks agree on it.
    if (anyRank(boot, !why.empty()))
      comm.abort();  // destruction closes the registration's mappings
    else
      comm.deregisterBuffer(handle);
    boot.barrier();
    cudaFree(arena);
    cudaFree(in);
  }
  reportCase(r, (std::string(checked ? "checked" : "unchecked") +
                 ": an eager registered call whose output is at another offset on the last rank fails every rank, "
                 "nothing written, n=" + std::to_string(n)).c_str(),
             why, failures);
  return failures;
}

/// The C ABI: n threads, each with a purlin_comm_t over a Unix-socket
/// bootstrap, register, deregister and release through purlin.h.
int capiCases(int n, int gpus) {
  const std::string path = "@purlin-register-test-" + std::to_string(getpid()) + "-" + std::to_string(n);
  // The job's secret the Unix-socket bootstrap requires (purlin-launch sets
  // one; these ranks are threads of this process).
  ::setenv("PURLIN_BOOTSTRAP_COOKIE", purlin::randomHex(16).c_str(), 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      std::string why;
      purlin_comm_t comm = nullptr;
      std::byte* buf = nullptr;
      const std::size_t bytes = std::size_t(1) << 20;
      if (cudaSetDevice(r % gpus) != cudaSuccess || cudaMalloc(&buf, bytes) != cudaSuccess) why = "cudaMalloc";
      if (why.empty() && purlin_comm_create_unix(path.c_str(), r, n, r % gpus, nullptr, &comm) != PURLIN_OK)
        why = std::string("create: ") + purlin_last_error();
      uint64_t handle = 0;
      if (why.empty() && purlin_comm_register(comm, buf, bytes, nullptr) != PURLIN_INVALID_ARGUMENT)
        why = "register with a null handle pointer was not refused";
      if (why.empty() && purlin_comm_register(comm, buf, bytes, &handle) != PURLIN_OK)
        why = std::string("register: ") + purlin_last_error();
      if (why.empty() && purlin_comm_deregister(comm, handle + 1) != PURLIN_INVALID_ARGUMENT)
        why = "deregistering an unknown handle was not refused";
      if (why.empty() && std::string(purlin_last_error()).find("has no registration") == std::string::npos)
        why = std::string("unclear message: ") + purlin_last_error();
      if (why.empty() && purlin_comm_deregister(comm, handle) != PURLIN_OK)
        why = std::string("deregister: ") + purlin_last_error();
      if (why.empty() && purlin_comm_release_direct(comm) != PURLIN_OK)
        why = std::string("release_direct: ") + purlin_last_error();
      if (why.empty() && purlin_comm_register(nullptr, buf, bytes, &handle) != PURLIN_INVALID_ARGUMENT)
        why = "register on a null communicator was not refused";
      purlin_comm_destroy(comm);
      if (buf) cudaFree(buf);
      int f = 0;
      reportCase(r, ("C ABI: purlin_comm_register / deregister / release_direct, n=" + std::to_string(n)).c_str(), why, f);
      failures += f;
    });
  for (auto& t : threads) t.join();
  return failures.load();
}

int rankMain(Bootstrap& boot, int dev, bool engine) {
  int failures = 0;
  cudaStream_t s = beginRank(dev);
  const CommOptions o = sharedGpuOptions(64u << 20, !engine);
  const int n = boot.size(), r = boot.rank();
  {
    Communicator comm(boot, dev, o);
    uint32_t seed = 11;
    for (const Case& k : engine ? engineCases(n) : dataCases(n)) {
      const std::string why = runCase(k, comm, boot, s, seed);
      char b[200];
      std::snprintf(b, sizeof b, "%s %s/%s count=%zu, output %s, %d eager call(s)%s, n=%d %s", name(k.c),
                    toString(k.t), isReduce(k.c) ? toString(k.op) : "copy", k.count, whereName(k.where), k.calls,
                    k.graph ? " then a captured one" : "", n, engine ? "unchecked (copy engines)" : "checked");
      reportCase(r, b, why, failures);
      boot.barrier();
      if (!comm.broken().empty()) break;  // a timeout: the ranks' epochs no longer agree
    }
    if (!engine && comm.broken().empty()) failures += misuseCases(comm, boot);
    boot.barrier();
  }
  if (!engine)
    for (bool checked : {false, true}) failures += placeMismatchCase(boot, dev, s, checked);
  cudaStreamDestroy(s);
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> worlds = {2, 3, 8};
  if (!worldsFromArgs(argc, argv, "register_test", worlds)) return 2;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("register_test: no GPU\n");
    return 2;
  }
  int total = 0;
  for (int n : worlds) {
    for (bool engine : {false, true}) {
      const auto t0 = std::chrono::steady_clock::now();
      const int failures = runOversubscribed(n, gpus, [&](Bootstrap& boot, int dev) { return rankMain(boot, dev, engine); });
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("register_test: %d ranks on %d GPU(s), %s: %d failure(s), %.1f s\n", n, gpus,
                  engine ? "copy-engine forms (unchecked)" : "checked", failures, sec);
      total += failures;
    }
    total += capiCases(n, gpus);
  }
  std::printf("register_test: %s\n", total ? "FAIL" : "PASS");
  return total ? 1 : 0;
}
