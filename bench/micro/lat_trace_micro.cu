/// @file lat_trace_micro.cu
/// @brief Experiment E12 (bench/NOTES.md): where one small call's time goes,
/// phase by phase, inside the packet-group AllGather exchange of E11.
///
/// One process, two GPUs with peer access (or `--loopback`: both ranks on
/// device 0, two streams). Each row is 128 launches per rank captured in a
/// CUDA graph with programmatic dependent launch, 1 warm-up replay and 8
/// timed replays (the paper's method, as lat_floor_micro). Thread 0 of CTA 0
/// of every call records, with %globaltimer (ns, 32 ns steps on H200):
///   t0 griddepcontrol.wait returned       t1 the epoch is in a register
///   t2 its input words are in registers   t3 its puts are issued
///   t4 its (last) poll saw every slot full t5 its output stores are issued
///   t6 after the CTA's end barrier (just before the epoch store and exit)
/// and thread 0 of every CTA the latest t0 and t6 and the earliest t0 of
/// the grid. A row prints, per rank, the medians over the timed calls of
/// CTA 0's phases, of the CTAs' start spread and end lateness, of the gap
/// from the last CTA's t6 of call i to the first t0 of call i+1 (exit,
/// completion, memory flush, the next grid's release) and of the period.
/// Rows: the variants of the first phases (Variant) at 1-256 KiB per rank
/// with the runtime's launch shape, then launch shapes (threads per CTA,
/// groups per warp) with the loads issued together.
/// Every row's output is checked byte for byte, as in lat_floor_micro.
#include <cuda_runtime.h>

#include "micro_check.h"
#include "exchange_micro.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "purlin/arch/common.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/packet_group.cuh"

#define CK(call) MICRO_CUDA_CHECK("lat_trace_micro", call)

namespace {

namespace arch = purlin::arch;
namespace sn = purlin::snac;

constexpr std::size_t kHalfBytes = std::size_t(4) << 20;
constexpr uint64_t kWaitLimitNs = 1000000000ull;
constexpr int kStamps = 7;
constexpr int kTraceSlots = 4096;  // calls per row: 9 replays x 128 < 4096

struct Side {
  uint64_t* epochs;
  std::byte* mine;
  std::byte* peer;
  const std::byte* in;
  std::byte* out;
  int rank;
  int* err;
  uint64_t* trace;  // kTraceSlots x kRecord
};

/// Makes the thread wait for `v` (a branch on it) before the next stamp.
__device__ __forceinline__ void use(uint64_t v) {
  if (v == 0x5a5a5a5a5a5a5a5aull) __trap();
}

/// Variants of the first phases (the rest is the same):
///  kEpochFirst  wait, epoch load, then the input loads (the runtime until
///               E12);
///  kTogether    wait, then the input loads and the epoch load issued
///               together (one stamp after both: t1 = t2);
///  kInputEarly  the input loads issued *before* the wait (not a valid
///               collective: the input may come from the previous kernel;
///               shows what the post-wait loads cost);
///  kEpochIssue  the epoch load issued first, then the input loads, one
///               stamp after both (kTogether in the other issue order).
enum Variant : int { kEpochFirst = 0, kTogether = 1, kInputEarly = 2, kEpochIssue = 3 };
const char* variantName(int v) {
  static const char* names[] = {"epoch-first", "together", "input-early", "epoch-issue"};
  return names[v];
}

/// Per-call record: t0..t6 of CTA 0's thread 0, then over all CTAs: the
/// latest t0, the latest t6 and the complement of the earliest t0.
constexpr int kRecord = kStamps + 3;

/// K groups per warp (groups warp + i * warps): all K are loaded and put
/// before any is polled (push-all, then poll-all).
template <int V, int K>
__global__ void traceKernel(Side s, std::size_t bytes) {
  uint64_t t[kStamps];
  const std::size_t warp = (std::size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::size_t warps = std::size_t(gridDim.x) * blockDim.x / 32;
  const int q = 1 - s.rank, lane = sn::laneId();
  const std::size_t W = bytes / 8, G = sn::packetGroups(bytes);
  const uint64_t* in = reinterpret_cast<const uint64_t*>(s.in);
  std::size_t j0[K];
  bool has0[K], has1[K];
  uint64_t a[K], b[K], e = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::size_t g = warp + std::size_t(k) * warps;
    j0[k] = g * sn::kGroupPayloadWords + 2 * std::size_t(lane);
    has0[k] = g < G && lane < 31 && j0[k] < W;
    has1[k] = g < G && lane < 31 && j0[k] + 1 < W;
  }
  auto loadInput = [&] {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      a[k] = has0[k] ? in[j0[k]] : 0;
      b[k] = has1[k] ? in[j0[k] + 1] : 0;
    }
  };
  if constexpr (V == kInputEarly) loadInput();
  sn::gridDependencyWait();
  t[0] = arch::globalTimerNs();
  sn::gridLaunchDependents();
  if constexpr (V == kEpochFirst || V == kInputEarly) {
    e = *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]);
    use(e);
    t[1] = arch::globalTimerNs();
  }
  if constexpr (V == kEpochFirst) loadInput();
  if constexpr (V == kTogether) {
    loadInput();
    e = *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]);
  }
  if constexpr (V == kEpochIssue) {
    e = *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]);
    asm volatile("" ::: "memory");
    loadInput();
  }
  uint64_t all = e;
#pragma unroll
  for (int k = 0; k < K; ++k) all ^= a[k] ^ b[k];
  use(all);
  t[2] = arch::globalTimerNs();
  if constexpr (V == kTogether || V == kEpochIssue) t[1] = t[2];
  const int half = int(e & 1);
  std::byte* const myHalf = s.mine + half * kHalfBytes;
  std::byte* const peerHalf = s.peer + half * kHalfBytes;
  uint64_t* own = reinterpret_cast<uint64_t*>(s.out + s.rank * bytes);
  uint64_t* theirs = reinterpret_cast<uint64_t*>(s.out + q * bytes);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::size_t g = warp + std::size_t(k) * warps;
    if (g < G) sn::slotPut(peerHalf + 16 * (g * sn::kGroupSlots + lane), sn::groupPack(a[k], b[k], lane, 0));
  }
  t[3] = arch::globalTimerNs();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (has0[k]) own[j0[k]] = a[k];
    if (has1[k]) own[j0[k] + 1] = b[k];
  }
  t[4] = t[5] = t[3];
  bool failed = false;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::size_t g = warp + std::size_t(k) * warps;
    if (g >= G || failed) continue;
    std::byte* slotIn = myHalf + 16 * (g * sn::kGroupSlots + lane);
    const uint64_t w0 = arch::globalTimerNs();
    sn::SlotWords w{};
    bool gaveUp = false;
    for (;;) {
      w = sn::slotLoad(slotIn);
      if (sn::slotFull(w)) break;
      if (arch::globalTimerNs() - w0 > kWaitLimitNs) {
        atomicExch(s.err, 1);
        gaveUp = true;
        break;
      }
    }
    if (__any_sync(~0u, gaveUp)) {
      failed = true;
      continue;
    }
    t[4] = arch::globalTimerNs();
    sn::slotClear(slotIn);
    uint64_t x, y;
    sn::groupUnpack(w, lane, x, y);
    if (has0[k]) theirs[j0[k]] = x;
    if (has1[k]) theirs[j0[k] + 1] = y;
    t[5] = arch::globalTimerNs();
  }
  __syncthreads();
  t[6] = arch::globalTimerNs();
  uint64_t* rec = s.trace + (e % kTraceSlots) * kRecord;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int k = 0; k < kStamps; ++k) rec[k] = t[k];
  if (threadIdx.x == 0) {
    atomicMax(reinterpret_cast<unsigned long long*>(rec + kStamps), t[0]);
    atomicMax(reinterpret_cast<unsigned long long*>(rec + kStamps + 1), t[6]);
    atomicMax(reinterpret_cast<unsigned long long*>(rec + kStamps + 2), ~t[0]);
  }
  if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]) = e + 1;
}

struct Rank : micro::ExchangeRank {
  uint64_t* trace;  // kTraceSlots x kRecord
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  bool loopback = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--loopback") == 0) loopback = true;
    else { std::fprintf(stderr, "lat_trace_micro: unknown argument '%s' (usage: lat_trace_micro [--loopback])\n", argv[i]); return 2; }
  }
  int dev[2];
  micro::twoRankDevices("lat_trace_micro", loopback, dev);  // waits here are bounded (1 s) in every mode
  const int calls = 128, reps = 8;
  const std::size_t maxBytes = std::size_t(1) << 20;
  Rank R[2];
  for (int r = 0; r < 2; ++r) {
    R[r].allocate("lat_trace_micro", dev[r], r, maxBytes, kHalfBytes);
    CK(cudaMalloc(&R[r].trace, kTraceSlots * kRecord * sizeof(uint64_t)));
  }
  std::printf("%-12s %8s %2s %5s %7s %4s %9s | %6s %6s %6s %6s %6s %6s | %6s %6s %6s | %6s %s\n", "variant", "bytes", "k",
              "ctas", "threads", "rank", "us/call", "epoch", "input", "put", "poll", "store", "bar", "skew0", "late6",
              "gap", "period", "check");
  struct Row { int v, k; std::size_t bytes; int threads; };  // threads 0: the runtime's shape rule (k = 1)
  std::vector<Row> rows;
  for (int v : {int(kEpochFirst), int(kTogether), int(kInputEarly), int(kEpochIssue)})
    for (std::size_t b : {std::size_t(1024), std::size_t(4096), std::size_t(65536), std::size_t(262144)}) rows.push_back({v, 1, b, 0});
  for (std::size_t b : {std::size_t(16384), std::size_t(65536), std::size_t(262144)})
    for (auto [k, t] : {std::pair{1, 512}, std::pair{2, 256}, std::pair{4, 128}}) rows.push_back({int(kTogether), k, b, t});
  bool allOk = true;
  for (const Row& row : rows) {
    const std::size_t bytes = row.bytes;
    const int G = int(sn::packetGroups(bytes));
    int ctas, threads;
    if (row.threads == 0) {  // the runtime's latencyShape: one slot per thread, CTAs of 256 up to 128
      const int items = 32 * G;
      ctas = std::max(1, std::min(128, (items + 255) / 256));
      threads = std::clamp(((items + ctas - 1) / ctas + 31) / 32 * 32, 64, 512);
    } else {
      const int warps = (G + row.k - 1) / row.k;
      threads = std::max(64, std::min(row.threads, warps * 32));
      ctas = (warps * 32 + threads - 1) / threads;
    }
    if (ctas > 128 || ctas * threads / 32 * row.k < G) { std::fprintf(stderr, "lat_trace_micro: row does not fit\n"); return 2; }
    using KernelFn = void (*)(Side, std::size_t);
    static const KernelFn kernels[4][3] = {
        {traceKernel<kEpochFirst, 1>, traceKernel<kEpochFirst, 2>, traceKernel<kEpochFirst, 4>},
        {traceKernel<kTogether, 1>, traceKernel<kTogether, 2>, traceKernel<kTogether, 4>},
        {traceKernel<kInputEarly, 1>, traceKernel<kInputEarly, 2>, traceKernel<kInputEarly, 4>},
        {traceKernel<kEpochIssue, 1>, traceKernel<kEpochIssue, 2>, traceKernel<kEpochIssue, 4>}};
    const KernelFn kernel = kernels[row.v][row.k == 1 ? 0 : row.k == 2 ? 1 : 2];
    cudaGraphExec_t ge[2];
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(dev[r]));
      micro::setWords<<<1, 128>>>(R[r].epochs, 128, 1);
      CK(cudaMemset(R[r].err, 0, sizeof(int)));
      CK(cudaMemset(R[r].trace, 0, kTraceSlots * kRecord * sizeof(uint64_t)));
      CK(cudaMemset(R[r].packets, 0, 2 * kHalfBytes));
      CK(cudaMemset(R[r].out, 0, 2 * maxBytes));
      CK(cudaDeviceSynchronize());
      const Side s{R[r].epochs, R[r].packets, R[1 - r].packets, R[r].in, R[r].out, r, R[r].err, R[r].trace};
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(unsigned(ctas));
      cfg.blockDim = dim3(unsigned(threads));
      cfg.stream = R[r].s;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      CK(cudaStreamBeginCapture(R[r].s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < calls; ++i) CK(cudaLaunchKernelEx(&cfg, kernel, s, bytes));
      ge[r] = instantiateCapture(R[r].s, "lat_trace_micro");
    }
    const float ms = replayOnTwoGpus(ge, {R[0].s, R[1].s}, reps, "lat_trace_micro", dev);
    for (int r = 0; r < 2; ++r) CK(cudaGraphExecDestroy(ge[r]));
    const bool ok = micro::allGatherOk("lat_trace_micro", {R[0].in, R[1].in}, {R[0].out, R[1].out},
                                       {R[0].err, R[1].err}, bytes);
    allOk = allOk && ok;
    // Phases of the timed calls (epochs 1 + calls .. 1 + (reps + 1) * calls - 1).
    for (int r = 0; r < 2; ++r) {
      std::vector<uint64_t> tr(std::size_t(kTraceSlots) * kRecord);
      CK(cudaMemcpy(tr.data(), R[r].trace, tr.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
      std::vector<double> ph[kStamps - 1], skew0, late6, gap, period;
      for (int e = 1 + calls; e < 1 + (reps + 1) * calls - 1; ++e) {
        const uint64_t* a = &tr[std::size_t(e) * kRecord];
        const uint64_t* b = &tr[std::size_t(e + 1) * kRecord];
        for (int k = 1; k < kStamps; ++k) ph[k - 1].push_back(double(a[k] - a[k - 1]));
        const uint64_t minT0 = ~a[kStamps + 2], maxT0 = a[kStamps], maxT6 = a[kStamps + 1], nextMinT0 = ~b[kStamps + 2];
        skew0.push_back(double(maxT0 - minT0));
        late6.push_back(double(maxT6 - a[6]));
        gap.push_back(double(nextMinT0 - maxT6));
        period.push_back(double(nextMinT0 - minT0));
      }
      std::printf("%-12s %8zu %2d %5d %7d %4d %9.3f |", variantName(row.v), bytes, row.k, ctas, threads, r,
                  ms * 1000.0 / double(reps * calls));
      for (int k = 0; k < kStamps - 1; ++k) std::printf(" %6.0f", median(ph[k]));
      std::printf(" | %6.0f %6.0f %6.0f | %6.0f %s\n", median(skew0), median(late6), median(gap), median(period),
                  ok ? "ok" : "WRONG");
    }
    std::fflush(stdout);
  }
  std::printf("(ns, medians over the timed calls; CTA 0: epoch = t1-t0, input = t2-t1, put = t3-t2, poll = t4-t3\n"
              " (last group), store = t5-t4, bar = t6-t5; over all CTAs: skew0 = latest t0 - earliest t0, late6 =\n"
              " latest t6 - CTA 0's t6, gap = next call's earliest t0 - latest t6, period = earliest t0 to earliest t0)\n");
  return allOk ? 0 : 1;
}
