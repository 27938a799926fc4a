/// @file lat_floor_micro.cu
/// @brief Experiment E11 (bench/NOTES.md): where the ~2 us per small
/// collective call goes, and what the packet format costs at 64-512 KiB.
///
/// One process, two GPUs with peer access. Every row is 128 launches of one
/// kernel per GPU captured in a CUDA graph (programmatic dependent launch
/// unless the row says "no-pdl"), 1 warm-up replay, 8 timed replays; per
/// call = time / 1024, maximum over the two GPUs (the paper's method).
/// Kernels (each CTA keeps an epoch in its own slot, like the runtime):
///   empty        griddepcontrol.wait + launch_dependents, nothing else
///   epoch        + load the CTA's epoch, store epoch+1 at the end
///   local-store  + one 16-byte store per thread into local memory
///   remote-store + one 16-byte store per thread into the peer's memory
///                  (nobody waits for it: shows whether a kernel's NVLink
///                  stores delay its completion)
///   flag16 B     AllGather of B bytes per rank in the old packet format
///                {d0, f, d1, f} with f = epoch (8 payload bytes per 16)
///   group  B     AllGather of B bytes per rank in full/empty packet groups
///                (runtime/include/purlin/snac/packet_group.cuh; 496 payload
///                bytes and a header per 512; here without the header's
///                compare), the receiver clears what it read
///   group-spread the group kernel with its parameters spread over 64-byte
///                lines like the runtime's; group-spr-pf also reads them
///                all before griddepcontrol.wait
///   runtime B    the generated AllGather's latency kernel (printed by
///                purlinc from the SNAC IR, generated/allgather.cu; bf16,
///                makePlan's shape) on the same buffers
///   rt-AG/RS/AR/A2A M  the generated latency kernel of each collective,
///                bf16 sum, M = coll_bench's message size (AllGather: the
///                gathered output; the others: the input per rank);
///                rt-RS-any / rt-AR-any: the same call through the kernel
///                of every pair (the class dispatched per packet group)
/// Every exchange row is checked after its replays: every output byte
/// equals what the sender sent (inputs have bit 63 set in many words), and
/// reductions equal the host's fp32 sum rounded to bf16.
///
/// The runtime rows run unchecked, as the runtime does by default;
/// `--checked` bounds their waits (DeviceState::timeoutNs) like
/// CommOptions::checked. Loopback runs checked unless `--unchecked` (see
/// main): the A/B of the unchecked kernels needs `--loopback --unchecked`
/// on one GPU (the A/Bs of 2026-12-03 before that flag measured checked
/// waits). `--only PREFIX` runs only the rows whose kernel
/// name starts with PREFIX (E13: `--only rt-`, A/B of runtime variants).
/// `--loopback` (or a machine with one GPU) puts both ranks on device 0,
/// two streams: the "peer" memory is then local, so a row shows the cost of
/// the kernel's own code with the NVLink delivery replaced by an L2 one.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "micro_check.h"
#include "exchange_micro.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "purlin/arch/common.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/packet_lane.cuh"
#include "purlin/snac/packet_group.cuh"
#include "purlin/snac/plan.h"

// The generated collectives' programs (the rt-* rows run their latency
// kernels, compiled in purlin_generated).
#include "allgather.programs.h"
#include "allreduce.programs.h"
#include "alltoall.programs.h"
#include "reducescatter.programs.h"

#define CK(call) MICRO_CUDA_CHECK("lat_floor_micro", call)

namespace {

namespace arch = purlin::arch;
namespace sn = purlin::snac;

enum class Kind : int { Empty, Epoch, LocalStore, RemoteStore, Flag16, Group, GroupSpread, GroupSpreadPf, Runtime, Variant };

constexpr std::size_t kHalfBytes = std::size_t(4) << 20;  // packet half (both formats)
constexpr uint64_t kWaitLimitNs = 1000000000ull;

struct Side {
  uint64_t* epochs;      // local, one slot per CTA
  std::byte* mine;       // local packet area: 2 halves
  std::byte* peer;       // the peer's packet area
  const std::byte* in;   // B bytes
  std::byte* out;        // 2 * B bytes: rank r's bytes at r * B
  int rank;
  int* err;
};

__device__ __forceinline__ bool expired(uint64_t t0, int* err) {
  if (arch::globalTimerNs() - t0 < kWaitLimitNs) return false;
  atomicExch(err, 1);
  return true;
}

/// Everything after the grid dependency wait.
template <Kind K>
__device__ __forceinline__ void floorBody(const Side& s, std::size_t bytes) {
  if constexpr (K == Kind::Empty) return;
  const uint64_t e = *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]);
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x, T = std::size_t(gridDim.x) * blockDim.x;
  const int half = int(e & 1);
  std::byte* const myHalf = s.mine + half * kHalfBytes;
  std::byte* const peerHalf = s.peer + half * kHalfBytes;
  const int q = 1 - s.rank;
  if constexpr (K == Kind::LocalStore) arch::stVolatile16(myHalf + 16 * t, make_uint4(1, 2, 3, 4));
  if constexpr (K == Kind::RemoteStore) arch::stVolatile16(peerHalf + 16 * t, make_uint4(1, 2, 3, 4));
  if constexpr (K == Kind::Flag16) {
    const uint32_t f = uint32_t(e);
    const std::size_t W = bytes / 8;
    for (std::size_t w = t; w < W; w += T) {
      const uint64_t d = reinterpret_cast<const uint64_t*>(s.in)[w];
      arch::stVolatile16(peerHalf + 16 * w, make_uint4(uint32_t(d), f, uint32_t(d >> 32), f));
      reinterpret_cast<uint64_t*>(s.out + s.rank * bytes)[w] = d;
      const uint64_t t0 = arch::globalTimerNs();
      uint4 p;
      do {
        p = arch::ldVolatile16(myHalf + 16 * w);
        if (p.y == f && p.w == f) break;
      } while (!expired(t0, s.err));
      reinterpret_cast<uint64_t*>(s.out + q * bytes)[w] = uint64_t(p.x) | (uint64_t(p.z) << 32);
    }
  }
  if constexpr (K == Kind::Group) {
    const std::size_t W = bytes / 8, G = sn::packetGroups(bytes);
    const int lane = sn::laneId();
    for (std::size_t g = t / 32; g < G; g += T / 32) {
      const std::size_t j0 = g * sn::kGroupPayloadWords + 2 * std::size_t(lane), j1 = j0 + 1;
      const bool has0 = lane < 31 && j0 < W, has1 = lane < 31 && j1 < W;
      const uint64_t* in = reinterpret_cast<const uint64_t*>(s.in);
      const uint64_t a = has0 ? in[j0] : 0, b = has1 ? in[j1] : 0;
      std::byte* slotOut = peerHalf + 16 * (g * sn::kGroupSlots + lane);
      sn::slotPut(slotOut, sn::groupPack(a, b, lane, 0));
      uint64_t* own = reinterpret_cast<uint64_t*>(s.out + s.rank * bytes);
      if (has0) own[j0] = a;
      if (has1) own[j1] = b;
      std::byte* slotIn = myHalf + 16 * (g * sn::kGroupSlots + lane);
      const uint64_t t0 = arch::globalTimerNs();
      sn::SlotWords w{};
      bool gaveUp = false;
      for (;;) {  // as the runtime's warpPollSlot: spin alone, converge at the vote
        w = sn::slotLoad(slotIn);
        if (sn::slotFull(w)) break;
        if ((gaveUp = expired(t0, s.err))) break;
      }
      if (__any_sync(~0u, gaveUp)) break;
      sn::slotClear(slotIn);
      uint64_t x, y;
      sn::groupUnpack(w, lane, x, y);
      uint64_t* theirs = reinterpret_cast<uint64_t*>(s.out + q * bytes);
      if (has0) theirs[j0] = x;
      if (has1) theirs[j1] = y;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]) = e + 1;
}

template <Kind K>
__global__ void floorKernel(Side s, std::size_t bytes) {
  sn::gridDependencyWait();
  sn::gridLaunchDependents();
  floorBody<K>(s, bytes);
}

/// The group kernel with its parameters spread over 64-byte lines, as the
/// runtime's (DeviceComm + Plan, 656 bytes): does reading parameters cost
/// on the critical path (constant-cache misses after the wait), and does
/// reading them before the wait (Pf) hide that?
struct Spread {
  struct alignas(64) Line {
    uint64_t v;
  };
  Line epochs, mine, peer, in, out, rank, err, bytes;
};
template <bool Pf>
__global__ void spreadKernel(Spread sp) {
  if constexpr (Pf)
    asm volatile("" ::"l"(sp.epochs.v), "l"(sp.mine.v), "l"(sp.peer.v), "l"(sp.in.v), "l"(sp.out.v),
                 "l"(sp.rank.v), "l"(sp.err.v), "l"(sp.bytes.v));
  sn::gridDependencyWait();
  sn::gridLaunchDependents();
  const Side s{reinterpret_cast<uint64_t*>(sp.epochs.v), reinterpret_cast<std::byte*>(sp.mine.v),
               reinterpret_cast<std::byte*>(sp.peer.v), reinterpret_cast<const std::byte*>(sp.in.v),
               reinterpret_cast<std::byte*>(sp.out.v), int(sp.rank.v), reinterpret_cast<int*>(sp.err.v)};
  floorBody<Kind::Group>(s, std::size_t(sp.bytes.v));
}

/// The group kernel with the runtime's pieces switched in one at a time
/// (bisects "runtime" against "group"): kVEpoch = ctaBeginCall/ctaEndCall
/// on the runtime's DeviceState; kVRegion = slot addresses from
/// packetRegion/laneSlot; kVWord = the runtime's loadLane/storeLane;
/// kVPoll = warpPollSlot (SpinBound, unchecked).
/// Finer: kVEnd = the micro's epoch slots written like the session-3
/// ctaEndCall (all 128 slots, volatile) plus a mirror word in another line
/// of DeviceState (where the runtime's DeviceState::epoch mirror was, until
/// E11 dropped it); kVLoad / kVStore = only loadLane / only storeLane;
/// kVRegionPf = the packetRegion bases computed before griddepcontrol.wait
/// (only `half` after it).
/// kVSlots = all 128 slots written weakly, no mirror; kVMirror = the own
/// slot plus the mirror word. (kVEpoch is the runtime's ctaBeginCall /
/// ctaEndCall as they are now.)
enum : int {
  kVEpoch = 1, kVRegion = 2, kVWord = 4, kVPoll = 8, kVEnd = 16, kVLoad = 32, kVStore = 64, kVRegionPf = 128,
  kVSlots = 256, kVMirror = 512
};
template <int F>
__global__ void variantKernel(Side s, purlin::DeviceComm dc, sn::Plan pl, std::size_t bytes) {
  namespace ld = sn::packet;
  uint64_t e;
  std::byte *outBase = nullptr, *inBase = nullptr;
  std::size_t halfStride = 0;
  if constexpr ((F & kVRegionPf) != 0) {
    const int rr = s.rank;
    outBase = reinterpret_cast<std::byte*>(sn::packetRegion(dc, (rr + 1) % pl.n, 0, rr, pl.packetRegion));
    inBase = reinterpret_cast<std::byte*>(sn::packetRegion(dc, rr, 0, 1 - rr, pl.packetRegion));
    halfStride = dc.packetHalfBytes;
    asm volatile("" ::"l"(outBase), "l"(inBase), "l"(halfStride));
  }
  if constexpr ((F & kVEpoch) != 0) {
    e = sn::ctaBeginCall(dc);
  } else {
    sn::gridDependencyWait();
    e = *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]);
  }
  sn::gridLaunchDependents();
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x, T = std::size_t(gridDim.x) * blockDim.x;
  const int half = int(e & 1);
  const int r = s.rank, q = 1 - r;
  const std::size_t W = bytes / 8, G = sn::packetGroups(bytes);
  const int lane = sn::laneId();
  for (std::size_t g = t / 32; g < G; g += T / 32) {
    const ld::LaneWords x(g, lane, W);
    uint64_t a, b;
    if constexpr ((F & (kVWord | kVLoad)) != 0) {
      ld::loadLane<false>(x, s.in, bytes, a, b);
    } else {
      const uint64_t* in = reinterpret_cast<const uint64_t*>(s.in);
      a = x.has0 ? in[x.j0] : 0;
      b = x.has1 ? in[x.j0 + 1] : 0;
    }
    std::byte* slotOut;
    std::byte* slotIn;
    if constexpr ((F & kVRegionPf) != 0) {
      slotOut = outBase + half * halfStride + 16 * (g * sn::kGroupSlots + lane);
      slotIn = inBase + half * halfStride + 16 * (g * sn::kGroupSlots + lane);
    } else if constexpr ((F & kVRegion) != 0) {
      slotOut = reinterpret_cast<std::byte*>(ld::laneSlot(sn::packetRegion(dc, (r + 1) % pl.n, half, r, pl.packetRegion), g, lane));
      slotIn = reinterpret_cast<std::byte*>(ld::laneSlot(sn::packetRegion(dc, r, half, q, pl.packetRegion), g, lane));
    } else {
      slotOut = s.peer + half * kHalfBytes + 16 * (g * sn::kGroupSlots + lane);
      slotIn = s.mine + half * kHalfBytes + 16 * (g * sn::kGroupSlots + lane);
    }
    sn::slotPut(slotOut, sn::groupPack(a, b, lane, 0));
    if constexpr ((F & (kVWord | kVStore)) != 0) {
      ld::storeLane<false>(x, s.out + r * bytes, bytes, a, b);
    } else {
      uint64_t* own = reinterpret_cast<uint64_t*>(s.out + r * bytes);
      if (x.has0) own[x.j0] = a;
      if (x.has1) own[x.j0 + 1] = b;
    }
    sn::SlotWords w{};
    if constexpr ((F & kVPoll) != 0) {
      if (!sn::warpPollSlot<sn::PollStagger::First>(dc, reinterpret_cast<purlin::Packet*>(slotIn), 0, w)) break;
    } else {
      const uint64_t t0 = arch::globalTimerNs();
      bool gaveUp = false;
      for (;;) {
        w = sn::slotLoad(slotIn);
        if (sn::slotFull(w)) break;
        if ((gaveUp = expired(t0, s.err))) break;
      }
      if (__any_sync(~0u, gaveUp)) break;
      sn::slotClear(slotIn);
    }
    sn::groupUnpack(w, lane, a, b);
    if constexpr ((F & (kVWord | kVStore)) != 0) {
      ld::storeLane<false>(x, s.out + q * bytes, bytes, a, b);
    } else {
      uint64_t* theirs = reinterpret_cast<uint64_t*>(s.out + q * bytes);
      if (x.has0) theirs[x.j0] = a;
      if (x.has1) theirs[x.j0 + 1] = b;
    }
  }
  if constexpr ((F & kVEpoch) != 0) {
    sn::ctaEndCall(dc, e);
  } else if constexpr ((F & kVSlots) != 0) {
    __syncthreads();
    for (unsigned slot = blockIdx.x + threadIdx.x * gridDim.x; slot < 128u; slot += blockDim.x * gridDim.x)
      s.epochs[slot] = e + 1;
  } else if constexpr ((F & kVMirror) != 0) {
    __syncthreads();
    if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]) = e + 1;
    if (blockIdx.x == 0 && threadIdx.x == 0) dc.state->counters[0] = uint32_t(e + 1);
  } else if constexpr ((F & kVEnd) != 0) {
    __syncthreads();
    for (std::size_t slot = blockIdx.x + std::size_t(threadIdx.x) * gridDim.x; slot < 128;
         slot += std::size_t(blockDim.x) * gridDim.x)
      *reinterpret_cast<volatile uint64_t*>(&s.epochs[slot]) = e + 1;
    if (blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<volatile uint32_t*>(&dc.state->counters[0]) = uint32_t(e + 1);
  } else {
    __syncthreads();
    if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t*>(&s.epochs[blockIdx.x]) = e + 1;
  }
}

using KernelFn = void (*)(Side, std::size_t);
KernelFn kernelOf(Kind k) {
  switch (k) {
    case Kind::Empty: return floorKernel<Kind::Empty>;
    case Kind::Epoch: return floorKernel<Kind::Epoch>;
    case Kind::LocalStore: return floorKernel<Kind::LocalStore>;
    case Kind::RemoteStore: return floorKernel<Kind::RemoteStore>;
    case Kind::Flag16: return floorKernel<Kind::Flag16>;
    case Kind::Group: return floorKernel<Kind::Group>;
    default: return nullptr;
  }
  return nullptr;
}

/// The runtime's launch-shape rule (plan_impl.h latencyShape): one work item
/// per thread, CTAs of 256 threads up to 128 CTAs, then up to 512 threads.
void shape(std::size_t items, int& ctas, int& threads) {
  std::size_t c = std::max<std::size_t>(1, (items + 255) / 256);
  if (c > 128) c = 128;
  std::size_t t = ((items + c - 1) / c + 31) / 32 * 32;
  t = std::clamp<std::size_t>(t, 64, 512);
  ctas = int(c);
  threads = int(t);
}

struct Rank : micro::ExchangeRank {
  purlin::DeviceState* state;  // the runtime rows' DeviceState
  uint64_t* signals;           // their signals (only FAILED is used: a spinning wait polls it)
};

/// rt-* rows: label, and coll_bench's element count for a message of `m`
/// bytes of bf16 with two ranks (AllGather: gathered output; the others:
/// input per rank; counts as in docs/snac-protocol.md).
const char* collLabel(sn::CollKind c) {
  switch (c) {
    case sn::CollKind::AllGather: return "rt-AG";
    case sn::CollKind::ReduceScatter: return "rt-RS";
    case sn::CollKind::AllReduce: return "rt-AR";
    case sn::CollKind::AllToAll: return "rt-A2A";
  }
  return "rt-?";
}
std::size_t messageCount(sn::CollKind c, std::size_t m) {
  return c == sn::CollKind::AllReduce ? m / 2 : m / 4;  // AG: n*count*2 = m; RS, A2A: input n*count*2 = m
}

/// The latency kernels purlinc printed from the SNAC IR (generated/, their
/// programs headers included above, the kernels in purlin_generated), whole words; the plan
/// says bf16 sum, and the reductions take the kernels the launch picks for
/// it (the default policy specializes bf16 sum: purlin/reduction.h Pair).
using RuntimeFn = sn::ProgramKernel;
/// anyPair: the reductions' kernel of every pair instead (the call's class
/// dispatched once per packet group): the rt-RS-any / rt-AR-any rows, the
/// price of that dispatch for bf16 sum against its specialized kernel.
constexpr int kBf16Sum = purlin::pairIndex(purlin::DType::BF16, purlin::RedOp::Sum);
RuntimeFn runtimeKernel(sn::CollKind c, bool anyPair) {
  switch (c) {
    case sn::CollKind::AllGather: return purlin::gen::allGather_Programs::latency<true>(2);
    case sn::CollKind::ReduceScatter:
      return anyPair ? purlin::gen::reduceScatter_Programs::latency<true, purlin::kAnyPair>(2)
                     : purlin::gen::reduceScatter_Programs::latency<true, kBf16Sum>(2);
    case sn::CollKind::AllReduce:
      return anyPair ? purlin::gen::allReduce_Programs::latency<true, purlin::kAnyPair>(2)
                     : purlin::gen::allReduce_Programs::latency<true, kBf16Sum>(2);
    case sn::CollKind::AllToAll: return purlin::gen::allToAll_Programs::latency<true>(2);
  }
  return nullptr;
}

/// bf16 a + b in fp32, rounded to nearest even; NaN stays NaN (any payload).
uint16_t bf16Add(uint16_t a, uint16_t b) {
  auto f = [](uint16_t h) { uint32_t u = uint32_t(h) << 16; float x; std::memcpy(&x, &u, 4); return x; };
  const float s = f(a) + f(b);
  if (std::isnan(s)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &s, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
bool sameBf16(uint16_t got, uint16_t want) {
  const bool nanGot = (got & 0x7f80) == 0x7f80 && (got & 0x7f) != 0, nanWant = (want & 0x7f80) == 0x7f80 && (want & 0x7f) != 0;
  return nanWant ? nanGot : got == want;
}

/// Checks an rt-* row: both ranks' outputs against the host's result from
/// both inputs, and no wait of either rank gave up.
bool checkCollective(sn::CollKind c, std::size_t m, const Rank (&R)[2]) {
  const std::size_t count = messageCount(c, m);
  const std::size_t inElems = c == sn::CollKind::AllGather ? count : c == sn::CollKind::AllReduce ? count : 2 * count;
  const std::size_t outElems = c == sn::CollKind::ReduceScatter ? count : c == sn::CollKind::AllReduce ? count : 2 * count;
  std::vector<uint16_t> in[2], out(outElems);
  for (int r = 0; r < 2; ++r) {
    in[r].resize(inElems);
    CK(cudaMemcpy(in[r].data(), R[r].in, inElems * 2, cudaMemcpyDeviceToHost));
  }
  for (int r = 0; r < 2; ++r) {
    uint32_t failed = 0;
    CK(cudaMemcpy(&failed, &R[r].state->failed, sizeof failed, cudaMemcpyDeviceToHost));
    if (failed != 0) return false;
    CK(cudaMemcpy(out.data(), R[r].out, outElems * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < outElems; ++i) {
      uint16_t want = 0;
      switch (c) {
        case sn::CollKind::AllGather: want = in[i / count][i % count]; break;
        case sn::CollKind::AllToAll: want = in[i / count][r * count + i % count]; break;
        case sn::CollKind::ReduceScatter: want = bf16Add(in[0][r * count + i], in[1][r * count + i]); break;
        case sn::CollKind::AllReduce: want = bf16Add(in[0][i], in[1][i]); break;
      }
      const bool copy = c == sn::CollKind::AllGather || c == sn::CollKind::AllToAll;
      if (copy ? out[i] != want : !sameBf16(out[i], want)) return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  bool loopback = false, checked = false, unchecked = false;
  const char* only = "";  // --only PREFIX: the rows whose kernel name starts with PREFIX
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--loopback") == 0) loopback = true;
    else if (std::strcmp(argv[i], "--checked") == 0) checked = true;
    else if (std::strcmp(argv[i], "--unchecked") == 0) unchecked = true;
    else if (std::strcmp(argv[i], "--only") == 0) {
      if (i + 1 == argc) {
        std::fprintf(stderr, "lat_floor_micro: --only needs a PREFIX (e.g. --only rt-)\n");
        return 2;
      }
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "lat_floor_micro: unknown argument '%s' (usage: lat_floor_micro [--loopback] [--checked | --unchecked] [--only PREFIX])\n",
                   argv[i]);
      return 2;
    }
  }
  int dev[2];
  // Loopback: both ranks' grids (and the next grids programmatic launch
  // schedules early) must be resident on one device at once, which nothing
  // guarantees; bounded waits turn that into a failed row, not a hang.
  // --unchecked keeps them unbounded anyway (the runtime's default mode,
  // what an A/B of the latency kernels must measure): run it under an
  // outer time limit.
  if (micro::twoRankDevices("lat_floor_micro", loopback, dev) && !unchecked) checked = true;
  if (checked && unchecked) {
    std::fprintf(stderr, "lat_floor_micro: --checked and --unchecked exclude each other\n");
    return 2;
  }
  std::printf("waits: %s\n", checked ? "checked (bounded)" : "unchecked");
  const int calls = 128, reps = 8;
  const std::size_t maxBytes = std::size_t(1) << 20;
  Rank R[2];
  for (int r = 0; r < 2; ++r) {
    R[r].allocate("lat_floor_micro", dev[r], r, maxBytes, kHalfBytes);
    CK(cudaMalloc(&R[r].state, sizeof(purlin::DeviceState)));
    CK(cudaMalloc(&R[r].signals, sizeof(uint64_t) * sn::kNumSignals));
    CK(cudaMemset(R[r].signals, 0, sizeof(uint64_t) * sn::kNumSignals));
  }
  struct Row {
    Kind k; const char* name; std::size_t bytes; bool pdl; int ctas = 0, threads = 0, flags = 0;
    sn::CollKind coll = sn::CollKind::AllGather;
    bool message = false;  // bytes = coll_bench's message size (rt-* rows)
    bool anyPair = false;  // rt-RS-any / rt-AR-any: the kernel of every pair (runtimeKernel)
  };
  std::vector<Row> rows = {
      {Kind::Empty, "empty", 0, true, 1, 32},          {Kind::Empty, "empty", 0, false, 1, 32},
      {Kind::Epoch, "epoch", 0, true, 1, 32},          {Kind::LocalStore, "local-store", 0, true, 1, 32},
      {Kind::RemoteStore, "remote-store", 0, true, 1, 32}, {Kind::RemoteStore, "remote-store", 0, false, 1, 32},
      {Kind::RemoteStore, "remote-store", 0, true, 8, 256},
  };
  for (bool pdl : {true, false}) {
    rows.push_back({Kind::Flag16, "flag16", 1024, pdl});
    rows.push_back({Kind::Group, "group", 1024, pdl});
  }
  for (std::size_t b : {std::size_t(1024), std::size_t(65536)}) {
    rows.push_back({Kind::GroupSpread, "group-spread", b, true});
    rows.push_back({Kind::GroupSpreadPf, "group-spr-pf", b, true});
  }
  for (std::size_t b = 512; b <= maxBytes; b *= 2) rows.push_back({Kind::Runtime, "runtime", b, true});
  for (sn::CollKind c : {sn::CollKind::AllGather, sn::CollKind::ReduceScatter, sn::CollKind::AllReduce, sn::CollKind::AllToAll})
    for (std::size_t m : {std::size_t(1024), std::size_t(4096), std::size_t(65536), std::size_t(524288)}) {
      Row v{Kind::Runtime, collLabel(c), m, true};
      v.coll = c;
      v.message = true;
      rows.push_back(v);
      if (c == sn::CollKind::ReduceScatter || c == sn::CollKind::AllReduce) {
        v.name = c == sn::CollKind::AllReduce ? "rt-AR-any" : "rt-RS-any";
        v.anyPair = true;
        rows.push_back(v);
      }
    }
  for (std::size_t b : {std::size_t(1024), std::size_t(524288)})
    for (int f : {0, int(kVEpoch), int(kVRegion), int(kVWord), int(kVPoll), 15, int(kVEnd), int(kVLoad), int(kVStore),
                  int(kVRegionPf), int(kVSlots), int(kVMirror)}) {
      Row v{Kind::Variant, "variant", b, true};
      v.flags = f;
      rows.push_back(v);
    }
  for (std::size_t b = 2048; b <= maxBytes; b *= 2) {
    rows.push_back({Kind::Flag16, "flag16", b, true});
    rows.push_back({Kind::Group, "group", b, true});
  }
  std::erase_if(rows, [&](const Row& row) { return std::strncmp(row.name, only, std::strlen(only)) != 0; });
  if (rows.empty()) {
    std::fprintf(stderr, "lat_floor_micro: no row's kernel name starts with '%s'\n", only);
    return 2;
  }
  std::printf("%-13s %8s %6s %5s %7s %9s %s\n", "kernel", "bytes", "pdl", "ctas", "threads", "us/call", "check");
  bool allOk = true;
  for (Row& row : rows) {
    // The runtime's kernel: its DeviceComm over this program's buffers, its plan.
    sn::Plan plan[2];
    purlin::DeviceComm dcs[2];
    if (row.k == Kind::Runtime || row.k == Kind::Variant) {
      sn::WorldConsts w{};
      w.latencyMaxBytes = std::size_t(8) << 20;
      w.latencyCtas = 128;
      w.latencyThreads = 512;
      for (int r = 0; r < 2; ++r) {
        purlin::DeviceComm& dc = dcs[r];
        dc.rank = r;
        dc.size = 2;
        for (int p = 0; p < 2; ++p) dc.packets[p] = reinterpret_cast<purlin::Packet*>(R[p].packets);
        dc.state = R[r].state;
        dc.packetHalfBytes = kHalfBytes;
        for (int p = 0; p < 2; ++p) dc.signals[p] = R[p].signals;
        dc.checked = checked ? 1u : 0u;
        sn::CallArgs a;
        a.in = R[r].in;
        a.out = R[r].out;
        a.count = row.message ? messageCount(row.coll, row.bytes) : row.bytes / 2;
        a.dtype = purlin::DType::BF16;
        std::string e;
        // Latency plans only (no staging, no push lanes): any Atom stage count.
        const auto planWith = [&](auto rules) { return sn::makePlan(row.coll, 2, r, a, w, 0, kHalfBytes, plan[r], e, 1, rules); };
        const purlin::Status planned =
            row.coll == sn::CollKind::AllGather       ? planWith(purlin::gen::allGather_PlanRules{})
            : row.coll == sn::CollKind::ReduceScatter ? planWith(purlin::gen::reduceScatter_PlanRules{})
            : row.coll == sn::CollKind::AllReduce     ? planWith(purlin::gen::allReduce_PlanRules{})
                                                      : planWith(purlin::gen::allToAll_PlanRules{});
        if (planned != purlin::Status::Ok || !plan[r].latency ||
            !plan[r].words8) {
          if (e.empty()) e = !plan[r].latency ? "the plan is not the latency program" : "the plan is not whole words (words8)";
          std::fprintf(stderr, "lat_floor_micro: makePlan: %s\n", e.c_str());
          return 2;
        }
      }
      row.ctas = plan[0].latencyCtas;
      row.threads = plan[0].latencyThreads;
    }
    if (row.ctas == 0) {
      const std::size_t items = row.k == Kind::Flag16 ? row.bytes / 8 : 32 * sn::packetGroups(row.bytes);  // groups: 1 slot per thread
      shape(items, row.ctas, row.threads);
    }
    cudaGraphExec_t ge[2];
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(dev[r]));
      micro::setWords<<<1, 128>>>(R[r].epochs, 128, 1);
      CK(cudaMemset(R[r].err, 0, sizeof(int)));
      CK(cudaMemset(R[r].state, 0, sizeof(purlin::DeviceState)));
      micro::setWords<<<1, 128>>>(reinterpret_cast<uint64_t*>(reinterpret_cast<std::byte*>(R[r].state) +
                                                     offsetof(purlin::DeviceState, epochs)),
                            128, 1);
      // --checked: a lost packet fails the row (2 s) instead of hanging.
      const uint64_t timeoutNs = checked ? uint64_t(2'000'000'000) : 0;
      CK(cudaMemcpy(reinterpret_cast<std::byte*>(R[r].state) + offsetof(purlin::DeviceState, timeoutNs), &timeoutNs,
                    sizeof timeoutNs, cudaMemcpyHostToDevice));
      CK(cudaMemset(R[r].packets, 0, 2 * kHalfBytes));
      CK(cudaMemset(R[r].out, 0, 2 * maxBytes));
      CK(cudaDeviceSynchronize());
      Side s{R[r].epochs, R[r].packets, R[1 - r].packets, R[r].in, R[r].out, r, R[r].err};
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(unsigned(row.ctas));
      cfg.blockDim = dim3(unsigned(row.threads));
      cfg.stream = R[r].s;
      cfg.attrs = row.pdl ? &attr : nullptr;
      cfg.numAttrs = row.pdl ? 1 : 0;
      CK(cudaStreamBeginCapture(R[r].s, cudaStreamCaptureModeThreadLocal));
      auto u = [](const void* p) { return uint64_t(reinterpret_cast<std::uintptr_t>(p)); };
      const Spread sp{{u(s.epochs)}, {u(s.mine)}, {u(s.peer)}, {u(s.in)}, {u(s.out)}, {uint64_t(r)}, {u(s.err)}, {row.bytes}};
      for (int i = 0; i < calls; ++i) {
        if (row.k == Kind::Variant) {
          auto launch = [&](auto kernel) { CK(cudaLaunchKernelEx(&cfg, kernel, s, dcs[r], plan[r], row.bytes)); };
          switch (row.flags) {
            case 0: launch(variantKernel<0>); break;
            case kVEpoch: launch(variantKernel<kVEpoch>); break;
            case kVRegion: launch(variantKernel<kVRegion>); break;
            case kVWord: launch(variantKernel<kVWord>); break;
            case kVPoll: launch(variantKernel<kVPoll>); break;
            case kVEnd: launch(variantKernel<kVEnd>); break;
            case kVLoad: launch(variantKernel<kVLoad>); break;
            case kVStore: launch(variantKernel<kVStore>); break;
            case kVRegionPf: launch(variantKernel<kVRegionPf>); break;
            case kVSlots: launch(variantKernel<kVSlots>); break;
            case kVMirror: launch(variantKernel<kVMirror>); break;
            default: launch(variantKernel<15>); break;
          }
        } else if (row.k == Kind::Runtime)
          CK(cudaLaunchKernelEx(&cfg, runtimeKernel(row.coll, row.anyPair), dcs[r], plan[r], static_cast<const std::byte*>(R[r].in),
                                R[r].out));
        else if (row.k == Kind::GroupSpread) CK(cudaLaunchKernelEx(&cfg, spreadKernel<false>, sp));
        else if (row.k == Kind::GroupSpreadPf) CK(cudaLaunchKernelEx(&cfg, spreadKernel<true>, sp));
        else CK(cudaLaunchKernelEx(&cfg, kernelOf(row.k), s, row.bytes));
      }
      ge[r] = instantiateCapture(R[r].s, "lat_floor_micro");
    }
    const float ms = replayOnTwoGpus(ge, {R[0].s, R[1].s}, reps, "lat_floor_micro", dev);
    for (int r = 0; r < 2; ++r) CK(cudaGraphExecDestroy(ge[r]));
    std::string check = "-";
    if (row.message || row.k == Kind::Runtime) {
      // The runtime's kernel records a failed wait in its DeviceState, which checkCollective reads.
      const bool ok = checkCollective(row.coll, row.message ? row.bytes : 2 * row.bytes, R);
      check = ok ? "ok" : "WRONG";
      allOk = allOk && ok;
    } else if (row.k == Kind::Flag16 || row.k >= Kind::Group) {
      const bool ok = micro::allGatherOk("lat_floor_micro", {R[0].in, R[1].in}, {R[0].out, R[1].out},
                                         {R[0].err, R[1].err}, row.bytes);
      check = ok ? "ok" : "WRONG";
      allOk = allOk && ok;
    }
    std::string label = row.name;
    if (row.k == Kind::Variant) label += "/" + std::to_string(row.flags);
    std::printf("%-13s %8zu %6s %5d %7d %9.3f %s\n", label.c_str(), row.bytes, row.pdl ? "pdl" : "no-pdl", row.ctas,
                row.threads, ms * 1000.0 / double(reps * calls), check.c_str());
    std::fflush(stdout);
  }
  return allOk ? 0 : 1;
}
