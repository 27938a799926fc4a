/// @file plan.h
/// @brief Host-side planning of one collective call: argument validation,
/// byte ranges per peer, the program choice its printed rules make
/// (NAME_PlanRules, purlinc), chunking and cyclic staging slots. Plain C++ (no CUDA), so it is unit-tested on the
/// CPU; the result (Plan) is passed by value to the kernels.
///
/// Every rank computes the same decision from the same arguments: nothing
/// here depends on the rank except the rank's own byte ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "purlin/device_comm.h"
#include "purlin/limits.h"
#include "purlin/snac/kinds.h"
#include "purlin/snac/protocol.h"
#include "purlin/types.h"

namespace purlin::snac {

/// Per world size policy constants, emitted by purlinc from the IR: one
/// member per row of purlin/policy_knobs.def (what each sets, its JSON key
/// and what 0 means), in its order. Every member has a default (0), so a
/// partial or empty initializer is still a constant expression (nvcc
/// rejects partially initialized tables). `push`: the throughput transfer
/// (false = pull, consumers read the peers' staging); directCtas < 0: the
/// direct program is off.
struct WorldConsts {
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) Type Const = 0;
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) bool Const = false;
#include "purlin/policy_knobs.def"
};

/// Default packet slots (16 bytes, two payload words) per thread of the
/// latency program: a thread polls one slot at a time (bench/NOTES.md E5).
inline constexpr int kLatencySlotsPerThread = 1;
/// CTA size of the latency program while it still spreads over more CTAs
/// (more SMs issue the packet stores and polls; bench/NOTES.md E5).
inline constexpr int kLatencySpreadThreads = 256;

/// Push transfer: smallest chunk, and chunks per CTA when the policy says 0.
inline constexpr std::size_t kMinPushChunk = std::size_t(32) << 10;
inline constexpr int kDefaultChunksPerCta = 4;

/// Bit sets of dtypes and ops (the policy masks purlinc's instantiation
/// table takes: purlin/reduction.h reductionClassesOf).
PURLIN_HD constexpr unsigned dtypeBit(DType t) {
  return unsigned(t) < unsigned(kNumDTypes) ? 1u << unsigned(t) : 0u;
}
PURLIN_HD constexpr unsigned opBit(RedOp o) { return unsigned(o) < unsigned(kNumRedOps) ? 1u << unsigned(o) : 0u; }
inline constexpr int kDefaultLanes = 2;         // stage role (bench/NOTES.md E7-E8)
inline constexpr int kDefaultConsumeLanes = 1;  // consume and gather roles (full pipeline depth for local copies)

/// Whether `lanes` lanes of a CTA can share an Atom of `stages` pipeline
/// stages (each lane gets stages / lanes: lane.cuh LaneAtomOf).
PURLIN_HD constexpr bool lanesSplitStages(int lanes, int stages) {
  return lanes == 1 || (stages % lanes == 0 && stages >= lanes);
}
/// Lanes per CTA a push role runs with (the one rule of the runtime's plan,
/// the printed kernel and the SNAC IR): the policy's count (0 = `fallback`,
/// kDefaultLanes or kDefaultConsumeLanes), 2 only when a lane is a whole
/// number of warp pairs (named barriers count warps) and gets half of the
/// Atom's `stages`; otherwise 1. `policyLanes` > 2 is refused by makePlan.
PURLIN_HD constexpr int pushLanes(int policyLanes, int fallback, int threads, int stages) {
  const int want = policyLanes > 0 ? policyLanes : fallback;
  return want == 2 && threads % 64 == 0 && lanesSplitStages(2, stages) ? 2 : 1;
}

/// The layout of a staging half: the one rule of the runtime's plan
/// (makePlan), the IR's bound numbers (bindPolicy) and its geometry
/// (computeGeometry). The S region takes the capacity (a composition: half
/// of it, the Y region after it); under the push transfer it holds one
/// region per source (n-1 of them, a composition's Y region as many). Bytes
/// are multiples of 16.
inline std::size_t stagingRegionBytes(bool compose, std::size_t capacity) {
  return (compose ? capacity / 2 : capacity) & ~std::size_t(15);
}
inline std::size_t pushSourceRegionBytes(bool compose, int n, std::size_t capacity) {
  return ((compose ? capacity / 2 : capacity) / std::size_t(n - 1)) & ~std::size_t(15);
}
/// Cyclic slots of `chunk` bytes in a region of `region` bytes: at most
/// `cap` (kMaxSlots; the IR's sliced push variant less), and of a Y region
/// (a composition's only, else 0) at most kMaxYSlots.
inline void stagingSlots(std::size_t region, std::size_t chunk, bool compose, int cap, int& slots, int& ySlots) {
  const std::size_t fit = region / chunk;
  slots = int(fit < std::size_t(cap) ? fit : std::size_t(cap));
  ySlots = compose ? int(fit < std::size_t(kMaxYSlots) ? fit : std::size_t(kMaxYSlots)) : 0;
}

/// Direct program defaults (bench/NOTES.md E9).
inline constexpr std::size_t kDirectMinBytes = std::size_t(4) << 20;
inline constexpr int kDirectCtas = 32;
inline constexpr int kDirectThreads = 512;
inline constexpr std::size_t kDirectEngineMinBytes = std::size_t(128) << 20;
/// Per-CTA share of the bytes a rank writes below which fewer CTAs are launched.
inline constexpr std::size_t kDirectBytesPerCta = std::size_t(64) << 10;
/// Most threads per direct CTA (its kernel's launch bound).
inline constexpr int kDirectMaxThreads = limits::kMaxDirectThreads;
/// Threads per CTA of the copy-engine form's reduce kernel (its launch
/// bound; it streams two local operands per element: bench/NOTES.md E10,
/// 1024 threads reduced the ReduceScatter tail by ~12% against 512).
inline constexpr int kDirectEngineReduceThreads = 1024;

/// Arguments of one call, as NCCL takes them (see docs/snac-protocol.md for
/// what `count` means per collective).
struct DeviceLaunch;  // device_api.cuh

struct CallArgs {
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t count = 0;
  DType dtype = DType::F32;
  RedOp op = RedOp::Sum;
  int root = 0;
  const std::size_t* counts = nullptr;      ///< AllGatherV, ReduceScatterV: counts[n], the same on every rank
  /// AllToAllV (MPI's alltoallv): elements this rank sends to rank k from
  /// in + sendDispls[k], and receives from rank k at out + recvDispls[k]
  /// (element units); maxCount bounds every sendCounts entry of every rank
  /// and is the same on every rank (it picks the program: a rank sees only
  /// its own row and column of the count matrix).
  const std::size_t* sendCounts = nullptr;
  const std::size_t* sendDispls = nullptr;
  const std::size_t* recvCounts = nullptr;
  const std::size_t* recvDispls = nullptr;
  std::size_t maxCount = 0;
  /// The V forms' counts in device memory (docs/device-counts.md): counts
  /// (AllGatherV, ReduceScatterV) or the four AllToAllV arrays are device
  /// pointers the kernels read when the call runs, maxCount bounds every
  /// entry on every rank and picks the program, and the buffers hold the
  /// bound's capacity (deviceCountsCapacity). Not the direct program.
  bool countsOnDevice = false;
  /// The device API (device_api.cuh, docs/device-api.md): the user's
  /// kernel that runs the latency program through NAME_device, launched in
  /// place of the latency kernel (null: the printed programs). Such a call
  /// takes the latency program or is refused (Unsupported): never the
  /// direct or throughput program, never counts in device memory.
  const DeviceLaunch* deviceLaunch = nullptr;
};

/// Elements of the input and output a device-count call may touch
/// (docs/device-counts.md): a packed side holds one block (maxCount), a
/// scattered or transposed side n blocks (n*maxCount). The counts kernel
/// refuses counts or displacements that would reach past them.
PURLIN_HD void deviceCountsCapacity(CollKind kind, int n, std::size_t maxCount, std::size_t& inElems,
                                    std::size_t& outElems) {
  inElems = hasPackedInput(kind) ? maxCount : std::size_t(n) * maxCount;
  outElems = hasPackedOutput(kind) ? maxCount : std::size_t(n) * maxCount;
}

/// The byte ranges of a fixed or V layout's call (not a composition, not
/// pair counts) from its blocks: block k is blockLen[k] bytes at blockOff[k]
/// of the scattered side, `own` this rank's block. A packed input sends the
/// whole own block to every peer and a scattered one block k to rank k; a
/// packed output receives one block and a scattered one block k from rank
/// k (kinds.h layouts). The one rule of the host plan (planByteRanges) and
/// of a device-count call's counts kernel.
PURLIN_HD void layoutRanges(CollKind kind, int n, const std::size_t* blockOff, const std::size_t* blockLen,
                            std::size_t own, std::size_t* txOff, std::size_t* txLen, std::size_t* rxOff,
                            std::size_t* rxLen) {
  for (int k = 0; k < n; ++k) {
    txOff[k] = hasPackedInput(kind) ? 0 : blockOff[k];
    txLen[k] = hasPackedInput(kind) ? own : blockLen[k];
    rxOff[k] = hasPackedOutput(kind) ? 0 : blockOff[k];
    rxLen[k] = hasPackedOutput(kind) ? own : blockLen[k];
  }
}

// CollKind (the collectives the runtime runs), toString, isReduction:
// kinds.h, from collectives.def.

/// Everything a kernel needs besides the DeviceComm. Byte ranges:
///  tx[k]: the bytes of this rank's input that go to rank k
///         (AllGather, Gather: the whole input for every k; Broadcast,
///         Reduce: partition k of the count, like AllReduce);
///  rx[p]: where rank p's bytes land in this rank's output (copy collectives),
///         or, for reductions, the output range of partition p
///         (ReduceScatter, Scatter: only p == rank, at offset 0).
/// A rooted collective's ranges are the same on every rank; which rank
/// reads or writes which of them is the printed program's (root or not).
struct Plan {
  CollKind kind{};
  int n = 0, rank = 0;
  uint32_t elemSize = 1;
  DType dtype = DType::F32;
  RedOp op = RedOp::Sum;
  int root = 0;           ///< rooted collectives (isRooted): the root rank, checked < n
  bool empty = false;     ///< no data on any rank: nothing is launched, the epoch stays
  bool latency = false;   ///< packet program (else throughput program)
  /// CallArgs::countsOnDevice: the byte ranges below are the bound's
  /// (maxCount per block); the kernels read the call's own from
  /// DeviceState::ranges, which its counts kernel wrote.
  bool deviceCounts = false;
  std::size_t msgBytes = 0;
  std::size_t txOff[kMaxRanks] = {}, txLen[kMaxRanks] = {};
  std::size_t rxOff[kMaxRanks] = {}, rxLen[kMaxRanks] = {};
  std::size_t maxLen = 0;  ///< largest segment any rank sends to any rank
  // Throughput program.
  std::size_t chunk = 0;   ///< bytes per chunk (multiple of 16)
  int cpp = 0;             ///< chunks per partition (every partition, >= 1)
  int slots = 0;           ///< cyclic staging slots of `chunk` bytes
  int ySlots = 0;          ///< cyclic slots of the compose intermediate Y (AllReduce)
  std::size_t yOffset = 0; ///< byte offset of the Y region in a staging half
  int stageCtas = 0, consumeCtas = 0, gatherCtas = 0, threads = 0;
  // Push transfer (docs/snac-protocol.md "Throughput program, push
  // transfer"): a staging half holds one region per source rank, `slots`
  // slots each; a compose's Y regions (one per source, `ySlots` slots) start
  // at yOffset. Source s's region in rank k's half is number (s - k - 1) mod n.
  bool push = false;
  std::size_t regionBytes = 0;   ///< bytes of one per-source staging region
  std::size_t yRegionBytes = 0;  ///< bytes of one per-source Y region (AllReduce)
  int lanes = 1;                 ///< workers per stage CTA (lane.cuh, pushLanes): the stage role has stageCtas*lanes workers
  int consumeLanes = 1;          ///< workers per consume / gather CTA
  // Latency program (shape from latencyShape: grows with the payload).
  int latencyCtas = 0, latencyThreads = 0;
  std::size_t packetRegion = 0;  ///< packets per source rank in a packet half
  /// Bytes every source sends every destination in the latency program:
  /// the largest segment, or the whole input of a one-shot AllReduce.
  std::size_t packetFlowBytes = 0;
  /// Input, output and every segment are whole 8-byte words at 8-byte
  /// aligned addresses: the latency kernel's fast path (plain word loads
  /// and stores, no tail or alignment cases).
  bool words8 = false;
  /// The tag of this rank's flow to rank q (flowTagTo[q]) and the tag it
  /// expects on the flow from rank p (flowTagFrom[p]): the call check's
  /// values (callCheckFor; an eager registered call's mixed with its
  /// output's registration and offset, mixRegisteredTags), carried with
  /// the epoch (protocol.h packetHeader) in every packet group's header and
  /// in the direct program's ARRIVED_TAG, and compared by the receiver, in
  /// every mode.
  uint32_t flowTagTo[kMaxRanks] = {}, flowTagFrom[kMaxRanks] = {};
  // Direct program (set by planDirect; `latency` is then false).
  bool direct = false;
  bool directEngine = false;  ///< copy-engine form: arrive kernel, memcpys (+ reduce kernel), finish kernel
  int directCtas = 0, directThreads = 0;

  /// Partitions a rank stages per chunk index: 1 for a packed input
  /// (AllGather, Gather: its whole input, read by every consumer), n-1
  /// otherwise (one per peer, own excluded).
  PURLIN_HD int stageParts() const { return hasPackedInput(kind) ? 1 : n - 1; }
  /// Length of a rank's staging sequence. Chunk-major order: chunk c of the
  /// m-th staged partition is j = c*stageParts() + m, partition k = (rank+1+m) % n.
  PURLIN_HD int stageSequence() const { return cpp * stageParts(); }
  /// Push transfer: a rank's sequence j = c*(n-1) + m sends chunk c to rank
  /// (rank+1+m) % n, for every collective (AllGather too: one copy per peer).
  PURLIN_HD int pushSequence() const { return cpp * (n - 1); }
  int ctas() const { return direct ? directCtas : latency ? latencyCtas : stageCtas + consumeCtas + gatherCtas; }
  int threadsPerCta() const { return direct ? directThreads : latency ? latencyThreads : threads; }
};

/// Launch shape of the latency program for `slots` 16-byte packet slots
/// per source (32 per packet group): threads wanted = ceil(slots /
/// slots-per-thread); CTAs = ceil(wanted / kLatencySpreadThreads), at most
/// w.latencyCtas (and kMaxEpochSlots); threads per CTA = ceil(wanted / CTAs)
/// rounded up to a warp, at most w.latencyThreads rounded down
/// to a warp (at least 32; beyond that warps take more groups). A function
/// of (slots, policy) only, so identical on every rank.
void latencyShape(std::size_t slots, const WorldConsts& w, int& ctas, int& threads);

/// Ranks sharing a GPU (resident.cuh): scales the present roles' CTA counts
/// (roles[i] > 0; 0 = role absent) down to at most `budget` CTAs in all,
/// in proportion, each present role keeping at least one; false (counts
/// unchanged) if even one CTA per present role exceeds the budget.
bool scaleRoleCtas(int budget, int* roles, int count);

/// The bytes of `flowBytes` as 16-byte packet slots (a 512-byte packet
/// group per 496 payload bytes): what a latency flow takes of the window.
std::size_t packetSlots(std::size_t flowBytes);
/// The policy's direct thresholds, 0 meaning the runtime's default.
inline std::size_t directMinBytesOf(const WorldConsts& w) { return w.directMinBytes ? w.directMinBytes : kDirectMinBytes; }
inline std::size_t directEngineMinBytesOf(const WorldConsts& w) {
  return w.directEngineMinBytes ? w.directEngineMinBytes : kDirectEngineMinBytes;
}

/// What the launcher knows about a direct call that the copy-engine rule
/// asks (launch): a checked communicator (a copy cannot be withheld after
/// an arrive timeout), stream memory operations available, the hardware
/// queues hold the form's streams (engineFitsQueues), and the call is
/// being captured. Only a captured call takes the form: its output sizes
/// were compared across ranks at capture (registerDirect), before any copy
/// is enqueued. An eager registered call's copies would be enqueued on the
/// host before its arrive kernel compares the peers' tags, so a peer whose
/// call differs would still be written (docs/failure-model.md); eager
/// calls take the SM form, which writes nothing until the tags match.
struct EngineFacts {
  bool checked = false;
  bool streamMemOps = false;
  bool queuesFit = false;
  bool captured = false;
};

/// The rules of a collective's call plan: purlinc prints one struct per
/// collective (NAME_PlanRules in NAME.plan.h) from the plan ops %pN of its
/// SNAC IR, and the compiler evaluates the same ops (ir::PlanRulesOf).
/// Wherever a plan depends on the collective, makePlan and launch ask them:
///   std::size_t flowBytes(const Plan&)              bytes every source sends in the latency program
///   bool latency(const Plan&, const WorldConsts&)   the latency program (packetFlowBytes, packetRegion set)
///   bool direct(const Plan&, const WorldConsts&)    the direct program is wanted (the same on every rank)
///   bool engine(const Plan&, const WorldConsts&, const EngineFacts&)  its copy-engine form
///   bool engineReduces                              that form has a reduce kernel (its shape: planDirect)
/// Whose arguments a call was refused for (docs/runtime.md "A refusal on
/// one rank"): Shared, what every rank must pass alike (kind, count or
/// counts, maxCount, dtype, op, root; the policy), so every rank that made
/// the same call refused it too and nothing needs telling; Own, this rank's
/// own (its pointers, its rows of AllToAllV's counts and displacements),
/// so its peers may be making the call and the launcher fails the
/// communicator on every rank (Communicator::refuseCall).
enum class RefusalScope { Shared, Own };

/// Validates a call and plans it with `rules`. `stagingCapacity` = usable
/// bytes of one staging half (min of the policy's and the communicator's),
/// `packetHalfBytes` = bytes of one packet half, `atomStages` = the pipeline
/// stages of the throughput kernel's Atom (push lanes: pushLanes). Returns
/// Ok, or an error status with `error` set to a message naming the argument
/// and, if `scope` is given, *scope set to whose argument it was.
template <class Rules>
Status makePlan(CollKind kind, int n, int rank, const CallArgs& args, const WorldConsts& world,
                std::size_t stagingCapacity, std::size_t packetHalfBytes, Plan& plan, std::string& error,
                int atomStages, const Rules& rules, RefusalScope* scope = nullptr);

/// The direct program's view of the peers: out[p] = rank p's output buffer
/// as mapped into this process (out[rank] = this rank's own). Filled by
/// Communicator::registerDirect when the call is captured.
struct DirectPeers {
  std::byte* out[kMaxRanks] = {};
};

/// Whether this rank's buffers allow the direct program for a call its
/// rules want (Rules::direct): every byte range a CTA moves is a multiple of 16
/// bytes at 16-byte-aligned addresses, and the input does not overlap the
/// output except in AllGather's in-place form (peers write into the output
/// while this rank still reads its input). Local: the launcher ANDs it over
/// all ranks (Communicator::registerDirect) before using it.
bool directEligible(const Plan& p, const CallArgs& a);

/// Sets the direct program's shape on `p`: CTAs = the per-rank bytes / kDirectBytesPerCta,
/// clamped to [1, min(directCtas, kMaxEpochSlots)]; threads = directThreads
/// rounded to a warp within [64, kDirectMaxThreads]; the copy-engine form
/// when `engine` (Rules::engine): with a reduce kernel (`engineReduces`)
/// the CTAs above and kDirectEngineReduceThreads threads for it, else one
/// CTA of one warp. A function of the sizes and the policy only (the same
/// on every rank).
void planDirect(Plan& p, const WorldConsts& w, bool engine, bool engineReduces);

/// What a planned call (makePlan, then planDirect where it took the direct
/// program) runs and why, in one line (CommOptions::logPlans): the program
/// and transfer, CTAs x threads (per role), the chunk and chunks per
/// partition or the packet flow, and the deciding rule with its numbers:
/// "latency (packets): 4 CTAs x 256 threads, flows of 1024 B: message 2048 B
/// <= the latency crossover 262144 B and its packets fit the window".
/// What made a direct call's peers' outputs reachable: the call was
/// captured in a CUDA graph (Communicator::registerDirect), or its output
/// lies in a registered buffer (Communicator::registerBuffer, eager calls).
enum class DirectBy { Capture, Registration };
std::string describePlan(const Plan& p, const WorldConsts& w, DirectBy by = DirectBy::Capture);

/// A key of the call shape describePlan describes (kind, world, message
/// bytes, dtype, op, root, program, CTAs, chunk, and for a direct call
/// `by`): equal keys, equal lines.
uint64_t planShapeKey(const Plan& p, DirectBy by = DirectBy::Capture);


} // namespace purlin::snac

#include "purlin/snac/plan_impl.h"
