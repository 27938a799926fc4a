/// @file vform_test.cu
/// @brief The V collectives (AllGatherV, ReduceScatterV, AllToAllV) as
/// purlinc printed them (generated/), through snac::launch:
///  - default: N ranks as threads of one process on the visible GPUs (rank
///    r on device r mod #GPUs; N = 2, 3, 5, 8 or --ranks N), checked against
///    host references: copies bitwise, ReduceScatterV bitwise equal to the
///    fp32 ascending-rank reduction. Count arrays (AllToAllV: count
///    matrices) with zeros, with one rank contributing everything, one large
///    and many small entries, primes, totals just below and above the
///    latency/throughput crossover, one partition beyond the staging
///    capacity (cyclic slot reuse), all zero; AllToAllV with gaps between
///    its blocks (displacements, received in descending rank order) that
///    stay untouched, and a bound above every count; element-aligned but
///    not 16-byte-aligned pointers; in place; captured graphs replayed with
///    new inputs between replays; the output of a rank with nothing to
///    receive stays untouched; null, overflowing or inconsistent arrays are
///    refused on every rank.
///  - --nccl: one rank per GPU (in-process on two GPUs, or one process per
///    GPU under purlin-launch), each case compared bitwise with NCCL's
///    grouped ncclSend / ncclRecv (AllGatherV, AllToAllV) and grouped
///    ncclReduce, one per partition (ReduceScatterV) (run by the two-GPU
///    issue; compiled in CI).
/// Checked mode bounds every wait, so a hang is reported as a timeout.
///
/// Run: gpu-bin/vform_test [--ranks N] [--nccl]
#include "coll_test_base.cuh"

#include <numeric>

// The generated programs (kernels in purlin_generated), launched with the
// harness's policies.
#include "allgatherv.programs.h"
#include "alltoallv.programs.h"
#include "reducescatterv.programs.h"

using namespace colltest;
using namespace purlin::gen;

namespace {

enum class VColl { AllGatherV, ReduceScatterV, AllToAllV };
const char* name(VColl c) {
  return c == VColl::AllGatherV ? "AllGatherV" : c == VColl::ReduceScatterV ? "ReduceScatterV" : "AllToAllV";
}

template <class P>
Status launchV(VColl c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s) {
  switch (c) {
    case VColl::AllGatherV: return sn::launch<allGatherV_Collective, P, Datapath, allGatherV_Programs>(comm, a, s);
    case VColl::ReduceScatterV:
      return sn::launch<reduceScatterV_Collective, P, Datapath, reduceScatterV_Programs>(comm, a, s);
    case VColl::AllToAllV: return sn::launch<allToAllV_Collective, P, Datapath, allToAllV_Programs>(comm, a, s);
  }
  return Status::Internal;
}

struct Case {
  VColl c;
  DType t;
  RedOp op;
  std::vector<std::size_t> counts;  ///< counts[n], the same on every rank (AllToAllV: unused)
  const char* shape;                ///< what the counts are, for the verdict line
  bool tput = false;     ///< PTput (no latency program)
  bool graph = false;    ///< captured, replayed, refilled, replayed again
  bool inPlace = false;  ///< in == out + displ[rank] (AllGatherV), out == in + displ[rank] (ReduceScatterV)
  bool skew = false;     ///< pointers one element past a 16-byte boundary
  std::vector<std::vector<std::size_t>> m = {};  ///< AllToAllV: m[p][q] elements p sends q
  std::size_t maxCount = 0;                      ///< AllToAllV: the bound (>= every m[p][q])
};

std::size_t total(const Case& k) { return std::accumulate(k.counts.begin(), k.counts.end(), std::size_t(0)); }
std::size_t displ(const Case& k, int p) {
  return std::accumulate(k.counts.begin(), k.counts.begin() + p, std::size_t(0));
}
/// AllToAllV's layout on rank r: blocks to peers in rank order with a gap
/// of 3 elements after each; blocks from peers in descending rank order
/// with a gap of 2 (MPI's displacements, not prefix sums).
constexpr std::size_t kSendGap = 3, kRecvGap = 2;
std::size_t sendDispl(const Case& k, int r, int q) {
  std::size_t d = 0;
  for (int j = 0; j < q; ++j) d += k.m[r][j] + kSendGap;
  return d;
}
std::size_t recvDispl(const Case& k, int r, int p) {
  std::size_t d = 0;
  for (int j = int(k.m.size()) - 1; j > p; --j) d += k.m[j][r] + kRecvGap;
  return d;
}
/// Elements of rank r's input and output.
std::size_t inElems(const Case& k, int r) {
  if (k.c == VColl::AllToAllV) return sendDispl(k, r, int(k.m.size()));
  return k.c == VColl::AllGatherV ? k.counts[r] : total(k);
}
std::size_t outElems(const Case& k, int r) {
  if (k.c == VColl::AllToAllV) return recvDispl(k, r, -1);
  return k.c == VColl::AllGatherV ? total(k) : k.counts[r];
}

/// Rank r's expected output element i (host reference): AllGatherV's
/// element i is rank p's input element i - displ[p]; ReduceScatterV's the
/// ascending-rank fp32 reduction of element displ[r] + i of every input;
/// AllToAllV's block from p is p's block to r; its gaps keep the 0xCD
/// sentinel (false: element i is a gap).
bool expected(const Case& k, int n, int r, uint32_t seed, std::size_t i, std::byte* want) {
  if (k.c == VColl::AllToAllV) {
    for (int p = 0; p < n; ++p) {
      const std::size_t at = recvDispl(k, r, p);
      if (i >= at && i < at + k.m[p][r]) {
        fromFloat(k.t, inputValue(seed, uint32_t(p), sendDispl(k, p, r) + (i - at)), want);
        return true;
      }
    }
    std::memset(want, 0xCD, 4);
    return false;
  }
  if (k.c == VColl::AllGatherV) {
    int p = 0;
    while (i >= displ(k, p + 1)) ++p;
    fromFloat(k.t, inputValue(seed, uint32_t(p), i - displ(k, p)), want);
    return true;
  }
  const std::size_t j = displ(k, r) + i;
  float acc = inputValue(seed, 0, j);
  for (int p = 1; p < n; ++p) acc = hostOp(k.op, acc, inputValue(seed, uint32_t(p), j));
  fromFloat(k.t, acc, want);
  return true;
}

/// The count arrays for n ranks (elements; bf16 unless a case says otherwise).
struct Shape {
  const char* what;
  std::vector<std::size_t> counts;
};
std::vector<Shape> shapes(int n) {
  std::vector<Shape> s;
  auto fill = [&](const char* what, auto f) {
    std::vector<std::size_t> c(n);
    for (int p = 0; p < n; ++p) c[p] = f(p);
    s.push_back({what, c});
  };
  static const std::size_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31};
  fill("zeros between", [](int p) { return p % 2 ? std::size_t(1000 + 37 * p) : std::size_t(0); });
  fill("one rank only", [n](int p) { return p == n - 1 ? std::size_t(5003) : std::size_t(0); });
  fill("first rank only", [](int p) { return p == 0 ? std::size_t(1) : std::size_t(0); });
  fill("one large, many small", [](int p) { return p == 0 ? std::size_t(300007) : std::size_t(3 * p + 1); });
  fill("primes", [](int p) { return primes[p]; });
  fill("all ones", [](int) { return std::size_t(1); });
  fill("all zero", [](int) { return std::size_t(0); });
  // PAuto's crossover: 256 KiB messages for n > 2, 512 KiB for n = 2 (bf16:
  // half as many elements); the total exactly at it (latency) and one
  // element above (throughput).
  const std::size_t cross = (n == 2 ? 512u : 256u) << 10, elems = cross / 2;
  for (std::size_t extra : {std::size_t(0), std::size_t(1)}) {
    std::vector<std::size_t> c(n, elems / std::size_t(n));
    c[0] += elems - c[0] * std::size_t(n) + extra;
    s.push_back({extra ? "crossover + 1" : "at the crossover", c});
  }
  // One partition beyond the 4 MiB staging half of rankMain: cyclic slots.
  fill("one beyond the staging", [n](int p) { return p == 1 % n ? (std::size_t(3) << 20) + 11 : std::size_t(5 + p); });
  return s;
}

/// AllToAllV's count matrices for n ranks, and their bound.
struct Matrix {
  const char* what;
  std::vector<std::vector<std::size_t>> m;
  std::size_t maxCount;
};
std::vector<Matrix> matrices(int n) {
  std::vector<Matrix> s;
  auto make = [&](const char* what, auto f, std::size_t bound = 0) {
    std::vector<std::vector<std::size_t>> m(n, std::vector<std::size_t>(n));
    std::size_t most = 0;
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) most = std::max(most, m[p][q] = f(p, q));
    s.push_back({what, m, std::max(bound, most)});
  };
  static const std::size_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31};
  make("zeros between", [](int p, int q) { return (p + q) % 3 == 0 ? std::size_t(0) : std::size_t(100 + 7 * p + q); });
  make("one sender", [n](int p, int q) { return p == n - 1 ? std::size_t(4099 + q) : std::size_t(0); });
  make("rotated skew", [n](int p, int q) { return std::size_t(64) * std::size_t(1 + (q - p - 1 + 2 * n) % n); });
  make("primes", [](int p, int q) { return primes[(p + q) % 8]; });
  make("all zero, bound 5", [](int, int) { return std::size_t(0); }, 5);
  make("small counts, bound 200000", [](int p, int q) { return std::size_t(1 + p + 2 * q); }, 200000);
  // PAuto's crossover: n*maxCount*E at it (latency) and one element above.
  const std::size_t cross = (n == 2 ? 512u : 256u) << 10;
  const std::size_t at = cross / 2 / std::size_t(n);
  make("at the crossover", [at](int p, int q) { return (p + q) % 2 ? at : at / 3; }, at);
  make("crossover + 1", [at](int p, int q) { return (p + q) % 2 ? at + 1 : at / 3; });
  make("one beyond the staging", [n](int p, int q) {
    return p == 0 && q == 1 % n ? (std::size_t(3) << 20) + 11 : std::size_t(5 + p + q);
  });
  return s;
}

std::vector<Case> cases(int n) {
  std::vector<Case> cs;
  for (const Matrix& mx : matrices(n))
    for (bool tput : {false, true}) {
      Case k{VColl::AllToAllV, DType::BF16, RedOp::Sum, {}, mx.what, tput};
      k.m = mx.m;
      k.maxCount = mx.maxCount;
      cs.push_back(k);
    }
  {
    const std::vector<Matrix> mx = matrices(n);
    for (int v = 0; v < 3; ++v) {
      // graph (latency), graph (throughput), skewed
      Case k{VColl::AllToAllV, v == 1 ? DType::F16 : DType::F32, RedOp::Sum, {}, mx[v].what, v == 1, v < 2, false, v == 2};
      k.m = mx[v].m;
      k.maxCount = mx[v].maxCount;
      cs.push_back(k);
    }
  }
  for (VColl c : {VColl::AllGatherV, VColl::ReduceScatterV}) {
    for (const Shape& sh : shapes(n)) {
      cs.push_back({c, DType::BF16, RedOp::Sum, sh.counts, sh.what});
      cs.push_back({c, DType::BF16, RedOp::Sum, sh.counts, sh.what, true});
    }
    const std::vector<Shape> s = shapes(n);
    cs.push_back({c, DType::F32, RedOp::Max, s[0].counts, s[0].what, false, true});          // graph, latency
    cs.push_back({c, DType::F16, RedOp::Min, s[3].counts, s[3].what, true, true});           // graph, throughput
    cs.push_back({c, DType::BF16, RedOp::Sum, s[4].counts, s[4].what, false, false, false, true});  // skewed
    cs.push_back({c, DType::BF16, RedOp::Sum, s[3].counts, s[3].what, true, false, false, true});
    cs.push_back({c, DType::BF16, RedOp::Sum, s[0].counts, s[0].what, false, false, true});  // in place
    cs.push_back({c, DType::F32, RedOp::Sum, s[3].counts, s[3].what, true, true, true});
  }
  return cs;
}

/// Rank r's count and displacement arrays of an AllToAllV case (its row
/// and column of the matrix) and the CallArgs that point at them.
struct A2AArrays {
  std::vector<std::size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};
void setSizes(const Case& k, int n, int r, A2AArrays& v, sn::CallArgs& a) {
  if (k.c != VColl::AllToAllV) {
    a.counts = k.counts.data();
    return;
  }
  for (int q = 0; q < n; ++q) {
    v.sendCounts.push_back(k.m[r][q]);
    v.sendDispls.push_back(sendDispl(k, r, q));
    v.recvCounts.push_back(k.m[q][r]);
    v.recvDispls.push_back(recvDispl(k, r, q));
  }
  a.sendCounts = v.sendCounts.data();
  a.sendDispls = v.sendDispls.data();
  a.recvCounts = v.recvCounts.data();
  a.recvDispls = v.recvDispls.data();
  a.maxCount = k.maxCount;
}

/// One call of case k (graph: captured, replayed; the caller refills and
/// replays again through `exec`).
template <class P>
Status runCall(const Case& k, Communicator& comm, const sn::CallArgs& a, cudaStream_t s, cudaGraphExec_t* exec) {
  return launchOrCapture(k.graph, s, exec, [&] { return launchV<P>(k.c, comm, a, s); });
}

/// Compares rank r's output with the reference; "" or the first mismatch.
std::string check(const Case& k, int n, int r, uint32_t seed, const std::byte* out, std::size_t outE) {
  return firstMismatch(k.t, out, outE, [&](std::size_t i, std::byte* want) { return expected(k, n, r, seed, i, want); });
}

/// Bad count arrays: refused with InvalidArgument and a message naming the
/// problem, on every rank (all ranks pass the same array), nothing launched.
int badCounts(Communicator& comm, int n, int r, cudaStream_t s) {
  int failures = 0;
  std::vector<std::size_t> huge(n, 4);
  huge[n - 1] = std::size_t(-1);  // a negative count as size_t
  std::vector<std::size_t> sum(n, std::size_t(3) << 37);  // each fits 2^40 bytes (bf16), the sum of two does not
  struct Bad {
    const std::size_t* counts;
    std::string message;
  } bad[] = {{nullptr, "counts is null"},
             {huge.data(), "counts[" + std::to_string(n - 1) + "] = " + std::to_string(std::size_t(-1)) + " too large"},
             {sum.data(), "the counts add up to too many elements"}};
  for (VColl c : {VColl::AllGatherV, VColl::ReduceScatterV})
    for (const Bad& b : bad) {
      sn::CallArgs a;
      a.in = a.out = reinterpret_cast<void*>(uintptr_t(1) << 40);  // never dereferenced: the plan refuses first
      a.counts = b.counts;
      a.dtype = DType::BF16;
      const Status st = launchV<PAuto>(c, comm, a, s);
      const std::string msg = sn::lastError();
      if (st != Status::InvalidArgument || msg.find(b.message) == std::string::npos) {
        ++failures;
        std::printf("FAIL rank %d: %s bad counts (%s): status %d, '%s'\n", r, name(c), b.message.c_str(), int(st),
                    msg.c_str());
      }
    }
  return failures;
}

/// AllToAllV's bad arrays (a null array; a count above the bound), on every
/// rank here: they are each rank's own arguments (its rows), so the refusal
/// also fails the communicator on every rank (docs/runtime.md "A refusal on
/// one rank"): one communicator per case, and its next call is refused.
int badPairArrays(Bootstrap& boot, int dev, const CommOptions& o, cudaStream_t s) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  std::vector<std::size_t> five(n, 5), displs(n);
  for (int q = 0; q < n; ++q) displs[q] = 5 * std::size_t(q);
  for (int v = 0; v < 2; ++v) {
    Communicator comm(boot, dev, o);
    sn::CallArgs a;
    a.in = a.out = nullptr;
    a.sendCounts = five.data(), a.sendDispls = displs.data(), a.recvCounts = five.data();
    a.recvDispls = v == 0 ? nullptr : displs.data();
    a.maxCount = 4;
    a.dtype = DType::BF16;
    const Status st = launchV<PAuto>(VColl::AllToAllV, comm, a, s);
    const std::string msg = sn::lastError(), want = v == 0 ? "must not be null" : "sendCounts[0] = 5 exceeds maxCount 4";
    if (st != Status::InvalidArgument || msg.find(want) == std::string::npos) {
      ++failures;
      std::printf("FAIL rank %d: AllToAllV bad arrays (%s): status %d, '%s'\n", r, want.c_str(), int(st), msg.c_str());
    }
    CT_CUDA(cudaStreamSynchronize(s));
    std::string why;
    if (comm.asyncError(&why) != Status::InvalidArgument || why.find("refused a call") == std::string::npos) {
      ++failures;
      std::printf("FAIL rank %d: AllToAllV bad arrays (%s): the communicator did not fail: '%s'\n", r, want.c_str(),
                  why.c_str());
    }
    boot.barrier();
  }
  return failures;
}

/// Checked mode, AllToAllV whose two ends of one flow disagree (issue 35
/// item 2): rank n-1 sends rank 0 four elements, rank 0 expects three;
/// every array is valid on its own rank. The call check compares rank r's
/// sendCounts[q] with rank q's recvCounts[r] and the other way round
/// (callCheckFor): both ends, ranks 0 and n-1, fail the call at the check
/// (InvalidArgument naming the mismatch, or RemoteError), not by the wait
/// timeout, and tell every rank; a rank whose flows all agree may complete
/// the call (its data arrived), but the communicator has failed: the next
/// call fails on every rank. Nothing is written past any rank's output.
/// (With the sender's side unchecked, rank n-1 completed the call on one
/// H200 at 5 ranks.)
int pairCountMismatch(Bootstrap& boot, int dev, cudaStream_t s) {
  int failures = 0;
  const int n = boot.size(), r = boot.rank();
  CommOptions o = sharedGpuOptions(4u << 20);
  o.waitTimeoutUs = 5'000'000;
  constexpr std::size_t kGuardBytes = 4096;
  std::vector<std::size_t> sendCounts(n, 4), recvCounts(n, 4), displs(n);
  for (int q = 0; q < n; ++q) displs[q] = 4 * std::size_t(q);
  if (r == 0) recvCounts[n - 1] = 3;
  std::byte *in = nullptr, *out = nullptr;
  CT_CUDA(cudaMalloc(&in, 4 * n * 2));
  CT_CUDA(cudaMalloc(&out, 4 * n * 2 + kGuardBytes));
  CT_CUDA(cudaMemset(in, 1, 4 * n * 2));
  CT_CUDA(cudaMemset(out, 0xA5, 4 * n * 2 + kGuardBytes));
  std::string why;
  {
    Communicator comm(boot, dev, o);
    sn::CallArgs a;
    a.in = in;
    a.out = out;
    a.sendCounts = sendCounts.data(), a.sendDispls = displs.data();
    a.recvCounts = recvCounts.data(), a.recvDispls = displs.data();
    a.maxCount = 4;
    a.dtype = DType::BF16;
    const auto t0 = std::chrono::steady_clock::now();
    if (launchV<PAuto>(VColl::AllToAllV, comm, a, s) != Status::Ok) why = std::string("launch: ") + sn::lastError();
    if (why.empty() && cudaStreamSynchronize(s) != cudaSuccess) why = "the stream failed";
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string msg;
    Status after = comm.asyncError(&msg);
    const auto named = [&] {
      return (after == Status::InvalidArgument && msg.find("called a different collective") != std::string::npos) ||
             (after == Status::RemoteError && msg.find("its call differed") != std::string::npos);
    };
    const bool paired = r == 0 || r == n - 1;  // the two ends of the disagreeing flow
    if (why.empty() && paired && !named()) why = std::string("asyncError: ") + toString(after) + ": " + msg;
    if (why.empty() && sec > 4.0) why = "found after " + std::to_string(sec) + " s (a timeout, not the check)";
    boot.barrier();
    // The next (correct) call fails on every rank: refused at once, or its waits give up.
    if (why.empty()) {
      recvCounts[n - 1] = 4;
      if (launchV<PAuto>(VColl::AllToAllV, comm, a, s) == Status::Ok) (void)cudaStreamSynchronize(s);
      after = comm.asyncError(&msg);
      if (!named()) why = std::string("after the next call, asyncError: ") + toString(after) + ": " + msg;
    }
    std::vector<unsigned char> guard(kGuardBytes);
    CT_CUDA(cudaMemcpy(guard.data(), out + 4 * n * 2, kGuardBytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuardBytes && why.empty(); ++i)
      if (guard[i] != 0xA5) why = "byte " + std::to_string(i) + " past the output was written";
    boot.barrier();
  }
  if (!why.empty()) {
    ++failures;
    std::printf("FAIL rank %d: checked AllToAllV, rank %d sends rank 0 more than rank 0 expects: %s\n", r, n - 1,
                why.c_str());
  } else if (r == 0) {
    std::printf("PASS checked AllToAllV: the two ends of a flow disagree on its count, every rank fails at the check, n=%d\n", n);
  }
  cudaFree(in);
  cudaFree(out);
  return failures;
}

/// One rank's run of every case; returns its failures.
int rankMain(Bootstrap& boot, int dev) {
  int failures = 0;
  cudaStream_t s = beginRank(dev);
  const CommOptions o = sharedGpuOptions(4u << 20);  // the large cases reuse slots
  const int n = boot.size(), r = boot.rank();
  constexpr std::size_t kSentinelBytes = 256;
  {
    Communicator comm(boot, dev, o);
    failures += badCounts(comm, n, r, s);
    failures += badPairArrays(boot, dev, o, s);
    failures += pairCountMismatch(boot, dev, s);
    uint32_t seed = 17;
    for (const Case& k : cases(n)) {
      seed += 2;
      const std::size_t E = dtypeSize(k.t), inE = inElems(k, r), outE = outElems(k, r);
      const std::size_t skew = k.skew ? E : 0, own = k.c == VColl::AllToAllV ? 0 : displ(k, r) * E;  // in place: its block
      boot.barrier();  // cudaMalloc / cudaFree meet first: ranks share the GPU (docs/runtime.md)
      std::byte *inBase = nullptr, *outBase = nullptr, *in = nullptr, *out = nullptr;
      const std::size_t outAlloc = (outE ? outE * E : kSentinelBytes) + 16, inAlloc = inE * E + 16;
      if (k.inPlace && k.c == VColl::ReduceScatterV) {
        // out is this rank's own partition of in.
        CT_CUDA(cudaMalloc(&inBase, inAlloc + kSentinelBytes));
        in = inBase + skew;
        out = in + own;
      } else {
        CT_CUDA(cudaMalloc(&outBase, outAlloc));
        out = outBase + skew;
        if (k.inPlace) {
          in = out + own;  // AllGatherV: the input is this rank's block of out
        } else if (inE) {
          CT_CUDA(cudaMalloc(&inBase, inAlloc));
          in = inBase + skew;
        }  // else: nothing to send, a null input
      }
      boot.barrier();
      if (!(k.inPlace && k.c == VColl::ReduceScatterV))
        CT_CUDA(cudaMemsetAsync(out, 0xCD, outE ? outE * E : kSentinelBytes, s));
      fill(in, inE, k.t, seed, uint32_t(r), 0, s);
      CT_CUDA(cudaStreamSynchronize(s));
      boot.barrier();  // every rank's set-up before any launch (lazy loading: docs/runtime.md)
      sn::CallArgs a;
      a.in = in;
      a.out = out;
      A2AArrays arrays;
      setSizes(k, n, r, arrays, a);
      a.dtype = k.t;
      a.op = k.op;
      cudaGraphExec_t exec = nullptr;
      Status st = k.tput ? runCall<PTput>(k, comm, a, s, &exec) : runCall<PAuto>(k, comm, a, s, &exec);
      CT_CUDA(cudaStreamSynchronize(s));
      std::string why;
      if (st != Status::Ok) why = std::string("launch: ") + sn::lastError();
      try {
        comm.checkDeviceErrors();
      } catch (const Error& e) {
        why = e.what();
      }
      if (why.empty()) why = check(k, n, r, seed, out, outE);
      if (why.empty() && !outE && outBase) {
        // A rank that receives nothing: its output stays untouched.
        std::vector<unsigned char> got(kSentinelBytes);
        CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
        for (unsigned char b : got)
          if (b != 0xCD) why = "the output of a rank with nothing to receive was written";
      }
      if (exec && anyRank(boot, !why.empty())) {  // every rank replays, or none
        cudaGraphExecDestroy(exec);
        exec = nullptr;
      }
      if (why.empty() && exec) {
        boot.barrier();
        fill(in, inE, k.t, seed + 1, uint32_t(r), 0, s);  // new inputs: the replay reads them
        CT_CUDA(cudaStreamSynchronize(s));
        boot.barrier();
        CT_CUDA(cudaGraphLaunch(exec, s));
        CT_CUDA(cudaStreamSynchronize(s));
        try {
          comm.checkDeviceErrors();
        } catch (const Error& e) {
          why = e.what();
        }
        if (why.empty()) {
          why = check(k, n, r, seed + 1, out, outE);
          if (!why.empty()) why = "replay with new inputs: " + why;
        }
      }
      if (exec) cudaGraphExecDestroy(exec);
      boot.barrier();
      cudaFree(inBase);
      cudaFree(outBase);
      char b[240];
      std::snprintf(b, sizeof b, "%s %s/%s counts(%s, %s %zu)%s%s%s%s n=%d", name(k.c), toString(k.t),
                    k.c == VColl::ReduceScatterV ? toString(k.op) : "copy", k.shape,
                    k.c == VColl::AllToAllV ? "maxCount" : "total", k.c == VColl::AllToAllV ? k.maxCount : total(k),
                    k.tput ? " throughput-policy" : "", k.graph ? " graph(replayed, refilled)" : "",
                    k.inPlace ? " in-place" : "", k.skew ? " skewed" : "", n);
      reportCase(r, b, why, failures);
      boot.barrier();
      if (anyRank(boot, !comm.broken().empty())) break;  // a timeout anywhere: the epochs no longer agree
    }
    boot.barrier();
  }
  cudaStreamDestroy(s);
  return failures;
}

/// NCCL's result of case k on rank R: grouped send/recv (AllGatherV, AllToAllV),
/// grouped ncclReduce of every partition onto its rank (ReduceScatterV).
void ncclCall(const Case& k, Rank& R, const std::byte* in, std::byte* out) {
  const ncclDataType_t t = ncclType(k.t);
  const std::size_t E = dtypeSize(k.t);
  ncclGroupStart();
  for (int p = 0; p < R.n; ++p) {
    if (k.c == VColl::AllToAllV) {
      ncclSend(in + sendDispl(k, R.rank, p) * E, k.m[R.rank][p], t, p, R.nccl, R.stream);
      ncclRecv(out + recvDispl(k, R.rank, p) * E, k.m[p][R.rank], t, p, R.nccl, R.stream);
    } else if (k.c == VColl::AllGatherV) {
      ncclSend(in, k.counts[R.rank], t, p, R.nccl, R.stream);
      ncclRecv(out + displ(k, p) * E, k.counts[p], t, p, R.nccl, R.stream);
    } else {
      ncclReduce(in + displ(k, p) * E, out, k.counts[p], t, ncclOp(k.op), p, R.nccl, R.stream);
    }
  }
  const ncclResult_t res = ncclGroupEnd();
  if (res != ncclSuccess) throw std::runtime_error(std::string("NCCL: ") + ncclGetErrorString(res));
}

/// --nccl: every case (out of place, aligned) on one rank per GPU, Purlin's
/// output compared bitwise with NCCL's.
void ncclBody(Rank& R) {
  CommOptions o;
  o.stagingHalfBytes = 4u << 20;
  o.checked = true;
  Communicator comm(*R.boot, R.dev, o);
  setTransfer(false);
  uint32_t seed = 5;
  for (const Case& k : cases(R.n)) {
    if (k.inPlace || k.skew) continue;
    seed += 2;
    const std::size_t E = dtypeSize(k.t), inE = inElems(k, R.rank), outE = outElems(k, R.rank);
    std::byte *in = nullptr, *ours = nullptr, *theirs = nullptr;
    CT_CUDA(cudaMalloc(&in, inE * E + 16));
    CT_CUDA(cudaMalloc(&ours, outE * E + 16));
    CT_CUDA(cudaMalloc(&theirs, outE * E + 16));
    CT_CUDA(cudaMemsetAsync(ours, 0xCD, outE * E + 16, R.stream));  // AllToAllV's gaps: equal on both
    CT_CUDA(cudaMemsetAsync(theirs, 0xCD, outE * E + 16, R.stream));
    fill(in, inE, k.t, seed, uint32_t(R.rank), 0, R.stream);
    sn::CallArgs a;
    a.in = in;
    a.out = ours;
    A2AArrays arrays;
    setSizes(k, R.n, R.rank, arrays, a);
    a.dtype = k.t;
    a.op = k.op;
    const Status st = k.tput ? launchV<PTput>(k.c, comm, a, R.stream) : launchV<PAuto>(k.c, comm, a, R.stream);
    ncclCall(k, R, in, theirs);
    CT_CUDA(cudaStreamSynchronize(R.stream));
    std::vector<std::byte> x(outE * E), y(outE * E);
    if (outE) {
      CT_CUDA(cudaMemcpy(x.data(), ours, x.size(), cudaMemcpyDeviceToHost));
      CT_CUDA(cudaMemcpy(y.data(), theirs, y.size(), cudaMemcpyDeviceToHost));
    }
    const bool same = st == Status::Ok && x == y;
    if (!same) {
      R.fail();
      std::printf("FAIL rank %d: %s counts(%s): %s\n", R.rank, name(k.c), k.shape,
                  st != Status::Ok ? sn::lastError() : "differs from NCCL");
    } else if (R.rank == 0 && R.verbose) {
      std::printf("PASS %s %s counts(%s, total %zu) (= NCCL)\n", name(k.c), toString(k.t), k.shape, total(k));
    }
    cudaFree(in);
    cudaFree(ours);
    cudaFree(theirs);
  }
}

} // namespace

int main(int argc, char** argv) { return sharedGpuMain(argc, argv, "vform_test", {2, 3, 5, 8}, rankMain, ncclBody); }
