/// @file device_counts.cuh
/// @brief V collectives whose counts live in device memory
/// (docs/device-counts.md): the counts kernel that reads, checks and agrees
/// on a call's counts before its program runs, and the two places a
/// program takes the ranges it resolved (the latency program's packet
/// regions, the throughput program's plan).
///
/// The host plans such a call at its bound (maxCount elements per block,
/// plan_impl.h planDeviceCounts), so every rank picks the same program and
/// shape without seeing a count. The launcher enqueues the counts kernel
/// right before the program, on the same stream, in every mode (it replaces
/// the checked mode's call check); the program, launched after it with
/// programmatic dependent launch, reads DeviceState::ranges after its grid
/// dependency wait, which orders it after the whole counts kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/device_comm.h"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/packet_lane.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"
#include "purlin/snac/program_launch.cuh"

namespace purlin::snac {

/// What a device-count call's counts kernel takes (a kernel parameter).
/// counts: AllGatherV and ReduceScatterV (n entries, the same on every
/// rank); the four arrays: AllToAllV (n entries each). `base`: the call's
/// hash from the host (callCheckOf: kind, maxCount, dtype, op).
struct DeviceCountsCall {
  CollKind kind{};
  int n = 0, rank = 0;
  uint32_t elemSize = 1;
  std::size_t maxCount = 0;
  const std::size_t* counts = nullptr;
  const std::size_t* sendCounts = nullptr;
  const std::size_t* sendDispls = nullptr;
  const std::size_t* recvCounts = nullptr;
  const std::size_t* recvDispls = nullptr;
  uint64_t base = 0;
};

/// Which entry a BadCounts record names (WaitError::signal = what *
/// kMaxRanks + k): the counts (AllGatherV, ReduceScatterV) or sendCounts,
/// sendDispls, recvCounts, recvDispls entry k; for kSelfBlock k = the rank
/// (sendCounts[k] != recvCounts[k]), for kOverlap the lower of the two
/// overlapping received blocks (expected = the other).
enum class CountsEntry : uint32_t { Counts = 0, SendDispls = 1, RecvCounts = 2, RecvDispls = 3, SelfBlock = 4, Overlap = 5 };

/// One rank's view of a device-count call, resolved by lane 0 of the
/// counts kernel: the byte ranges (zero when refused), the check values it
/// writes to (toPeer) and expects from (fromPeer) each peer, and the first
/// entry it refuses (ok false).
struct ResolvedCounts {
  /// The entries as read, lane k reading entry k of each array (counts in
  /// entries[0] for AllGatherV and ReduceScatterV; AllToAllV: sendCounts,
  /// sendDispls, recvCounts, recvDispls).
  std::size_t entries[4][kMaxRanks];
  CallRanges ranges;
  uint64_t toPeer[kMaxRanks], fromPeer[kMaxRanks];
  bool ok;
  uint32_t badEntry;
  uint64_t badLimit, badValue;
};

namespace detail {
/// Thread k < n: reads entry k of this rank's count arrays into
/// out.entries (plain loads: the stream ordered the kernel after whatever
/// wrote them; one round trip for all of them).
__device__ __forceinline__ void loadCounts(const DeviceCountsCall& c, ResolvedCounts& out, int k) {
  if (k >= c.n) return;
  if (hasPairCounts(c.kind)) {
    out.entries[0][k] = c.sendCounts[k];
    out.entries[1][k] = c.sendDispls[k];
    out.entries[2][k] = c.recvCounts[k];
    out.entries[3][k] = c.recvDispls[k];
  } else {
    out.entries[0][k] = c.counts[k];
  }
}

/// One thread, after loadCounts: checks the entries against the bound and
/// the capacities (deviceCountsCapacity), derives the ranges (layoutRanges;
/// AllToAllV: the displacements) and the check values (callCheckFor's, the
/// counts mixed in on the device).
__device__ inline void resolveCounts(const DeviceCountsCall& c, ResolvedCounts& out) {
  const int n = c.n, r = c.rank;
  const std::size_t E = c.elemSize, M = c.maxCount;
  std::size_t inCap = 0, outCap = 0;
  deviceCountsCapacity(c.kind, n, M, inCap, outCap);
  out.ok = true;
  const auto refuse = [&](CountsEntry what, int k, uint64_t limit, uint64_t value) {
    if (!out.ok) return;
    out.ok = false;
    out.badEntry = uint32_t(what) * uint32_t(kMaxRanks) + uint32_t(k);
    out.badLimit = limit;
    out.badValue = value;
  };
  CallRanges& g = out.ranges;
  if (hasPairCounts(c.kind)) {
    const std::size_t *sc = out.entries[0], *sd = out.entries[1], *rc = out.entries[2], *rd = out.entries[3];
    for (int k = 0; k < n; ++k) {
      if (sc[k] > M) refuse(CountsEntry::Counts, k, M, sc[k]);
      if (rc[k] > M) refuse(CountsEntry::RecvCounts, k, M, rc[k]);
      if (sc[k] <= M && sd[k] > inCap - sc[k]) refuse(CountsEntry::SendDispls, k, inCap - sc[k], sd[k]);
      if (rc[k] <= M && rd[k] > outCap - rc[k]) refuse(CountsEntry::RecvDispls, k, outCap - rc[k], rd[k]);
    }
    if (sc[r] != rc[r]) refuse(CountsEntry::SelfBlock, r, sc[r], rc[r]);
    for (int k = 0; k < n; ++k)
      for (int j = k + 1; j < n; ++j)
        if (rc[k] && rc[j] && rd[k] < rd[j] + rc[j] && rd[j] < rd[k] + rc[k]) refuse(CountsEntry::Overlap, k, j, 0);
    for (int k = 0; k < n; ++k) {
      g.txOff[k] = sd[k] * E, g.txLen[k] = sc[k] * E, g.rxOff[k] = rd[k] * E, g.rxLen[k] = rc[k] * E;
      out.toPeer[k] = detail::checkValueOf(fnvMix(fnvMix(c.base, sc[k]), rc[k]));
      out.fromPeer[k] = detail::checkValueOf(fnvMix(fnvMix(c.base, rc[k]), sc[k]));
    }
  } else {
    const std::size_t* counts = out.entries[0];
    std::size_t blockOff[kMaxRanks], blockLen[kMaxRanks];
    uint64_t h = c.base;
    std::size_t total = 0;
    for (int k = 0; k < n; ++k) {
      if (counts[k] > M) refuse(CountsEntry::Counts, k, M, counts[k]);
      const std::size_t count = counts[k] > M ? 0 : counts[k];
      blockOff[k] = total * E, blockLen[k] = count * E;
      total += count;  // <= n*maxCount: within the scattered side's capacity
      h = fnvMix(h, counts[k]);
    }
    layoutRanges(c.kind, n, blockOff, blockLen, blockLen[r], g.txOff, g.txLen, g.rxOff, g.rxLen);
    for (int k = 0; k < n; ++k) out.toPeer[k] = out.fromPeer[k] = detail::checkValueOf(h);
  }
  if (!out.ok) g = CallRanges{};
}

} // namespace detail

/// Verdict values (protocol.h VERDICT): this rank accepts the call, or not.
inline constexpr uint64_t kVerdictAccept = 1, kVerdictRefuse = 2;

/// The counts kernel of a device-count call with n >= 2 ranks: one warp.
/// Lane 0 resolves the counts; lane p (p != rank) compares each pair's
/// counts with peer p through CALL (a mismatch records Mismatch), then
/// every lane p tells peer p this rank's verdict through VERDICT (accept:
/// its own counts passed and every comparison matched) and reads p's. The
/// ranges are the resolved ones only if every rank accepted; otherwise
/// zero, so no rank's program moves a byte, and every rank has recorded a
/// failure (its own, or PeerFailed for a peer's refusal): asyncError()
/// reports it on every rank. Costs two round trips between the ranks.
template <int = 0>
__global__ void __launch_bounds__(32) deviceCountsKernel(DeviceComm dc, DeviceCountsCall call) {
  // The program (launched next, with programmatic serialization where the
  // launch uses it) may be scheduled now: its first grid dependency wait
  // still waits for this whole kernel, and it reads nothing before.
  gridLaunchDependents();
  __shared__ ResolvedCounts rc;
  const int lane = int(threadIdx.x), n = call.n;
  detail::loadCounts(call, rc, lane);
  __syncwarp();
  if (lane == 0) detail::resolveCounts(call, rc);
  __syncwarp();
  const uint64_t e = ctaEpoch(dc);  // epochs are equal between calls: slot 0 is this call's
  if (lane == 0 && !rc.ok) recordWaitError(dc, WaitKind::BadCounts, rc.badEntry, rc.badLimit, rc.badValue);
  bool agree = true;
  if (lane < n && lane != dc.rank)
    agree = checkCallWith(dc, rc.toPeer[lane], rc.fromPeer[lane], e, lane, true);  // a difference records Mismatch
  const bool mineOk = __all_sync(0xffffffffu, agree) && rc.ok;
  bool accepted = true;
  if (lane < n && lane != dc.rank) {
    uint64_t seen = 0;
    const Exchange x = exchangeWith<verdictIndex>(dc, mineOk ? kVerdictAccept : kVerdictRefuse, kVerdictAccept, e, lane,
                                                  true, seen);
    if (x == Exchange::Differs)
      recordWaitError(dc, WaitKind::PeerFailed, uint32_t(lane), uint32_t(WaitKind::BadCounts), seen & 0xffffffffu);
    accepted = x == Exchange::Match;
  }
  const bool all = __all_sync(0xffffffffu, accepted) && mineOk;
  if (lane < n) {
    CallRanges& g = dc.state->ranges;
    g.txOff[lane] = all ? rc.ranges.txOff[lane] : 0;
    g.txLen[lane] = all ? rc.ranges.txLen[lane] : 0;
    g.rxOff[lane] = all ? rc.ranges.rxOff[lane] : 0;
    g.rxLen[lane] = all ? rc.ranges.rxLen[lane] : 0;
  }
}

/// The one-rank form (n == 1, no peers): every CTA resolves the counts and
/// copies this rank's block to itself (in + txOff[0] to out + rxOff[0],
/// 16-byte vectors where both ends allow), CTA 0 records a refusal.
template <int = 0>
__global__ void deviceCountsLocalCopyKernel(DeviceComm dc, DeviceCountsCall call, const std::byte* in, std::byte* out) {
  __shared__ ResolvedCounts rc;
  detail::loadCounts(call, rc, int(threadIdx.x));
  __syncthreads();
  if (threadIdx.x == 0) detail::resolveCounts(call, rc);
  __syncthreads();
  if (!rc.ok) {
    if (blockIdx.x == 0 && threadIdx.x == 0) recordWaitError(dc, WaitKind::BadCounts, rc.badEntry, rc.badLimit, rc.badValue);
    return;
  }
  const std::byte* src = in + rc.ranges.txOff[0];
  std::byte* dst = out + rc.ranges.rxOff[0];
  const std::size_t bytes = rc.ranges.txLen[0];
  if (src == dst) return;
  const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = std::size_t(gridDim.x) * blockDim.x;
  if (((reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) & 15) == 0) {
    const std::size_t vecs = bytes / 16;
    for (std::size_t i = tid; i < vecs; i += stride)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
    for (std::size_t i = vecs * 16 + tid; i < bytes; i += stride) dst[i] = src[i];
  } else {
    for (std::size_t i = tid; i < bytes; i += stride) dst[i] = src[i];
  }
}

/// What launchCountsKernel takes (LaunchContext::preludeArg).
struct CountsLaunch {
  DeviceComm dc;
  DeviceCountsCall call;
};

/// LaunchContext::prelude of a device-count call: the counts kernel, one
/// warp, on the call's stream, without programmatic serialization (it runs
/// once the previous call's kernels ended). cudaLaunchKernelEx reports this
/// launch's own failure only (program_launch.cuh launchProgram). A
/// template, so that only a V collective's launch (which names it)
/// compiles the kernels of this file, not every unit that includes it.
template <int = 0>
Status launchCountsKernel(const LaunchContext& lc, const void* arg) {
  const auto& c = *static_cast<const CountsLaunch*>(arg);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cfg.stream = lc.stream;
  if (const cudaError_t err = cudaLaunchKernelEx(&cfg, deviceCountsKernel<>, c.dc, c.call); err != cudaSuccess) {
    (void)cudaGetLastError();
    return detail::report(Status::CudaError, lc.who() + "counts kernel launch: " + cudaGetErrorString(err));
  }
  return Status::Ok;
}

/// The one-rank form's launch (deviceCountsLocalCopyKernel): `ctas` CTAs of
/// 256 threads on `stream`.
template <int = 0>
Status launchCountsLocalCopy(cudaStream_t stream, int ctas, const DeviceComm& dc, const DeviceCountsCall& call,
                                    const std::byte* in, std::byte* out) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(256);
  cfg.stream = stream;
  if (const cudaError_t err = cudaLaunchKernelEx(&cfg, deviceCountsLocalCopyKernel<>, dc, call, in, out);
      err != cudaSuccess) {
    (void)cudaGetLastError();
    return detail::report(Status::CudaError, std::string("purlin::snac::launch: the counts kernel (one rank): ") +
                                                 cudaGetErrorString(err));
  }
  return Status::Ok;
}

namespace packet {
/// A V latency kernel after its grid dependency wait, for a device-count
/// call (Plan::deviceCounts): replaces the bound's offsets and lengths that
/// ctaRegions<true> put into `rg` with the call's (DeviceState::ranges).
/// len / W / G stay the bound's: every flow fits them. CTA-collective.
__device__ __forceinline__ void ctaDeviceRanges(const DeviceComm& dc, const Plan& pl, Regions& rg) {
  const int r = pl.rank, n = pl.n, t = int(threadIdx.x);
  const CallRanges& g = dc.state->ranges;
  if (t >= 1 && t < n) {
    const int q = (r + t) % n, p = (r + n - t) % n;
    rg.tx[t - 1] = g.txOff[q];
    rg.rx[t - 1] = g.rxOff[p];
    rg.sendLen[t - 1] = g.txLen[q];
    rg.recvLen[t - 1] = g.rxLen[p];
  }
  if (t == 0) {
    rg.ownTx = g.txOff[r];
    rg.ownRx = g.rxOff[r];
    rg.ownLen = g.rxLen[r];
  }
  __syncthreads();
}
} // namespace packet

/// Shared memory for a Plan (a __shared__ variable takes no initializer;
/// Plan's members have defaults).
struct alignas(alignof(Plan)) PlanStorage {
  unsigned char bytes[sizeof(Plan)];
};

/// A V throughput kernel after ctaBeginCall: the plan its roles read. A
/// host-count call's is the kernel parameter; a device-count call's a copy
/// in `storage` with the call's ranges (DeviceState::ranges). CTA-collective.
__device__ __forceinline__ const Plan& ctaResolvedPlan(const DeviceComm& dc, const Plan& pl, PlanStorage& storage) {
  if (!pl.deviceCounts) return pl;
  Plan& shared = *reinterpret_cast<Plan*>(storage.bytes);
  if (threadIdx.x == 0) {
    memcpy(storage.bytes, &pl, sizeof(Plan));
    const CallRanges& g = dc.state->ranges;
    for (int k = 0; k < pl.n; ++k)
      shared.txOff[k] = g.txOff[k], shared.txLen[k] = g.txLen[k], shared.rxOff[k] = g.rxOff[k], shared.rxLen[k] = g.rxLen[k];
  }
  __syncthreads();
  return shared;
}

} // namespace purlin::snac
