/// @file failure_test.cu
/// @brief The failure model (docs/failure-model.md): abort() ends
/// a wait that would never end, on this rank and on its peers; checked-mode
/// waits give up by time; a failure is permanent (every later call returns
/// it, with no checkDeviceErrors needed); a call whose kind, count, dtype or
/// op differs across ranks fails on every rank with a clear message and
/// writes nothing outside the buffers passed (checked mode; unchecked, in
/// the latency program, whose packet headers name the call); eager calls of a checked
/// communicator stay on one stream; destroying an aborted communicator does
/// not hang, nor does destroying one whose kernel still waits on a peer
/// (without abort: destruction's bound, PURLIN_DESTROY_TIMEOUT_MS); the C
/// ABI's purlin_comm_abort and purlin_comm_async_error.
/// N ranks as threads of one process (ranks share GPUs when N > #GPUs).
///
/// Run: gpu-bin/failure_test [--ranks N]   (N in 2..8; default: 2, then 3)
#include "coll_test_common.cuh"

#include <unistd.h>

#include "purlin/host/bootstrap.h"
#include "purlin/purlin.h"

using namespace colltest;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr unsigned char kSentinel = 0xA5;
constexpr std::size_t kGuard = 1 << 16;  ///< sentinel bytes after every output

/// One rank's buffers: an input and an output followed by kGuard sentinel
/// bytes (nothing may write there).
struct Buffers {
  std::byte* in = nullptr;
  std::byte* out = nullptr;
  std::size_t outBytes = 0;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    cudaFree(in);
    cudaFree(out);
  }
  Buffers(std::size_t inBytes, std::size_t outBytes_) : outBytes(outBytes_) {
    CT_CUDA(cudaMalloc(&in, inBytes));
    CT_CUDA(cudaMalloc(&out, outBytes + kGuard));
    CT_CUDA(cudaMemset(in, 1, inBytes));
    CT_CUDA(cudaMemset(out, kSentinel, outBytes + kGuard));
  }
  /// "" or where the guard after the output was written.
  std::string guardIntact() const {
    std::vector<unsigned char> g(kGuard);
    CT_CUDA(cudaMemcpy(g.data(), out + outBytes, kGuard, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuard; ++i)
      if (g[i] != kSentinel) return "byte " + std::to_string(i) + " past the output was written";
    return "";
  }
};

/// Bytes of the input and output of `c` with `count` elements of `t` on n ranks.
std::size_t inBytesOf(Coll c, int n, DType t, std::size_t count) {
  return (c == Coll::AllGather || c == Coll::AllReduce ? count : count * n) * dtypeSize(t);
}
std::size_t outBytesOf(Coll c, int n, DType t, std::size_t count) {
  return (c == Coll::ReduceScatter || c == Coll::AllReduce ? count : count * n) * dtypeSize(t);
}

sn::CallArgs argsOf(const Buffers& b, std::size_t count, DType t, RedOp op = RedOp::Sum) {
  sn::CallArgs a;
  a.in = b.in;
  a.out = b.out;
  a.count = count;
  a.dtype = t;
  a.op = op;
  return a;
}

/// Waits up to `limit` seconds for stream s; "" or why not.
std::string waitStream(cudaStream_t s, double limit, double* took = nullptr) {
  const auto t0 = Clock::now();
  cudaError_t e;
  while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
    if (secondsSince(t0) > limit) return "the stream did not finish within " + std::to_string(limit) + " s";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (took) *took = secondsSince(t0);
  if (e != cudaSuccess) return std::string("stream: ") + cudaGetErrorString(e);
  return "";
}

/// Audit 3 and the abort API: rank 0 calls, rank 1 never makes the call
/// (it refuses nothing: a refusal would tell rank 0 itself, refusalCase),
/// so rank 0's unchecked kernel would wait forever. A watchdog thread on rank 0 sees the stream still
/// busy after 0.3 s and calls abort(): the kernel ends, asyncError is
/// Aborted, the next call is refused, and destroying the communicator
/// returns at once. The other ranks learn of it: their next call ends at
/// once with Aborted ("rank 0 aborted").
int abortCase(Bootstrap& boot, int dev, cudaStream_t s, Coll c, std::size_t count) {
  const int n = boot.size(), r = boot.rank();
  int failures = 0;
  std::string why;
  const DType t = DType::BF16;
  Buffers b(inBytesOf(c, n, t, count), outBytesOf(c, n, t, count));
  double destroySec = 0;
  {
    auto comm = std::make_unique<Communicator>(boot, dev, sharedGpuOptions(64u << 20, /*checked=*/false));
    boot.barrier();
    if (r == 0) {
      const Status st = launchColl<PAuto>(c, *comm, argsOf(b, count, t), s);
      std::atomic<bool> fired{false};
      std::thread watchdog([&] {  // the application's watchdog: abort after 0.3 s without progress
        const auto t0 = Clock::now();
        while (cudaStreamQuery(s) == cudaErrorNotReady) {
          if (secondsSince(t0) > 0.3) {
            fired = true;
            comm->abort();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      });
      double took = 0;
      why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 10.0, &took);
      watchdog.join();
      std::string msg;
      const Status after = comm->asyncError(&msg);
      if (why.empty() && !fired) why = "the call finished although its peer never called";
      if (why.empty() && (after != Status::Aborted || msg.find("aborted") == std::string::npos))
        why = std::string("asyncError after abort: ") + toString(after) + ": " + msg;
      if (why.empty() && launchColl<PAuto>(c, *comm, argsOf(b, count, t), s) != Status::Aborted)
        why = std::string("the call after abort was not refused: ") + sn::lastError();
      if (why.empty()) why = b.guardIntact();
    }
    boot.barrier();  // rank 0 has aborted
    if (r != 0 && why.empty()) {
      // Rank 0's aborted kernel wrote every rank's FAILED signal: this
      // rank's calls give up as soon as a wait spins instead of waiting on
      // rank 0. (The first may complete: rank 0's packets of the aborted
      // call were sent before its polls, and they are this call's data.)
      Status after = Status::Ok;
      std::string msg;
      for (int call = 0; call < 3 && why.empty() && after == Status::Ok; ++call) {
        const Status st = launchColl<PAuto>(c, *comm, argsOf(b, count, t), s);
        why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 5.0);
        after = comm->asyncError(&msg);
      }
      if (why.empty() && (after != Status::Aborted || msg.find("rank 0 aborted") == std::string::npos))
        why = std::string("a peer's calls after rank 0's abort: ") + toString(after) + ": " + msg;
      if (why.empty()) why = b.guardIntact();
    }
    boot.barrier();
    const auto t0 = Clock::now();
    comm.reset();
    destroySec = secondsSince(t0);
  }
  if (why.empty() && destroySec > 5.0) why = "destroying the aborted communicator took " + std::to_string(destroySec) + " s";
  reportCase(r, ("abort: rank 1 skips the " + std::string(name(c)) + " call, rank 0's watchdog aborts, n=" +
                 std::to_string(n)).c_str(), why, failures);
  return failures;
}

/// Issue 35 item 7: destroying a communicator whose kernel still waits on a
/// peer, without abort(): rank 0 calls, rank 1 never makes the call, and
/// rank 0 destroys its (unchecked) communicator while the kernel spins.
/// Destruction's bounded wait (PURLIN_DESTROY_TIMEOUT_MS = 300 here)
/// aborts the kernel and returns; then the peers destroy theirs.
int destroyCase(Bootstrap& boot, int dev, cudaStream_t s, Coll c, std::size_t count) {
  const int n = boot.size(), r = boot.rank();
  int failures = 0;
  std::string why;
  const DType t = DType::BF16;
  Buffers b(inBytesOf(c, n, t, count), outBytesOf(c, n, t, count));
  double destroySec = 0;
  {
    auto comm = std::make_unique<Communicator>(boot, dev, sharedGpuOptions(64u << 20, /*checked=*/false));
    boot.barrier();
    if (r == 0) {
      const Status st = launchColl<PAuto>(c, *comm, argsOf(b, count, t), s);
      if (st != Status::Ok) why = std::string("launch: ") + sn::lastError();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (why.empty() && cudaStreamQuery(s) != cudaErrorNotReady) why = "the call finished although its peer never called";
      const auto t0 = Clock::now();
      comm.reset();  // no abort(): the destructor's bound ends the kernel
      destroySec = secondsSince(t0);
      if (why.empty()) why = waitStream(s, 5.0);
      if (why.empty()) why = b.guardIntact();
    }
    boot.barrier();  // rank 0's communicator is gone; the others made no call
  }
  if (why.empty() && destroySec > 3.0)
    why = "destroying the communicator with a waiting kernel took " + std::to_string(destroySec) + " s";
  reportCase(r, ("destroy without abort: rank 1 skips the " + std::string(name(c)) + " call, rank 0 destroys, n=" +
                 std::to_string(n)).c_str(), why, failures);
  return failures;
}

/// Checked mode: rank 0 calls alone; its wait gives up after waitTimeoutUs
/// (by time: 0.2 s, not a poll count); the failure stays: the next call is
/// refused with Timeout without any checkDeviceErrors call (audit 6); the
/// other ranks' next calls end with RemoteError.
int timeoutCase(Bootstrap& boot, int dev, cudaStream_t s) {
  const int n = boot.size(), r = boot.rank();
  int failures = 0;
  std::string why;
  CommOptions o = sharedGpuOptions(64u << 20);
  o.waitTimeoutUs = 200'000;
  const std::size_t count = 4096;
  Buffers b(inBytesOf(Coll::AllReduce, n, DType::F32, count), outBytesOf(Coll::AllReduce, n, DType::F32, count));
  {
    Communicator comm(boot, dev, o);
    if (r == 0) {
      const auto t0 = Clock::now();
      const Status st = launchColl<PAuto>(Coll::AllReduce, comm, argsOf(b, count, DType::F32), s);
      why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 10.0);
      const double sec = secondsSince(t0);
      std::string msg;
      const Status after = comm.asyncError(&msg);
      if (why.empty() && (after != Status::Timeout || msg.find("timed out waiting on") == std::string::npos))
        why = std::string("asyncError: ") + toString(after) + ": " + msg;
      if (why.empty() && (sec < 0.19 || sec > 3.0)) why = "the wait gave up after " + std::to_string(sec) + " s, not ~0.2 s";
      if (why.empty() && launchColl<PAuto>(Coll::AllReduce, comm, argsOf(b, count, DType::F32), s) != Status::Timeout)
        why = std::string("the call after the timeout was not refused: ") + sn::lastError();
    }
    boot.barrier();
    if (r != 0) {
      // Rank 0's FAILED signal is set: this rank's calls give up as soon as
      // a wait spins. (The first may complete: rank 0's timed-out kernel
      // sent its data and call check before it waited, and they are this
      // call's; the next waits on rank 0, whose calls are refused.)
      Status after = Status::Ok;
      std::string msg;
      for (int call = 0; call < 3 && why.empty() && after == Status::Ok; ++call) {
        const Status st = launchColl<PAuto>(Coll::AllReduce, comm, argsOf(b, count, DType::F32), s);
        why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 5.0);
        after = comm.asyncError(&msg);
      }
      if (why.empty() && (after != Status::RemoteError || msg.find("rank 0 failed") == std::string::npos))
        why = std::string("a peer's calls after rank 0 timed out: ") + toString(after) + ": " + msg;
    }
    boot.barrier();
  }
  reportCase(r, ("checked mode: a wait gives up after 0.2 s, the failure stays and reaches the peers, n=" +
                 std::to_string(n)).c_str(), why, failures);
  return failures;
}

/// Deliverable 2 and audit 5: checked mode compares every call across
/// ranks on the device. The last rank's call differs (count, dtype, op or
/// kind; latency and throughput sizes): every rank's call ends with
/// InvalidArgument or RemoteError naming the mismatch, and nothing is
/// written past any rank's output.
struct MismatchCase {
  const char* what;
  Coll c, lastC;
  std::size_t count, lastCount;
  DType t, lastT;
  RedOp op, lastOp;
  /// Rank r's call of n ranks: the last rank's differs.
  struct Call {
    Coll c;
    std::size_t count;
    DType t;
    RedOp op;
  };
  Call of(int r, int n) const { return r == n - 1 ? Call{lastC, lastCount, lastT, lastOp} : Call{c, count, t, op}; }
};

int mismatchCase(Bootstrap& boot, int dev, cudaStream_t s, const MismatchCase& m) {
  const int n = boot.size(), r = boot.rank();
  const auto [c, count, t, op] = m.of(r, n);
  int failures = 0;
  std::string why;
  CommOptions o = sharedGpuOptions(64u << 20);
  o.waitTimeoutUs = 5'000'000;
  Buffers b(inBytesOf(c, n, t, count), outBytesOf(c, n, t, count));
  {
    Communicator comm(boot, dev, o);
    const auto t0 = Clock::now();
    const Status st = launchColl<PAuto>(c, comm, argsOf(b, count, t, op), s);
    why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 10.0);
    const double sec = secondsSince(t0);
    std::string msg;
    const Status after = comm.asyncError(&msg);
    const bool named = (after == Status::InvalidArgument && msg.find("called a different collective") != std::string::npos) ||
                       (after == Status::RemoteError && msg.find("its call differed") != std::string::npos);
    if (why.empty() && !named) why = std::string("asyncError: ") + toString(after) + ": " + msg;
    if (why.empty() && sec > 4.0) why = "the mismatch was found after " + std::to_string(sec) + " s (a timeout, not the check)";
    if (why.empty()) why = b.guardIntact();
    boot.barrier();
  }
  reportCase(r, ("checked mode: the last rank's call differs (" + std::string(m.what) + "), n=" + std::to_string(n)).c_str(),
             why, failures);
  return failures;
}

/// Calls of every unrooted collective on a new unchecked communicator
/// (latency sizes, f32 sum, three rounds), each output compared bitwise
/// with the host reference: "" or the first wrong element.
std::string freshCallsRight(Bootstrap& boot, int dev, cudaStream_t s) {
  const int n = boot.size(), r = boot.rank();
  constexpr std::size_t kCount = 1000;
  std::string why;
  {
    // One allocation for every call, before any: a cudaFree between calls
    // synchronizes the device, which a peer sharing it would wait on.
    Buffers b(std::size_t(n) * kCount * 4, std::size_t(n) * kCount * 4);
    CT_CUDA(cudaDeviceSynchronize());
    Communicator comm(boot, dev, sharedGpuOptions(64u << 20, false));
    uint32_t seed = 40;
    for (int round = 0; round < 3; ++round)
      for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
        ++seed;
        fill(b.in, inElems(c, n, kCount), DType::F32, seed, uint32_t(r), 0, s);
        const Status st = launchColl<PAuto>(c, comm, argsOf(b, kCount, DType::F32), s);
        std::string w = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 10.0);
        if (w.empty())
          w = firstMismatch(DType::F32, b.out, outElems(c, n, kCount), [&](std::size_t i, std::byte* want) {
            expectedElem(c, DType::F32, RedOp::Sum, kCount, n, r, seed, i, want);
            return true;
          });
        if (why.empty() && !w.empty()) why = std::string(name(c)) + " on a new communicator: " + w;
        if (st != Status::Ok) break;  // the peers' call cannot complete; the case fails
      }
    boot.barrier();
  }
  return why;
}

/// Issue 35 item 1: an unchecked call whose ranks disagree (the last rank's
/// count or kind) in the latency program. Every packet group carries its
/// call's epoch and its flow's tag, and its receiver compares them with
/// its own (packet::pollLane): every rank's call ends, with no timeout, in
/// InvalidArgument ("written by another call") or RemoteError; nothing is
/// written past any output; every later call on the communicator, of any
/// collective, is refused on every rank, so no packet group the
/// mismatched call left unread is read as data by a later call; a new
/// communicator's calls of every collective are bitwise right.
int uncheckedMismatchCase(Bootstrap& boot, int dev, cudaStream_t s, const MismatchCase& m) {
  const int n = boot.size(), r = boot.rank();
  const auto [c, count, t, op] = m.of(r, n);
  int failures = 0;
  std::string why;
  bool anyFailed = false;
  {
    Buffers b(inBytesOf(c, n, t, count), outBytesOf(c, n, t, count));
    Buffers lb(std::size_t(n) * 4000, std::size_t(n) * 4000);  // the later calls' (1000 f32 per block)
    Communicator comm(boot, dev, sharedGpuOptions(64u << 20, false));
    const Status st = launchColl<PAuto>(c, comm, argsOf(b, count, t, op), s);
    why = st != Status::Ok ? std::string("launch: ") + sn::lastError() : waitStream(s, 10.0);
    std::string msg;
    const Status after = comm.asyncError(&msg);
    const bool named = (after == Status::InvalidArgument && msg.find("written by another call") != std::string::npos) ||
                       (after == Status::RemoteError && msg.find("its call differed") != std::string::npos);
    if (why.empty() && !named) why = std::string("asyncError: ") + toString(after) + ": " + msg;
    if (why.empty()) why = b.guardIntact();
    for (Coll later : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
      if (!why.empty()) break;
      if (launchColl<PAuto>(later, comm, argsOf(lb, 1000, DType::F32), s) == Status::Ok)
        why = std::string("a later ") + name(later) + " call was launched on the failed communicator";
    }
    // A failure here may leave a kernel waiting (unchecked: no timeout):
    // abort it, so that destruction returns; the ranks agree on going on.
    anyFailed = anyRank(boot, !why.empty());
    if (anyFailed) comm.abort();
  }
  if (!anyFailed) why = freshCallsRight(boot, dev, s);
  reportCase(r, ("unchecked: the last rank's call differs (" + std::string(m.what) + "), n=" + std::to_string(n)).c_str(),
             why, failures);
  return failures;
}

/// Deliverable 7: on a checked communicator an eager call on another stream
/// than the previous one is refused (nothing launched on it). The stream
/// is the rank's own argument, so the refusal fails the communicator on
/// every rank (issue 35 item 4, refusalCase): the next call on the first
/// stream is refused too, with the refusal's reason.
int streamCase(Bootstrap& boot, int dev, cudaStream_t s) {
  const int n = boot.size(), r = boot.rank();
  int failures = 0;
  std::string why;
  cudaStream_t other = nullptr;
  CT_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const std::size_t count = 1024;
  Buffers b(inBytesOf(Coll::AllGather, n, DType::F32, count), outBytesOf(Coll::AllGather, n, DType::F32, count));
  {
    Communicator comm(boot, dev, sharedGpuOptions(64u << 20));
    if (launchColl<PAuto>(Coll::AllGather, comm, argsOf(b, count, DType::F32), s) != Status::Ok)
      why = std::string("first call: ") + sn::lastError();
    if (why.empty()) why = waitStream(s, 10.0);
    if (why.empty()) {
      const Status st = launchColl<PAuto>(Coll::AllGather, comm, argsOf(b, count, DType::F32), other);
      if (st != Status::InvalidArgument || std::string(sn::lastError()).find("stream differs") == std::string::npos)
        why = std::string("a call on another stream: ") + toString(st) + ": " + sn::lastError();
    }
    if (why.empty()) why = waitStream(s, 10.0);
    std::string msg;
    if (why.empty() && (comm.asyncError(&msg) != Status::InvalidArgument || msg.find("refused a call") == std::string::npos))
      why = "after the refusal, asyncError: " + msg;
    if (why.empty() &&
        (launchColl<PAuto>(Coll::AllGather, comm, argsOf(b, count, DType::F32), s) != Status::InvalidArgument ||
         std::string(sn::lastError()).find("stream differs") == std::string::npos))
      why = std::string("the first stream again was not refused with the reason: ") + sn::lastError();
    boot.barrier();
  }
  CT_CUDA(cudaStreamDestroy(other));
  reportCase(r, ("checked mode: an eager call on a second stream is refused, n=" + std::to_string(n)).c_str(), why,
             failures);
  return failures;
}

/// Issue 35 item 4: a call refused on one rank is refused on every rank.
/// Own: the last rank passes a misaligned output (its own argument), the
/// others a correct call. The refusing rank returns InvalidArgument and
/// tells the peers (Communicator::refuseCall): their kernels of the call
/// give up (asyncError RemoteError, "rank L refused a call") instead of
/// waiting, every later call on every rank is refused at once, and nothing
/// is written past any output. Shared: every rank passes an op Purlin does
/// not know (what every rank passes alike), so every rank refuses alike
/// (Unsupported), nothing is told, and the next correct call works.
/// Unchecked and checked, latency and throughput sizes.
int refusalCase(Bootstrap& boot, int dev, cudaStream_t s, Coll c, std::size_t count, bool checked) {
  const int n = boot.size(), r = boot.rank(), last = n - 1;
  int failures = 0;
  std::string why;
  const DType t = DType::F32;
  Buffers b(inBytesOf(c, n, t, count), outBytesOf(c, n, t, count));
  {
    Communicator comm(boot, dev, sharedGpuOptions(64u << 20, checked));
    // Shared: an op no rank's library knows; every rank refuses, none is told.
    sn::CallArgs shared = argsOf(b, count, t);
    shared.op = static_cast<RedOp>(250);
    const Status sharedStatus = launchColl<PAuto>(Coll::AllReduce, comm, shared, s);
    if (sharedStatus != Status::Unsupported)
      why = std::string("an unknown op: ") + toString(sharedStatus) + ": " + sn::lastError();
    if (why.empty() && comm.asyncError() != Status::Ok) why = "the shared refusal failed the communicator";
    boot.barrier();
    // The communicator still works: a correct call on every rank.
    if (why.empty() && launchColl<PAuto>(c, comm, argsOf(b, count, t), s) != Status::Ok)
      why = std::string("the call after the shared refusal: ") + sn::lastError();
    if (why.empty()) why = waitStream(s, 10.0);
    if (why.empty() && comm.asyncError() != Status::Ok) why = "the call after the shared refusal failed";
    boot.barrier();
    // Own: the last rank's output is misaligned.
    if (why.empty()) {
      sn::CallArgs a = argsOf(b, count, t);
      if (r == last) a.out = b.out + 1;
      const Status st = launchColl<PAuto>(c, comm, a, s);
      if (r == last && (st != Status::InvalidArgument || std::string(sn::lastError()).find("aligned") == std::string::npos))
        why = std::string("the misaligned output: ") + toString(st) + ": " + sn::lastError();
      if (r != last && st != Status::Ok) why = std::string("a correct call: ") + sn::lastError();
    }
    // Every rank's stream finishes (the peers' waits on the last rank give up).
    if (why.empty()) why = waitStream(s, 10.0);
    std::string msg;
    const Status after = comm.asyncError(&msg);
    if (why.empty() && r == last && (after != Status::InvalidArgument || msg.find("refused a call") == std::string::npos))
      why = std::string("the refusing rank's asyncError: ") + toString(after) + ": " + msg;
    const std::string refused = "rank " + std::to_string(last) + " refused a call";
    if (why.empty() && r != last && (after != Status::RemoteError || msg.find(refused) == std::string::npos))
      why = std::string("a peer's asyncError: ") + toString(after) + ": " + msg;
    // Every later call is refused at once, on every rank.
    if (why.empty() && launchColl<PAuto>(c, comm, argsOf(b, count, t), s) == Status::Ok)
      why = "a call after the refusal was not refused";
    if (why.empty()) why = b.guardIntact();
    boot.barrier();
  }
  reportCase(r, (std::string(checked ? "checked" : "unchecked") + ": rank " + std::to_string(last) +
                 " refuses its own " + name(c) + " call (count " + std::to_string(count) +
                 "): every rank's call fails, later calls are refused; a refusal of every rank leaves it usable, n=" +
                 std::to_string(n)).c_str(),
             why, failures);
  return failures;
}

int rankMain(Bootstrap& boot, int dev) {
  int failures = 0;
  cudaStream_t s = beginRank(dev);
  failures += abortCase(boot, dev, s, Coll::AllGather, 1000);         // latency program
  failures += abortCase(boot, dev, s, Coll::AllReduce, 1 << 20);      // throughput program
  failures += destroyCase(boot, dev, s, Coll::AllGather, 1000);       // latency program
  failures += destroyCase(boot, dev, s, Coll::AllReduce, 1 << 20);    // throughput program
  failures += timeoutCase(boot, dev, s);
  const MismatchCase cases[] = {
      {"count, latency", Coll::AllReduce, Coll::AllReduce, 1000, 2000, DType::BF16, DType::BF16, RedOp::Sum, RedOp::Sum},
      {"count, throughput", Coll::AllGather, Coll::AllGather, 1 << 20, (1 << 20) + 4096, DType::F32, DType::F32,
       RedOp::Sum, RedOp::Sum},
      {"dtype", Coll::AllReduce, Coll::AllReduce, 4096, 4096, DType::BF16, DType::F32, RedOp::Sum, RedOp::Sum},
      {"op", Coll::ReduceScatter, Coll::ReduceScatter, 4096, 4096, DType::F32, DType::F32, RedOp::Sum, RedOp::Max},
      {"kind", Coll::AllGather, Coll::AllToAll, 4096, 4096, DType::F32, DType::F32, RedOp::Sum, RedOp::Sum},
  };
  for (const MismatchCase& m : cases) failures += mismatchCase(boot, dev, s, m);
  const MismatchCase unchecked[] = {
      {"count, copy", Coll::AllGather, Coll::AllGather, 1000, 1700, DType::F32, DType::F32, RedOp::Sum, RedOp::Sum},
      {"count, reduction", Coll::AllReduce, Coll::AllReduce, 1000, 2000, DType::BF16, DType::BF16, RedOp::Sum,
       RedOp::Sum},
      {"kind", Coll::AllGather, Coll::AllToAll, 1000, 1000, DType::F32, DType::F32, RedOp::Sum, RedOp::Sum},
  };
  for (const MismatchCase& m : unchecked) failures += uncheckedMismatchCase(boot, dev, s, m);
  failures += streamCase(boot, dev, s);
  for (bool checked : {false, true}) {
    failures += refusalCase(boot, dev, s, Coll::AllGather, 1000, checked);     // latency program
    failures += refusalCase(boot, dev, s, Coll::AllReduce, 1 << 20, checked);  // throughput program
  }
  CT_CUDA(cudaStreamDestroy(s));
  return failures;
}

/// The C ABI: purlin_comm_abort from the application, then
/// purlin_comm_async_error says PURLIN_ABORTED on that rank, and
/// purlin_comm_destroy returns.
int capiCase(int n, int gpus) {
  const std::string path = "@purlin-failure-test-" + std::to_string(getpid()) + "-" + std::to_string(n);
  // The job's secret the Unix-socket bootstrap requires (purlin-launch sets
  // one; these ranks are threads of this process).
  ::setenv("PURLIN_BOOTSTRAP_COOKIE", purlin::randomHex(16).c_str(), 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      std::string why;
      purlin_comm_t comm = nullptr;
      purlin_comm_options_t o = purlin_comm_options_default();
      if (o.checked != 0 || o.wait_timeout_us == 0 || o.direct != 1) why = "unexpected default options";
      if (why.empty() && (cudaSetDevice(r % gpus) != cudaSuccess ||
                          purlin_comm_create_unix(path.c_str(), r, n, r % gpus, &o, &comm) != PURLIN_OK))
        why = std::string("create: ") + purlin_last_error();
      if (why.empty() && purlin_comm_async_error(comm) != PURLIN_OK) why = std::string("fresh: ") + purlin_last_error();
      if (why.empty() && r == 0) {
        if (purlin_comm_abort(comm) != PURLIN_OK) why = "abort failed";
        if (why.empty() && (purlin_comm_async_error(comm) != PURLIN_ABORTED ||
                            std::string(purlin_last_error()).find("aborted") == std::string::npos))
          why = std::string("after abort: ") + purlin_last_error();
        if (why.empty() && purlin_comm_check(comm) != PURLIN_ABORTED) why = "purlin_comm_check disagrees";
      }
      if (why.empty() && purlin_comm_abort(nullptr) != PURLIN_INVALID_ARGUMENT) why = "abort(NULL) was not refused";
      if (purlin_comm_destroy(comm) != PURLIN_OK && why.empty()) why = std::string("destroy: ") + purlin_last_error();
      int f = 0;
      reportCase(r, ("C ABI: purlin_comm_abort / purlin_comm_async_error, n=" + std::to_string(n)).c_str(), why, f);
      failures += f;
    });
  for (auto& t : threads) t.join();
  return failures.load();
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> worlds = {2, 3};
  if (!worldsFromArgs(argc, argv, "failure_test", worlds)) return 2;
  // Before CUDA starts: a rank whose call differs (the mismatch cases)
  // launches a kernel no rank launched before, and under lazy loading its
  // load waits for the device, where a peer's kernel spins on this rank
  // (docs/runtime.md "Ranks sharing a GPU"; seen on one H200: the op case
  // at 2 ranks ended by the 5 s timeout instead of the check).
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  // destroyCase: destruction aborts kernels still waiting after 0.3 s.
  setenv("PURLIN_DESTROY_TIMEOUT_MS", "300", 1);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("failure_test: no GPU\n");
    return 2;
  }
  int total = 0;
  for (int n : worlds) {
    const auto t0 = Clock::now();
    const int failures = runOversubscribed(n, gpus, rankMain);
    std::printf("failure_test: %d ranks on %d GPU(s): %d failure(s), %.1f s\n", n, gpus, failures, secondsSince(t0));
    total += failures + capiCase(n, gpus);
  }
  std::printf("failure_test: %s\n", total ? "FAIL" : "PASS");
  return total ? 1 : 0;
}
