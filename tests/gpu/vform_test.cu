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
#include "vform_cases.cuh"

using namespace colltest;
using namespace purlin::gen;
using namespace vcases;

namespace {

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
