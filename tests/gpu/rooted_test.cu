/// @file rooted_test.cu
/// @brief The rooted collectives (Broadcast, Reduce, Scatter, Gather) as
/// purlinc printed them (generated/), through snac::launch:
///  - default: N ranks as threads of one process on the visible GPUs (rank
///    r on device r mod #GPUs; N = 2, 3, 5, 8 or --ranks N), checked against
///    host references: copies bitwise, Reduce bitwise equal to the fp32
///    ascending-rank reduction. Every root; counts 0, 1, odd, prime, around
///    the latency/throughput crossover, beyond the staging capacity (cyclic
///    slot reuse); element-aligned but not 16-byte-aligned pointers; in
///    place; captured graphs replayed with new inputs between replays; the
///    buffers a non-root does not use are null (input) or must stay
///    untouched (output); a bad root is refused on every rank.
///  - --nccl: one rank per GPU (in-process on two GPUs, or one process per
///    GPU under purlin-launch), each case compared bitwise with NCCL's
///    ncclBroadcast / ncclReduce and grouped ncclSend / ncclRecv for
///    Scatter and Gather (run by the two-GPU issue; compiled in CI).
/// Checked mode bounds every wait, so a hang is reported as a timeout.
///
/// Run: gpu-bin/rooted_test [--ranks N] [--nccl]
#include "coll_test_base.cuh"


// The generated programs (kernels in purlin_generated), launched with the
// harness's policies.
#include "broadcast.programs.h"
#include "gather.programs.h"
#include "reduce.programs.h"
#include "scatter.programs.h"

using namespace colltest;
using namespace purlin::gen;

namespace {

enum class Rooted { Broadcast, Reduce, Scatter, Gather };
const char* name(Rooted c) {
  static const char* n[] = {"Broadcast", "Reduce", "Scatter", "Gather"};
  return n[int(c)];
}

template <class P>
Status launchRooted(Rooted c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s) {
  switch (c) {
    case Rooted::Broadcast: return sn::launch<broadcast_Collective, P, Datapath, broadcast_Programs>(comm, a, s);
    case Rooted::Reduce: return sn::launch<reduce_Collective, P, Datapath, reduce_Programs>(comm, a, s);
    case Rooted::Scatter: return sn::launch<scatter_Collective, P, Datapath, scatter_Programs>(comm, a, s);
    case Rooted::Gather: return sn::launch<gather_Collective, P, Datapath, gather_Programs>(comm, a, s);
  }
  return Status::Internal;
}

struct Case {
  Rooted c;
  DType t;
  RedOp op;
  std::size_t count;
  int root;
  bool tput = false;     ///< PTput (no latency program)
  bool graph = false;    ///< captured, replayed, refilled, replayed again
  bool inPlace = false;  ///< NCCL's / MPI's in-place form
  bool skew = false;     ///< pointers one element past a 16-byte boundary
};

/// Elements of rank r's input and output (0 = the buffer is not used).
std::size_t inElems(const Case& k, int n, int r) {
  switch (k.c) {
    case Rooted::Broadcast: return r == k.root ? k.count : 0;
    case Rooted::Reduce: case Rooted::Gather: return k.count;
    case Rooted::Scatter: return r == k.root ? std::size_t(n) * k.count : 0;
  }
  return 0;
}
std::size_t outElems(const Case& k, int n, int r) {
  switch (k.c) {
    case Rooted::Broadcast: case Rooted::Scatter: return k.count;
    case Rooted::Reduce: return r == k.root ? k.count : 0;
    case Rooted::Gather: return r == k.root ? std::size_t(n) * k.count : 0;
  }
  return 0;
}

/// Rank r's expected output element i (host reference).
void expected(const Case& k, int n, int r, uint32_t seed, std::size_t i, std::byte* want) {
  switch (k.c) {
    case Rooted::Broadcast: fromFloat(k.t, inputValue(seed, uint32_t(k.root), i), want); return;
    case Rooted::Scatter: fromFloat(k.t, inputValue(seed, uint32_t(k.root), std::size_t(r) * k.count + i), want); return;
    case Rooted::Gather: fromFloat(k.t, inputValue(seed, uint32_t(i / k.count), i % k.count), want); return;
    case Rooted::Reduce: {
      float acc = inputValue(seed, 0, i);
      for (int p = 1; p < n; ++p) acc = hostOp(k.op, acc, inputValue(seed, uint32_t(p), i));
      fromFloat(k.t, acc, want);
      return;
    }
  }
}

std::vector<Case> cases(int n) {
  std::vector<Case> cs;
  const Rooted all[] = {Rooted::Broadcast, Rooted::Reduce, Rooted::Scatter, Rooted::Gather};
  // Every root: a latency call, a throughput call, a captured one.
  for (int root = 0; root < n; ++root)
    for (Rooted c : all) {
      cs.push_back({c, DType::BF16, RedOp::Sum, 1021, root});
      cs.push_back({c, DType::BF16, RedOp::Sum, 70001, root, true});
      cs.push_back({c, DType::F32, RedOp::Max, 4099, root, false, true});
    }
  // The sweep, at the last root: 0, 1, odd, prime; around the crossover of
  // PAuto (256 KiB messages for n > 2, 512 KiB for n = 2: Broadcast/Reduce
  // message = count*E, Scatter/Gather = n*count*E); beyond the staging
  // capacity (rankMain's 4 MiB halves); skewed pointers; in place.
  const int root = n - 1;
  const std::size_t cross = (n == 2 ? 512u : 256u) << 10;
  for (Rooted c : all) {
    const std::size_t per = c == Rooted::Broadcast || c == Rooted::Reduce ? 2 : 2 * std::size_t(n);  // bytes per count
    for (std::size_t cnt : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(65537), cross / per,
                            cross / per + 1, (std::size_t(3) << 20) + 11})
      cs.push_back({c, DType::BF16, RedOp::Sum, cnt, root});
    cs.push_back({c, DType::F16, RedOp::Min, 300007, root, true});
    cs.push_back({c, DType::BF16, RedOp::Sum, 12345, root, false, false, false, true});
    cs.push_back({c, DType::BF16, RedOp::Sum, 200003, root, true, false, false, true});
    cs.push_back({c, DType::BF16, RedOp::Sum, 4097, root, false, false, true});
    cs.push_back({c, DType::F32, RedOp::Sum, 100003, root, true, true, true});
  }
  return cs;
}

/// One call of case k (graph: captured, replayed; the caller refills and
/// replays again through `exec`).
template <class P>
Status runCall(const Case& k, Communicator& comm, const sn::CallArgs& a, cudaStream_t s, cudaGraphExec_t* exec) {
  return launchOrCapture(k.graph, s, exec, [&] { return launchRooted<P>(k.c, comm, a, s); });
}

/// Compares rank r's output with the reference; "" or the first mismatch.
std::string check(const Case& k, int n, int r, uint32_t seed, const std::byte* out, std::size_t outE) {
  return firstMismatch(k.t, out, outE, [&](std::size_t i, std::byte* want) {
    expected(k, n, r, seed, i, want);
    return true;
  });
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
    uint32_t seed = 11;
    // A root out of range: refused on every rank, nothing launched.
    for (int bad : {-1, n}) {
      sn::CallArgs a;
      a.count = 16;
      a.root = bad;
      a.dtype = DType::BF16;
      const Status st = launchRooted<PAuto>(Rooted::Broadcast, comm, a, s);
      const std::string msg = sn::lastError();
      if (st != Status::InvalidArgument || msg.find("root " + std::to_string(bad) + " out of range") == std::string::npos) {
        ++failures;
        std::printf("FAIL rank %d: root %d: status %d, '%s'\n", r, bad, int(st), msg.c_str());
      }
    }
    for (const Case& k : cases(n)) {
      seed += 2;
      const std::size_t E = dtypeSize(k.t), inE = inElems(k, n, r), outE = outElems(k, n, r);
      const std::size_t skew = k.skew ? E : 0;
      // Collective calls of device-wide effect (cudaMalloc, cudaFree) meet
      // first: ranks share the GPU (docs/runtime.md).
      boot.barrier();
      std::byte *inBase = nullptr, *outBase = nullptr;
      const std::size_t outAlloc = (outE ? outE * E : kSentinelBytes) + 16, inAlloc = inE * E + 16;
      CT_CUDA(cudaMalloc(&outBase, outAlloc));
      if (!k.inPlace && inE) CT_CUDA(cudaMalloc(&inBase, inAlloc));
      std::byte* out = outBase + skew;
      std::byte* in = inE == 0 ? nullptr : inBase + skew;  // a non-root's unused input: null
      if (k.inPlace && inE) {
        // Broadcast / Reduce: in == out; Gather: the root's block of out;
        // Scatter: the root's out is its own block of in; elsewhere apart.
        if (k.c == Rooted::Gather && r == k.root) in = out + std::size_t(r) * k.count * E;
        else if (k.c == Rooted::Scatter && r == k.root) {
          cudaFree(outBase);
          CT_CUDA(cudaMalloc(&inBase, inAlloc));
          in = inBase + skew;
          outBase = nullptr;
          out = in + std::size_t(r) * k.count * E;
        } else if ((k.c == Rooted::Broadcast || k.c == Rooted::Reduce) && outE) in = out;
        else {
          CT_CUDA(cudaMalloc(&inBase, inAlloc));
          in = inBase + skew;
        }
      }
      boot.barrier();
      CT_CUDA(cudaMemsetAsync(out, 0xCD, outE ? outE * E : kSentinelBytes, s));
      fill(in, inE, k.t, seed, uint32_t(r), 0, s);
      CT_CUDA(cudaStreamSynchronize(s));
      // Every rank's set-up is done before any launches: a rank's first
      // launch of a kernel (here the fill, which only ranks with an input
      // run) loads it lazily (CUDA_MODULE_LOADING=LAZY, the default), and a
      // load waits for the kernels running on the device: a peer's
      // collective spinning on this rank (measured: the first Broadcast
      // hung in 5 of 10 runs without this barrier, 0 of 10 with EAGER).
      boot.barrier();
      sn::CallArgs a;
      a.in = in;
      a.out = out;  // a non-root's unused output (Reduce, Gather): a sentinel that must stay untouched
      a.count = k.count;
      a.dtype = k.t;
      a.op = k.op;
      a.root = k.root;
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
      if (why.empty() && !outE) {
        // Nothing written outside the buffers the rank uses.
        std::vector<unsigned char> got(kSentinelBytes);
        CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
        for (unsigned char b : got)
          if (b != 0xCD) why = "the unused output of a non-root was written";
      }
      // The replay is a collective call too: every rank replays, or none
      // (a rank that skipped it would leave its peers waiting).
      if (exec && anyRank(boot, !why.empty())) {
        cudaGraphExecDestroy(exec);
        exec = nullptr;
      }
      if (why.empty() && exec) {
        // New inputs between replays: the replay reads them.
        boot.barrier();
        fill(in, inE, k.t, seed + 1, uint32_t(r), 0, s);
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
      char b[200];
      std::snprintf(b, sizeof b, "%s %s/%s count=%zu root=%d%s%s%s%s n=%d", name(k.c), toString(k.t),
                    k.c == Rooted::Reduce ? toString(k.op) : "copy", k.count, k.root, k.tput ? " throughput-policy" : "",
                    k.graph ? " graph(replayed, refilled)" : "", k.inPlace ? " in-place" : "", k.skew ? " skewed" : "", n);
      reportCase(r, b, why, failures);
      boot.barrier();
      // A timeout on any rank: the ranks' epochs no longer agree; all stop
      // (a rank that went on would write into the workspace of peers that
      // destroyed their communicators).
      if (anyRank(boot, !comm.broken().empty())) break;
    }
    boot.barrier();
  }
  cudaStreamDestroy(s);
  return failures;
}

/// NCCL's result of case k on rank R (its equivalents of the four).
void ncclCall(const Case& k, Rank& R, const std::byte* in, std::byte* out) {
  const ncclDataType_t t = ncclType(k.t);
  const std::size_t E = dtypeSize(k.t);
  ncclResult_t res = ncclSuccess;
  switch (k.c) {
    case Rooted::Broadcast: res = ncclBroadcast(in, out, k.count, t, k.root, R.nccl, R.stream); break;
    case Rooted::Reduce: res = ncclReduce(in, out, k.count, t, ncclOp(k.op), k.root, R.nccl, R.stream); break;
    case Rooted::Scatter:
      ncclGroupStart();
      if (R.rank == k.root)
        for (int p = 0; p < R.n; ++p) ncclSend(in + std::size_t(p) * k.count * E, k.count, t, p, R.nccl, R.stream);
      ncclRecv(out, k.count, t, k.root, R.nccl, R.stream);
      res = ncclGroupEnd();
      break;
    case Rooted::Gather:
      ncclGroupStart();
      ncclSend(in, k.count, t, k.root, R.nccl, R.stream);
      if (R.rank == k.root)
        for (int p = 0; p < R.n; ++p) ncclRecv(out + std::size_t(p) * k.count * E, k.count, t, p, R.nccl, R.stream);
      res = ncclGroupEnd();
      break;
  }
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
    const std::size_t E = dtypeSize(k.t), inE = inElems(k, R.n, R.rank), outE = outElems(k, R.n, R.rank);
    std::byte *in = nullptr, *ours = nullptr, *theirs = nullptr;
    CT_CUDA(cudaMalloc(&in, inE * E + 16));
    CT_CUDA(cudaMalloc(&ours, outE * E + 16));
    CT_CUDA(cudaMalloc(&theirs, outE * E + 16));
    fill(in, inE, k.t, seed, uint32_t(R.rank), 0, R.stream);
    sn::CallArgs a;
    a.in = in;
    a.out = ours;
    a.count = k.count;
    a.dtype = k.t;
    a.op = k.op;
    a.root = k.root;
    const Status st = k.tput ? launchRooted<PTput>(k.c, comm, a, R.stream) : launchRooted<PAuto>(k.c, comm, a, R.stream);
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
      std::printf("FAIL rank %d: %s count=%zu root=%d: %s\n", R.rank, name(k.c), k.count, k.root,
                  st != Status::Ok ? sn::lastError() : "differs from NCCL");
    } else if (R.rank == 0 && R.verbose) {
      std::printf("PASS %s %s count=%zu root=%d (= NCCL)\n", name(k.c), toString(k.t), k.count, k.root);
    }
    cudaFree(in);
    cudaFree(ours);
    cudaFree(theirs);
  }
}

} // namespace

int main(int argc, char** argv) { return sharedGpuMain(argc, argv, "rooted_test", {2, 3, 5, 8}, rankMain, ncclBody); }
