/// @file coll_correctness_test.cu
/// @brief Correctness of AllGather, ReduceScatter, AllReduce and AllToAll
/// (snac::launch) on 2 GPUs against NCCL on the same inputs and against a
/// host fp32 ascending-order reference: copies bitwise equal to NCCL,
/// reductions bitwise equal to the reference and close to NCCL, results
/// bitwise equal across ranks and run to run, guard bytes untouched; fp32 /
/// fp16 / bf16, sum / max / min; counts 0, 1, 7, 1023, primes around the
/// latency/throughput crossover, powers of two up to 256 MiB, beyond a 1 MiB
/// staging capacity; in place and misaligned (element-aligned) pointers;
/// 1000 replays of a captured CUDA graph of alternating collectives; bad
/// arguments; checked mode reporting a wait that can never be satisfied.
///
/// Run in-process (2 threads):  gpu-bin/coll_correctness_test
/// or one process per GPU:      gpu-bin/purlin-launch -n 2 gpu-bin/coll_correctness_test
#include "coll_test_common.cuh"

#include <algorithm>
#include <chrono>

using namespace colltest;

namespace {

struct Case {
  Coll c;
  DType t = DType::BF16;
  RedOp op = RedOp::Sum;
  std::size_t count = 0;
  bool inPlace = false;
  bool misalign = false;
  bool tput = false;  ///< policy with the latency program off
  bool graph = false; ///< Purlin's call captured in a CUDA graph (direct program where eligible), then replayed
  bool expectDirect = false;  ///< graph: every rank's buffers qualify, so registerDirect must accept the call
};

/// Whether a captured call of `k` on communicator `comm` must take the
/// direct program's copy-engine form: it takes the direct program
/// (expectDirect, direct on), the message reaches the copy-engine threshold,
/// the communicator is unchecked, and (reductions) the world is two ranks
/// with stream memory operations.
bool expectEngine(const Case& k, const Communicator& comm, int n) {
  if (!k.graph || !k.expectDirect || !comm.options().direct || comm.options().checked) return false;
  const std::size_t bytes = k.count * dtypeSize(k.t);
  const std::size_t msg = k.c == Coll::AllReduce ? bytes : std::size_t(n) * bytes;
  if (isReduce(k.c) && (n != 2 || !purlin::streamMemOpsAvailable())) return false;
  return msg >= sn::kDirectEngineMinBytes;
}

std::string describe(const Case& k, const char* comm) {
  char b[256];
  std::snprintf(b, sizeof b, "%s %s/%s count=%zu%s%s%s [%s]", name(k.c), toString(k.t),
                isReduce(k.c) ? toString(k.op) : "copy", k.count, k.inPlace ? " in-place" : "",
                k.misalign ? " misaligned" : "", k.graph ? " graph" : k.tput ? (PTput::world[2].push ? (PTput::world[2].lanes == 2 || PTput::world[2].consumeLanes == 2 ? " throughput-policy push-lanes" : " throughput-policy push") : " throughput-policy pull") : "", comm);
  return b;
}

/// Frees device buffers at scope exit.
struct DevBufs {
  std::vector<void*> ptrs;
  std::byte* alloc(std::size_t bytes) {
    void* p = nullptr;
    CT_CUDA(cudaMalloc(&p, bytes ? bytes : 16));
    ptrs.push_back(p);
    return static_cast<std::byte*>(p);
  }
  ~DevBufs() {
    for (void* p : ptrs) cudaFree(p);
  }
};

/// Runs Purlin's call; graph cases capture it (registerDirect runs there)
/// and replay it twice (in place once: a second replay would reduce the
/// result again), and report the memcpy nodes captured in *memcpyNodes.
Status runPurlin(const Case& k, Communicator& comm, const sn::CallArgs& a, cudaStream_t s, int* memcpyNodes = nullptr) {
  if (!k.graph) return k.tput ? launchColl<PTput>(k.c, comm, a, s) : launchColl<PAuto>(k.c, comm, a, s);
  return captureAndReplay(s, k.inPlace ? 1 : 2, [&] { return launchColl<PAuto>(k.c, comm, a, s); }, memcpyNodes);
}

void runNccl(Rank& R, const Case& k, const std::byte* in, std::byte* out) {
  const ncclDataType_t t = ncclType(k.t);
  const std::size_t E = dtypeSize(k.t);
  ncclResult_t res = ncclSuccess;
  switch (k.c) {
    case Coll::AllGather: res = ncclAllGather(in, out, k.count, t, R.nccl, R.stream); break;
    case Coll::ReduceScatter: res = ncclReduceScatter(in, out, k.count, t, ncclOp(k.op), R.nccl, R.stream); break;
    case Coll::AllReduce: res = ncclAllReduce(in, out, k.count, t, ncclOp(k.op), R.nccl, R.stream); break;
    case Coll::AllToAll:
      ncclGroupStart();
      for (int p = 0; p < R.n; ++p) {
        ncclSend(in + p * k.count * E, k.count, t, p, R.nccl, R.stream);
        ncclRecv(out + p * k.count * E, k.count, t, p, R.nccl, R.stream);
      }
      res = ncclGroupEnd();
      break;
  }
  if (res != ncclSuccess) throw std::runtime_error(std::string("NCCL: ") + ncclGetErrorString(res));
}

/// One case on one rank; returns false on a failure (already printed).
bool runCase(Rank& R, Communicator& comm, const Case& k, const char* commName, uint32_t seed) {
  const std::size_t E = dtypeSize(k.t);
  const int n = R.n, r = R.rank;
  const std::size_t inElems = k.c == Coll::AllGather || k.c == Coll::AllReduce ? k.count : n * k.count;
  const std::size_t outElems = k.c == Coll::ReduceScatter || k.c == Coll::AllReduce ? k.count : n * k.count;
  const std::size_t inBytes = inElems * E, outBytes = outElems * E;
  const std::size_t guard = 256, off = k.misalign ? E : 0;
  DevBufs bufs;
  std::byte* outBuf = bufs.alloc(outBytes + 2 * guard + 16);
  CT_CUDA(cudaMemsetAsync(outBuf, 0xAB, outBytes + 2 * guard + 16, R.stream));
  std::byte* out = outBuf + guard + off;
  std::byte* in = nullptr;
  bool guarded = true;
  if (k.inPlace && k.c == Coll::AllReduce) {
    in = out;
  } else if (k.inPlace && k.c == Coll::AllGather) {
    in = out + r * k.count * E;
  } else {
    std::byte* inBuf = bufs.alloc(inBytes + 2 * guard + 16);
    in = inBuf + guard + off;
    if (k.inPlace && k.c == Coll::ReduceScatter) {
      out = in + r * k.count * E;
      guarded = false;
    }
  }
  fill(in, inElems, k.t, seed, r, 0, R.stream);
  std::byte* refIn = bufs.alloc(inBytes);
  std::byte* ncclOut = bufs.alloc(outBytes);
  fill(refIn, inElems, k.t, seed, r, 0, R.stream);
  runNccl(R, k, refIn, ncclOut);

  const sn::CallArgs a = callArgs(k, in, out);
  const std::string what = describe(k, commName);
  const std::size_t registrations = comm.directRegistrations();
  // Graph cases: the peers' mappings of this case's buffers are closed
  // (collectively) before the buffers are freed at scope exit.
  struct Release {
    Communicator& c;
    bool on;
    ~Release() {
      if (!on) return;
      try {
        c.releaseDirect();
      } catch (const std::exception& e) {  // never throw from a destructor
        std::printf("FAIL: releaseDirect: %s\n", e.what());
      }
    }
  } release{comm, k.graph};
  int memcpyNodes = 0;
  Status st = runPurlin(k, comm, a, R.stream, &memcpyNodes);
  if (st != Status::Ok) {
    std::printf("FAIL rank %d: %s: launch returned %s: %s\n", r, what.c_str(), toString(st), sn::lastError());
    return false;
  }
  CT_CUDA(cudaStreamSynchronize(R.stream));
  comm.checkDeviceErrors();
  std::vector<std::byte> got(outBytes), ref(outBytes), outAll(outBytes + 2 * guard + 16);
  CT_CUDA(cudaMemcpy(got.data(), out, outBytes, cudaMemcpyDeviceToHost));
  CT_CUDA(cudaMemcpy(ref.data(), ncclOut, outBytes, cudaMemcpyDeviceToHost));
  bool ok = true;
  if (guarded) {
    CT_CUDA(cudaMemcpy(outAll.data(), outBuf, outAll.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < outAll.size() && ok; ++i) {
      const bool inside = i >= guard + off && i < guard + off + outBytes;
      if (!inside && outAll[i] != std::byte(0xAB)) {
        std::printf("FAIL rank %d: %s: guard byte %zd overwritten\n", r, what.c_str(), std::ptrdiff_t(i) - std::ptrdiff_t(guard + off));
        ok = false;
      }
    }
  }
  if (!isReduce(k.c)) {
    for (std::size_t i = 0; i < outBytes && ok; ++i)
      if (got[i] != ref[i]) {
        std::printf("FAIL rank %d: %s: byte %zu differs from NCCL (got 0x%02x, NCCL 0x%02x)\n", r, what.c_str(), i,
                    unsigned(got[i]), unsigned(ref[i]));
        ok = false;
      }
  } else {
    const std::size_t first = k.c == Coll::ReduceScatter ? r * k.count : 0;
    std::byte want[4];
    for (std::size_t i = 0; i < k.count && ok; ++i) {
      float acc = inputValue(seed, 0, first + i);
      for (int p = 1; p < n; ++p) acc = hostOp(k.op, acc, inputValue(seed, p, first + i));
      fromFloat(k.t, acc, want);
      if (std::memcmp(want, got.data() + i * E, E) != 0) {
        std::printf("FAIL rank %d: %s: element %zu = %g, host reference %g\n", r, what.c_str(), i,
                    toFloat(k.t, got.data() + i * E), toFloat(k.t, want));
        ok = false;
      }
      const float g = toFloat(k.t, got.data() + i * E), nc = toFloat(k.t, ref.data() + i * E);
      if (ok && std::fabs(g - nc) > 1e-2f * std::max(1.0f, std::fabs(nc))) {
        std::printf("FAIL rank %d: %s: element %zu = %g, NCCL %g\n", r, what.c_str(), i, g, nc);
        ok = false;
      }
    }
    // Run to run: the same call again gives the same bits (in place: from fresh input).
    if (k.inPlace) fill(in, inElems, k.t, seed, r, 0, R.stream);
    st = runPurlin(k, comm, a, R.stream);
    CT_CUDA(cudaStreamSynchronize(R.stream));
    std::vector<std::byte> again(outBytes);
    CT_CUDA(cudaMemcpy(again.data(), out, outBytes, cudaMemcpyDeviceToHost));
    if (ok && (st != Status::Ok || again != got)) {
      std::printf("FAIL rank %d: %s: second run differs (status %s)\n", r, what.c_str(), toString(st));
      ok = false;
    }
  }
  if (ok && k.expectDirect && comm.options().direct && comm.directRegistrations() == registrations) {
    std::printf("FAIL rank %d: %s: the captured call did not take the direct program\n", r, what.c_str());
    ok = false;
  }
  // The form taken: copy engines (memcpy nodes) exactly where expected.
  if (ok && k.graph && (memcpyNodes > 0) != expectEngine(k, comm, n)) {
    std::printf("FAIL rank %d: %s: %d memcpy nodes captured, copy-engine form %sexpected\n", r, what.c_str(),
                memcpyNodes, expectEngine(k, comm, n) ? "" : "not ");
    ok = false;
  }
  // Across ranks: AllGather and AllReduce outputs are identical everywhere.
  uint64_t h = fnv(got.data(), outBytes);
  std::vector<uint64_t> hs(n);
  R.boot->allGather(&h, hs.data(), sizeof h);
  if (ok && (k.c == Coll::AllGather || k.c == Coll::AllReduce))
    for (int p = 0; p < n; ++p)
      if (hs[p] != h) {
        std::printf("FAIL rank %d: %s: output differs from rank %d's\n", r, what.c_str(), p);
        ok = false;
      }
  return ok;
}

bool isPrime(std::size_t x) {
  if (x < 2) return false;
  for (std::size_t d = 2; d * d <= x; ++d)
    if (x % d == 0) return false;
  return true;
}
std::size_t primeBelow(std::size_t x) { while (!isPrime(x)) --x; return x; }
std::size_t primeAbove(std::size_t x) { while (!isPrime(x)) ++x; return x; }

/// The case list (the same on every rank).
std::vector<Case> sweepCases(int n) {
  std::vector<Case> cs;
  const Coll all[] = {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll};
  for (Coll c : all) {
    // Element count whose message is exactly PAuto's crossover (bf16).
    const std::size_t per = c == Coll::AllReduce ? 1 : std::size_t(n);
    const std::size_t cross = PAuto::world[n].latencyMaxBytes / 2 / per;
    std::vector<std::size_t> counts = {0, 1, 7, 1023, primeBelow(cross), primeAbove(cross + 1)};
    for (std::size_t p = 12; p <= 24; p += 3) counts.push_back(std::size_t(1) << p);
    counts.push_back(c == Coll::AllGather ? std::size_t(1) << 26 : std::size_t(1) << 25);  // 256 / 128 MiB
    for (std::size_t cnt : counts) cs.push_back({c, DType::BF16, RedOp::Sum, cnt});
    for (std::size_t cnt : {std::size_t(1), std::size_t(7), std::size_t(1023), std::size_t(4099), std::size_t(300007)})
      cs.push_back({c, DType::BF16, RedOp::Sum, cnt, false, false, true});
    // In place (NCCL's forms; not AllToAll) and misaligned pointers, both programs.
    for (std::size_t cnt : {std::size_t(7), std::size_t(1023), std::size_t(300007), std::size_t(1) << 22}) {
      if (c != Coll::AllToAll) cs.push_back({c, DType::BF16, RedOp::Sum, cnt, true, false, false});
      if (c != Coll::AllToAll) cs.push_back({c, DType::F32, RedOp::Sum, cnt, true, true, true});
      cs.push_back({c, DType::F16, RedOp::Sum, cnt, false, true, false});
      cs.push_back({c, DType::BF16, RedOp::Max, cnt, false, true, true});
    }
    if (isReduce(c))
      for (DType t : {DType::F32, DType::F16, DType::BF16})
        for (RedOp op : {RedOp::Sum, RedOp::Max, RedOp::Min})
          for (bool tput : {false, true}) cs.push_back({c, t, op, 100003, false, false, tput});
  }
  return cs;
}

/// Captured calls: the direct program where every rank's buffers allow it
/// (from the policy's directMinBytes up; the copy-engine form for messages
/// from 128 MiB on an unchecked communicator; in-place AllGather),
/// staged otherwise (below the threshold, in-place reductions, misaligned,
/// odd byte counts).
std::vector<Case> graphCases(int n) {
  std::vector<Case> cs;
  // Whether every rank's buffers qualify (plan.h directWanted/directEligible
  // with the default 4 MiB threshold; aligned, out of place or AllGather in place).
  auto qualifies = [n](const Case& k) {
    const std::size_t E = dtypeSize(k.t), bytes = k.count * E;
    const std::size_t msg = k.c == Coll::AllReduce ? bytes : std::size_t(n) * bytes;
    if (isReduce(k.c) && n != 2) return false;
    if (k.misalign || (k.inPlace && k.c != Coll::AllGather)) return false;
    if (k.c == Coll::AllReduce ? bytes % 32 != 0 : bytes % 16 != 0) return false;
    return msg >= sn::kDirectMinBytes;
  };
  auto add = [&](Case k) {
    k.graph = true;
    k.expectDirect = qualifies(k);
    cs.push_back(k);
  };
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    for (std::size_t cnt : {std::size_t(1) << 17, std::size_t(1) << 21, (std::size_t(1) << 22) + 8, std::size_t(1) << 24,
                            std::size_t(3) << 23}) {
      add({c, DType::BF16, RedOp::Sum, cnt});
      add({c, DType::F32, RedOp::Max, cnt / 2});
    }
    add({c, DType::F16, RedOp::Min, (std::size_t(1) << 22) + 1});
    add({c, DType::BF16, RedOp::Sum, std::size_t(1) << 22, false, true});
    if (c != Coll::AllToAll) {
      add({c, DType::BF16, RedOp::Sum, std::size_t(1) << 22, true});
      add({c, DType::BF16, RedOp::Sum, std::size_t(1) << 25, true});
    }
    // 128 MiB messages: the copy-engine form on the unchecked communicator
    // (AllGather/AllToAll out of place, so the own block's forked copy runs
    // too; ReduceScatter/AllReduce on two ranks: chunked copies announced by
    // stream memory operations, reduced as they land), plus partitions that
    // are not a multiple of the chunk schedule, in other dtypes and ops.
    add({c, DType::BF16, RedOp::Sum, c == Coll::AllReduce ? std::size_t(1) << 26 : std::size_t(1) << 25});
    if (c == Coll::ReduceScatter) add({c, DType::F32, RedOp::Max, (std::size_t(1) << 24) + 4});
    if (c == Coll::AllReduce) add({c, DType::F16, RedOp::Min, (std::size_t(1) << 26) + 16});
  }
  return cs;
}

/// Cases on the communicator with a 1 MiB staging half: cyclic slots.
std::vector<Case> smallStagingCases() {
  std::vector<Case> cs;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    cs.push_back({c, DType::BF16, RedOp::Sum, (std::size_t(1) << 20) + 3});
    cs.push_back({c, DType::BF16, RedOp::Sum, 3 * (std::size_t(1) << 20) + 1, false, true, false});
    if (c != Coll::AllToAll) cs.push_back({c, DType::F32, RedOp::Max, (std::size_t(5) << 20) + 7, true, false, true});
  }
  return cs;
}

uint64_t readEpoch(Communicator& comm) {
  uint64_t e = 0;
  CT_CUDA(cudaMemcpy(&e, &comm.deviceComm().state->epochs[0], sizeof e, cudaMemcpyDeviceToHost));
  return e;
}

void check(Rank& R, bool cond, const std::string& what) {
  if (!cond) R.fail();
  if (!cond || R.rank == 0) std::printf("%s rank %d: %s\n", cond ? "PASS" : "FAIL", R.rank, what.c_str());
}

/// A push transfer whose lanes the generated kernels lack: purlinc
/// instantiates the push CTAs of its policy's lanes only (generated/: the
/// default (2, 1)), so the launch refuses another shape on every rank,
/// before any kernel (policy_classes_test runs (2, 2) from its own
/// purlinc output). The refusal is the printed NAME_enqueueFor's, after
/// the launcher's checks: on a checked communicator the call check kernel
/// has run by then (the same for a transfer without printed roles).
void lanesRefused(Rank& R, Communicator& comm, const char* transfer) {
  DevBufs bufs;
  const std::size_t count = std::size_t(1) << 16;  // PTput: the throughput program
  std::byte* in = bufs.alloc(count * 4);
  std::byte* out = bufs.alloc(count * 4);
  CT_CUDA(cudaMemset(out, 0x7b, count * 4));
  const uint64_t e0 = readEpoch(comm);
  struct K { std::size_t count; DType t = DType::F32; RedOp op = RedOp::Sum; };
  const Status s = launchColl<PTput>(Coll::AllReduce, comm, callArgs(K{count}, in, out), R.stream);
  CT_CUDA(cudaStreamSynchronize(R.stream));
  std::vector<uint8_t> back(count * 4);
  CT_CUDA(cudaMemcpy(back.data(), out, back.size(), cudaMemcpyDeviceToHost));
  bool untouched = true;
  for (uint8_t v : back) untouched &= v == 0x7b;
  check(R, s == Status::Unsupported && std::strstr(sn::lastError(), "push lanes") != nullptr && untouched &&
               readEpoch(comm) == e0,
        std::string(transfer) + ": push lanes the generated kernels lack -> Unsupported, nothing launched: " +
            sn::lastError());
}

/// Bad arguments: a status and a message, nothing launched.
void errorCases(Rank& R, Communicator& comm) {
  DevBufs bufs;
  std::byte* buf = bufs.alloc(1 << 16);
  const uint64_t e0 = readEpoch(comm);
  sn::CallArgs a;
  a.count = 5;
  a.out = buf;
  Status s = launchColl<PAuto>(Coll::AllReduce, comm, a, R.stream);
  check(R, s == Status::InvalidArgument && std::strlen(sn::lastError()) > 0,
        std::string("null input -> InvalidArgument: ") + sn::lastError());
  a.in = buf;
  a.op = RedOp(9);
  s = launchColl<PAuto>(Coll::AllReduce, comm, a, R.stream);
  check(R, s == Status::Unsupported, std::string("bad op -> Unsupported: ") + sn::lastError());
  a.op = RedOp::Sum;
  a.out = buf + 8;
  s = launchColl<PAuto>(Coll::AllToAll, comm, a, R.stream);
  check(R, s == Status::InvalidArgument, std::string("overlapping AllToAll -> InvalidArgument: ") + sn::lastError());
  a.in = buf + 1;
  a.out = buf + 4096;
  s = launchColl<PAuto>(Coll::AllReduce, comm, a, R.stream);
  check(R, s == Status::InvalidArgument, std::string("unaligned f32 pointer -> InvalidArgument: ") + sn::lastError());
  sn::CallArgs z;  // count 0 with null pointers: nothing to do
  s = launchColl<PAuto>(Coll::AllGather, comm, z, R.stream);
  CT_CUDA(cudaStreamSynchronize(R.stream));
  check(R, s == Status::Ok && readEpoch(comm) == e0, "count 0: Ok, nothing launched, epoch unchanged");
}

/// Alternating collectives on one stream, captured once, replayed 1000 times.
void graphCase(Rank& R, Communicator& comm) {
  const int n = R.n;
  struct G { Coll c; std::size_t count; };
  // Latency, staged and (captured, eligible sizes) direct programs mixed.
  const G calls[] = {{Coll::AllReduce, 3001}, {Coll::AllGather, 1 << 21}, {Coll::ReduceScatter, (1 << 18) + 5},
                     {Coll::AllToAll, 777}, {Coll::AllReduce, (1 << 20) + 1}, {Coll::AllReduce, 1 << 21},
                     {Coll::AllToAll, 1 << 23}, {Coll::ReduceScatter, 1 << 21}, {Coll::AllGather, 1 << 25},
                     {Coll::ReduceScatter, 1 << 26}, {Coll::AllReduce, 1 << 26}};
  const int kCalls = sizeof calls / sizeof calls[0];
  DevBufs bufs;
  std::vector<sn::CallArgs> args;
  std::vector<std::size_t> outBytes, inElems;
  for (const G& g : calls) {
    const std::size_t inE = g.c == Coll::AllGather || g.c == Coll::AllReduce ? g.count : n * g.count;
    const std::size_t outE = g.c == Coll::ReduceScatter || g.c == Coll::AllReduce ? g.count : n * g.count;
    sn::CallArgs a;
    std::byte* in = bufs.alloc(inE * 2);
    fill(in, inE, DType::BF16, 99, R.rank, 0, R.stream);
    a.in = in;
    a.out = bufs.alloc(outE * 2);
    a.count = g.count;
    a.dtype = DType::BF16;
    args.push_back(a);
    outBytes.push_back(outE * 2);
    inElems.push_back(inE);
  }
  // Eager run: the expected outputs.
  std::vector<std::vector<std::byte>> want(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    Status s = launchColl<PAuto>(calls[i].c, comm, args[i], R.stream);
    if (s != Status::Ok) { check(R, false, std::string("graph eager launch: ") + sn::lastError()); return; }
  }
  CT_CUDA(cudaStreamSynchronize(R.stream));
  for (int i = 0; i < kCalls; ++i) {
    want[i].resize(outBytes[i]);
    CT_CUDA(cudaMemcpy(want[i].data(), args[i].out, outBytes[i], cudaMemcpyDeviceToHost));
    CT_CUDA(cudaMemset(args[i].out, 0, outBytes[i]));
  }
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CT_CUDA(cudaStreamBeginCapture(R.stream, cudaStreamCaptureModeThreadLocal));
  bool okLaunch = true;
  for (int i = 0; i < kCalls; ++i) okLaunch &= launchColl<PAuto>(calls[i].c, comm, args[i], R.stream) == Status::Ok;
  CT_CUDA(cudaStreamEndCapture(R.stream, &graph));
  CT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const uint64_t e0 = readEpoch(comm);
  const int kReplays = 1000;
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kReplays; ++rep) CT_CUDA(cudaGraphLaunch(exec, R.stream));
  CT_CUDA(cudaStreamSynchronize(R.stream));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  comm.checkDeviceErrors();
  const uint64_t e1 = readEpoch(comm);
  bool same = okLaunch;
  for (int i = 0; i < kCalls; ++i) {
    std::vector<std::byte> got(outBytes[i]);
    CT_CUDA(cudaMemcpy(got.data(), args[i].out, outBytes[i], cudaMemcpyDeviceToHost));
    same &= got == want[i];
  }
  // New inputs before each of a few more replays, back to back (no host
  // sync): the last replay must give the last inputs' results, so a call
  // that consumed data left by the previous replay (a flag seen too early,
  // a missed reset) cannot hide behind identical inputs. Reference: the
  // same calls run eagerly (staged programs) on the same last inputs.
  bool fresh = okLaunch;
  const uint32_t kSeeds[] = {1234, 777, 4321};
  for (uint32_t seed : kSeeds) {
    for (int i = 0; i < kCalls; ++i) fill(const_cast<std::byte*>(static_cast<const std::byte*>(args[i].in)), inElems[i],
                                          DType::BF16, seed, R.rank, 0, R.stream);
    CT_CUDA(cudaGraphLaunch(exec, R.stream));
  }
  CT_CUDA(cudaStreamSynchronize(R.stream));
  std::vector<std::vector<std::byte>> replayed(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    replayed[i].resize(outBytes[i]);
    CT_CUDA(cudaMemcpy(replayed[i].data(), args[i].out, outBytes[i], cudaMemcpyDeviceToHost));
  }
  for (int i = 0; i < kCalls; ++i) fresh &= launchColl<PAuto>(calls[i].c, comm, args[i], R.stream) == Status::Ok;
  CT_CUDA(cudaStreamSynchronize(R.stream));
  for (int i = 0; i < kCalls; ++i) {
    std::vector<std::byte> eager(outBytes[i]);
    CT_CUDA(cudaMemcpy(eager.data(), args[i].out, outBytes[i], cudaMemcpyDeviceToHost));
    if (eager != replayed[i]) {
      std::printf("FAIL rank %d: graph call %d (%s, count %zu): replay after new inputs differs from eager\n", R.rank, i,
                  name(calls[i].c), calls[i].count);
      fresh = false;
    }
    fresh &= eager != want[i];  // the new inputs did change this call's result
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  comm.releaseDirect();  // before the buffers are freed
  char b[200];
  std::snprintf(b, sizeof b, "graph of %d alternating collectives x %d replays (%.1f ms): outputs as eager, epoch +%llu",
                kCalls, kReplays, ms, (unsigned long long)(e1 - e0));
  check(R, same && e1 - e0 == uint64_t(kCalls) * kReplays, b);
  check(R, fresh, "graph replays with new inputs before each (3, back to back): the last gives the last inputs' results");
}

/// Spins ~`ns` nanoseconds (delays one rank's stream).
__global__ void delayKernel(uint64_t ns) {
  const uint64_t t0 = purlin::arch::globalTimerNs();
  while (purlin::arch::globalTimerNs() - t0 < ns) {
  }
}

/// Full/empty packets (docs/snac-protocol.md "Latency program"): a word a
/// call filled must be empty again when that half is next used, whatever
/// the sizes in between. Per collective: two large latency calls fill both
/// packet halves, two one-element calls use each half again at its first
/// group only, then a large call runs with new inputs while every rank but
/// 0 is held back 2 ms, so rank 0 polls long before its peers send: a word
/// left full by the first calls would be read as this call's. Checked
/// against the host reference; returns the number of failures.
int staleWordsCase(Rank& R, Communicator& comm) {
  const int n = R.n, r = R.rank;
  int failures = 0;
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll}) {
    // bf16, 20011 elements (40 KiB per rank, 80 groups, the last partial),
    // fewer where the message would pass PAuto's crossover: the probe is
    // about the latency program.
    const std::size_t per = c == Coll::AllReduce ? 1 : std::size_t(n);
    const std::size_t count = std::min<std::size_t>(20011, PAuto::world[n].latencyMaxBytes / 2 / per - 3);
    const std::size_t inElems = c == Coll::AllGather || c == Coll::AllReduce ? count : n * count;
    const std::size_t outElems = c == Coll::ReduceScatter || c == Coll::AllReduce ? count : n * count;
    DevBufs bufs;
    std::byte* in = bufs.alloc(inElems * 2);
    std::byte* out = bufs.alloc(outElems * 2);
    struct K { std::size_t count; DType t = DType::BF16; RedOp op = RedOp::Sum; };
    const uint32_t seeds[2] = {7001, 7002};
    for (uint32_t s : seeds) {
      fill(in, inElems, DType::BF16, s, r, 0, R.stream);
      CT_CUDA(launchColl<PAuto>(c, comm, callArgs(K{count}, in, out), R.stream) == Status::Ok ? cudaSuccess : cudaErrorUnknown);
    }
    for (int i = 0; i < 2; ++i)
      CT_CUDA(launchColl<PAuto>(c, comm, callArgs(K{1}, in, out), R.stream) == Status::Ok ? cudaSuccess : cudaErrorUnknown);
    const uint32_t seed = 7003;
    fill(in, inElems, DType::BF16, seed, r, 0, R.stream);
    CT_CUDA(cudaStreamSynchronize(R.stream));
    R.boot->barrier();
    if (r != 0) delayKernel<<<1, 1, 0, R.stream>>>(2000000);
    CT_CUDA(launchColl<PAuto>(c, comm, callArgs(K{count}, in, out), R.stream) == Status::Ok ? cudaSuccess : cudaErrorUnknown);
    CT_CUDA(cudaStreamSynchronize(R.stream));
    comm.checkDeviceErrors();
    std::vector<std::byte> got(outElems * 2);
    CT_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < outElems; ++i) {
      float want = 0;
      if (c == Coll::AllGather) want = inputValue(seed, uint32_t(i / count), i % count);
      else if (c == Coll::AllToAll) want = inputValue(seed, uint32_t(i / count), r * count + i % count);
      else {
        const std::size_t first = c == Coll::ReduceScatter ? r * count : 0;
        want = inputValue(seed, 0, first + i);
        for (int p = 1; p < n; ++p) want += inputValue(seed, uint32_t(p), first + i);
      }
      std::byte w[4];
      fromFloat(DType::BF16, want, w);
      if (std::memcmp(w, got.data() + 2 * i, 2) != 0) {
        std::printf("FAIL rank %d: %s stale-words probe: element %zu = %g, expected %g (a packet word of an earlier "
                    "call read as this call's?)\n",
                    r, name(c), i, toFloat(DType::BF16, got.data() + 2 * i), toFloat(DType::BF16, w));
        ++failures;
        break;
      }
    }
    if (r == 0) std::printf("%s %s: full/empty packet words after calls of other sizes\n", failures ? "FAIL" : "PASS", name(c));
  }
  return failures;
}

/// Checked mode: only rank 0 calls, so its waits can never be satisfied;
/// the kernel must end and report a timeout instead of hanging, and the
/// communicator must then refuse further collectives (its epochs no longer
/// agree with the peer's). One communicator per case: the throughput
/// program (AllReduce), and the latency program's reduce poll (AllReduce,
/// PollStagger::EveryRound) and copy poll (AllGather, PollStagger::First).
void checkedCase(Rank& R) {
  CommOptions o;
  o.stagingHalfBytes = 4u << 20;
  o.packetHalfBytes = 1u << 20;
  o.checked = true;
  o.waitTimeoutUs = 200'000;  // 0.2 s
  struct Case {
    bool tput;
    Coll c;
  };
  for (const Case k : {Case{true, Coll::AllReduce}, Case{false, Coll::AllReduce}, Case{false, Coll::AllGather}}) {
    const bool tput = k.tput;
    Communicator comm(*R.boot, R.dev, o);
    if (R.rank == 0) {
      DevBufs bufs;
      const std::size_t count = 1 << 20;
      std::byte* in = bufs.alloc(count * 2);
      std::byte* out = bufs.alloc(count * 2);
      sn::CallArgs a;
      a.in = in;
      a.out = out;
      a.count = tput ? count : 1000;
      a.dtype = DType::BF16;
      auto t0 = std::chrono::steady_clock::now();
      Status s = tput ? launchColl<PTput>(k.c, comm, a, R.stream) : launchColl<PAuto>(k.c, comm, a, R.stream);
      cudaError_t ce = cudaStreamSynchronize(R.stream);
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // The host-mapped record (asyncError reads it; it stays).
      const WaitError we = comm.hostStatus()->error;
      std::string msg;
      bool timeout = false;
      try {
        comm.checkDeviceErrors();
      } catch (const Error& e) {
        timeout = e.status() == Status::Timeout;
        msg = e.what();
      }
      char b[400];
      std::snprintf(b, sizeof b, "checked mode, %s program %s, peer never calls: kernel ended in %.2f s, timeout reported "
                    "(kind %u, signal %u, expected %llu, observed %llu): %s",
                    tput ? "throughput" : "latency", name(k.c), sec, we.kind, we.signal, (unsigned long long)we.expected,
                    (unsigned long long)we.observed, msg.c_str());
      check(R, s == Status::Ok && ce == cudaSuccess && timeout && we.failed == 1 && sec < 5.0, b);
      // The next call is refused with the reason, nothing is launched.
      Status again = launchColl<PAuto>(k.c, comm, a, R.stream);
      std::snprintf(b, sizeof b, "checked mode, %s program %s: the call after the timeout is refused (%s)",
                    tput ? "throughput" : "latency", name(k.c), sn::lastError());
      check(R, again == Status::Timeout && !comm.broken().empty(), b);
    }
    R.boot->barrier();
    if (R.rank != 0) {
      // A peer that calls after rank 0 gave up: rank 0's failure reached
      // its FAILED signal, so its waits give up at once (RemoteError)
      // instead of waiting on rank 0.
      DevBufs bufs;
      const std::size_t count = 1 << 20;
      sn::CallArgs a;
      a.in = bufs.alloc(count * 2);
      a.out = bufs.alloc(count * 2);
      a.count = tput ? count : 1000;
      a.dtype = DType::BF16;
      auto t0 = std::chrono::steady_clock::now();
      Status s = tput ? launchColl<PTput>(k.c, comm, a, R.stream) : launchColl<PAuto>(k.c, comm, a, R.stream);
      cudaError_t ce = cudaStreamSynchronize(R.stream);
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string why;
      const Status st = comm.asyncError(&why);
      char b[400];
      std::snprintf(b, sizeof b, "checked mode, %s program %s, rank %d calls after rank 0 timed out: ended in %.2f s, "
                    "%s: %s", tput ? "throughput" : "latency", name(k.c), R.rank, sec, toString(st), why.c_str());
      check(R, s == Status::Ok && ce == cudaSuccess && st == Status::RemoteError && sec < 2.0 &&
                   why.find("rank 0 failed") != std::string::npos, b);
    }
    R.boot->barrier();
  }
}

} // namespace

int main(int argc, char** argv) {
  // --transfer pull|push|push2|push21|push12|all (default all): the
  // throughput transfer of the test policies; pushXY: push with X lanes per
  // stage CTA and Y per consume/gather CTA (push = 11, push2 = 22); with
  // all, the whole suite runs under pull and push21 (the generated kernels'
  // lanes), and the other shapes are checked to be refused (lanesRefused).
  struct Transfer {
    bool push;
    int lanes, consumeLanes;
    const char* name;
  };
  const std::vector<Transfer> every = {{false, 0, 0, "pull"}, {true, 1, 1, "push"}, {true, 2, 2, "push2"},
                                       {true, 2, 1, "push21"}, {true, 1, 2, "push12"}};
  std::vector<Transfer> transfers = every;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--transfer" && i + 1 < argc) {
      const std::string v = argv[++i];
      transfers.clear();
      for (const Transfer& t : every)
        if (v == "all" || v == t.name) transfers.push_back(t);
      if (transfers.empty()) {
        std::printf("coll_correctness_test: --transfer takes pull, push, push2, push21, push12 or all, not '%s'\n",
                    v.c_str());
        return 2;
      }
    } else {
      std::printf("usage: coll_correctness_test [--transfer pull|push|push2|push21|push12|all]\n");
      return 2;
    }
  }
  return runRanks("coll_correctness_test", [&transfers](Rank& R) {
   for (const Transfer& tr : transfers) {
    setTransfer(tr.push, tr.lanes, tr.consumeLanes);
    if (R.rank == 0) std::printf("=== transfer: %s ===\n", tr.name);
    if (tr.push && !(tr.lanes == 2 && tr.consumeLanes == 1)) {
      // Unchecked: a checked call runs its call check kernel before the
      // printed enqueue refuses (as a transfer without printed roles is).
      Communicator comm(*R.boot, R.dev, CommOptions{});
      lanesRefused(R, comm, tr.name);
      R.boot->barrier();
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    int failed = 0, passed = 0;
    {
      CommOptions big;  // default sizes: 256 MiB staging halves
      big.checked = true;  // bounded waits: a bug reports a timeout instead of hanging
      Communicator comm(*R.boot, R.dev, big);
      errorCases(R, comm);
      uint32_t seed = 1;
      for (const Case& k : sweepCases(R.n)) {
        bool ok = runCase(R, comm, k, "staging 256 MiB", seed++);
        ok ? ++passed : ++failed;
        if (!ok) R.fail();
        else if (R.rank == 0 && R.verbose) std::printf("PASS %s\n", describe(k, "staging 256 MiB").c_str());
      }
      for (const Case& k : graphCases(R.n)) {
        bool ok = runCase(R, comm, k, "staging 256 MiB", seed++);
        ok ? ++passed : ++failed;
        if (!ok) R.fail();
      }
      graphCase(R, comm);
      if (const int f = staleWordsCase(R, comm)) {
        failed += f;
        R.fail();
      } else {
        ++passed;
      }
      {
        char b[200];
        std::snprintf(b, sizeof b, "direct program used by captured calls: %zu registrations, %zu peer buffers mapped",
                      comm.directRegistrations(), comm.directMappings());
        check(R, comm.directRegistrations() > 0, b);
      }
      R.boot->barrier();
    }
    {
      // Unchecked (as in production): captured calls from 128 MiB take the
      // copy-engine form of the direct program.
      Communicator comm(*R.boot, R.dev, CommOptions{});
      uint32_t seed = 500;
      for (const Case& k : graphCases(R.n)) {
        bool ok = runCase(R, comm, k, "unchecked", seed++);
        ok ? ++passed : ++failed;
        if (!ok) R.fail();
      }
      graphCase(R, comm);
      R.boot->barrier();
    }
    {
      CommOptions small;
      small.stagingHalfBytes = 1u << 20;
      small.checked = true;
      Communicator comm(*R.boot, R.dev, small);
      uint32_t seed = 1000;
      for (const Case& k : smallStagingCases()) {
        bool ok = runCase(R, comm, k, "staging 1 MiB", seed++);
        ok ? ++passed : ++failed;
        if (!ok) R.fail();
        else if (R.rank == 0) std::printf("PASS %s\n", describe(k, "staging 1 MiB").c_str());
      }
      graphCase(R, comm);
      R.boot->barrier();
    }
    checkedCase(R);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rank %d (%s): %d cases passed, %d failed, %.1f s\n", R.rank, tr.name, passed, failed, sec);
   }
  });
}
