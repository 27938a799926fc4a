/// @file IR.h
/// @brief The SNAC IR: buffers, signals, roles and ops of one collective's
/// latency and throughput programs, symbolic over ranks (docs/snac-ir.md).
///
/// A Program is written for a generic rank `r` of `n` ranks: loops run over
/// rank domains ("for p in others(r)") and over the call's chunks
/// ("for c in 0..cpp-1"), and buffers are indexed by rank variables. The
/// same text is valid for every n; instantiate() (Instantiate.h) expands it
/// for a concrete n and concrete sizes into per-rank, per-CTA op sequences.
///
/// Memory model (docs/snac-protocol.md): a signal lives in the receiver's
/// array; Notify is a system-scope release store, Wait an acquire poll that
/// proceeds when `value >= expected`. A rank may read memory written by
/// another CTA or another rank only after a Wait (or PacketPoll) that
/// acquires the writer's release covering those bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "purlin/AST.h"
#include "purlin/Collectives.h"
#include "purlin/Policy.h"
#include "purlin/snac/plan.h"

namespace purlin::ir {

/// The eleven collectives (plus Unknown for declarations that are none):
/// purlin/Collectives.h, from the one definition collectives.def.
using Kind = CollectiveKind;
inline bool isRootedKind(Kind k) { return isRooted(k); }
inline bool reducesKind(Kind k) { return reduces(k); }
/// Every supported kind, in collectives.def order (tests iterate it).
inline const std::vector<Kind> &allKinds() { return allCollectiveKinds(); }

/// Names of a rank: the generic rank `r`, the loop variables `p` (a peer or
/// producer) and `k` (a partition / consumer), and the call's `root`.
/// `Prev` is the partition of the previous staged use of a slot (reuse guards);
/// `Next` is rank r+1 (mod n), whose stage sequence indexes a reducer's counter.
enum class RankRef { None, R, P, K, Root, Prev, Next };
const char *toString(RankRef);

/// A set of ranks relative to r and root. Iterated in ascending rank order.
enum class Domain {
  All,      ///< 0..n-1
  Others,   ///< 0..n-1 except r
  Root,     ///< {root}
  NonRoot,  ///< 0..n-1 except root
  Ring,     ///< r+1, r+2, ..., r-1 (mod n): the stage order of partitions
  RevRing,  ///< r-1, r-2, ..., r+1 (mod n): push receivers (step m hears from the source whose step m targets r)
  RingSelf, ///< r+1, ..., r-1, r (mod n): the direct program's destinations, peers first, own output last
  SelfRing, ///< r, r+1, ..., r-1 (mod n): the gather role's partitions, own first
};
const char *toString(Domain);

/// Memory an op reads or writes.
enum class Buf {
  X,   ///< user input of `owner` (layout: the collective's input layout)
  O,   ///< user output of `owner` (layout: the collective's output layout)
  S,   ///< staging half e&1 of `owner`: `slots` slots of `chunk` bytes; peers read it after STAGED
  Y,   ///< compose intermediate half e&1 of `owner`: `ySlots` slots; peers read it after REDUCED
  PK,  ///< packet half e&1 of `owner`, region of source rank `part`: 8-byte words, each full (this call's payload) or empty
};
const char *toString(Buf);

/// One operand. Which bytes it names:
///  X/O: partition `part` of owner's buffer (None = the whole packed buffer),
///       chunk c of it when `chunked` (chunk c = [c*chunk, (c+1)*chunk) clipped);
///  S:   slot(j) with j = seq(part, c) of owner's stage sequence; its length is
///       that of chunk c of X_owner[part];
///  Y:   slot yslot(c) of owner's Y region; length of chunk c of Y_owner;
///  PK:  the region of source rank `part` in owner's packet half, carrying
///       X_part[shapePart] (None = the source's whole input).
struct Access {
  Buf buf = Buf::X;
  RankRef owner = RankRef::R;
  RankRef part = RankRef::None;
  bool chunked = false;
  RankRef shapePart = RankRef::None; ///< PK only
  /// Push transfer only (S/Y): the per-source region of `owner`'s half that
  /// holds what rank `region` pushes to owner; the slot is pslot(c) = c mod
  /// slots (S) or yslot(c) (Y), and the length is that of chunk c of
  /// X_region[part] (S) or of Y partition `region` (Y). None: pull layout.
  RankRef region = RankRef::None;
  /// Direct program only (X/O): the executing CTA's slice of the partition
  /// (sliceBegin over the role's CTAs), and within it round j of the
  /// enclosing rounds loop (directRoundBytes of the slice; no further slicing).
  bool rounded = false;
  /// Copy-engine form only (X/O): chunk k of the partition, k the enclosing
  /// engine-chunks loop's index (protocol.h engineChunkBytes; whole, not sliced).
  bool engineChunk = false;
};

/// Signal regions (index = base + src*1024 + slot; DONE = base + src;
/// the direct program's ARRIVED/PUT/BACK = base + src*128 + cta index; the
/// copy-engine form's E_PUT/E_BACK = base + chunk k, written by stream
/// memory operations with the value 1 and reset by their owner). EDGE is
/// not a signal of the workspace: a graph edge between the copy-engine
/// form's two streams (an event recorded on one, waited on the other).
enum class Sig { STAGED, REDUCED, CONSUMED, GATHERED, DONE, ARRIVED, PUT, BACK, E_PUT, E_BACK, EDGE };
const char *toString(Sig);
uint32_t sigBase(Sig);

/// Which use of a slot a signal value names: sig(e, round).
enum class RoundOf {
  Zero,      ///< round 0 (DONE acks)
  Cur,       ///< the round of this op's slot use
  Prev,      ///< the round of the previous staged use of this slot (reuse guard)
  Last,      ///< direct: the last round, rounds(slice of `roundOf`) - 1
  One,       ///< copy-engine form: the literal 1 of a stream memory operation (E_PUT/E_BACK)
};

/// When an op runs for one iteration (evaluated at instantiation).
enum class Cond {
  Always,
  HasPrev,   ///< the slot had an earlier staged use in this call (stage: reuse guard)
  HasNext,   ///< the slot has a later staged use in this call (consumer: free it)
  FirstOfChunk, ///< the first rank (m == 0) of the enclosing loop's domain for this chunk
  InRound,   ///< direct: the rounds loop's j < rounds(this CTA's slice of `roundOf`)
  HasRounds, ///< direct: this CTA's slice of `roundOf` is not empty (at least one round)
  NotSelf,   ///< the enclosing loop's rank p is not r (latency reduce: poll every source but r)
  NonEmpty,  ///< copy-engine form: `roundOf` (the whole partition) is not empty
};
const char *toString(Cond);

/// Ranks a role (or an op) runs on.
enum class RunsOn { All, Root, NonRoot };
const char *toString(RunsOn);

/// Which slot space an op's signal index uses (Cta: the direct program's
/// one signal per CTA index; the waiter's CTA c waits on the notifier's CTA c;
/// Chunk: the copy-engine form's one flag per engine chunk k).
enum class SlotSpace { None, S, Y, Cta, Chunk };

/// Copy-engine form: the stream a host-enqueued op (or kernel) goes on.
/// Stream: the call's stream; Branch: the communicator's side stream,
/// forked from and joined back into it within the capture.
enum class Stream { Stream, Branch };
const char *toString(Stream);

/// Copy-engine form: the communicator's capture events an EDGE names
/// (Communicator::captureForkEvent / JoinEvent / ChunkEvent(k)). A wait
/// pairs with the latest record of its event before it in host order.
enum class Event { Fork, Join, Chunk };
const char *toString(Event);

enum class OpKind {
  Copy,       ///< Atom::copy dst <- src; each CTA of the role copies its slice
  Reduce,     ///< Atom::reduce dst <- op(src_p for p in srcDomain, ascending p); fp32 accumulation
  Arrive,     ///< last-arriver counter: atom.add.acq_rel; the CTA seeing total-1 resets it and runs the following `last` ops
  Notify,     ///< st.release.sys of sig(e, round) into signal `sig`[r][slot] of each target rank
  Wait,       ///< ld.acquire.sys poll of own signal `sig`[src][slot] until >= sig(e, round)
  PacketPut,  ///< src's payload words stored full into dst (a peer's PK), each word single-copy atomic; dst's words must be empty
  PacketPoll, ///< spin until every word of this CTA's slice of src (own PK) is full; then empty them; the CTA may read those payloads
  Reset,      ///< copy-engine form: store 0 into every own flag of `sig` (E_PUT / E_BACK, all kMaxEngineChunks)
};
const char *toString(OpKind);

/// One op. Fields used depend on `kind` (see OpKind); `forEach` repeats the
/// op for every rank of `domain` bound to `var` (ascending).
struct Op {
  int id = -1;                 ///< stable id, printed as %id (assigned by numberOps)
  OpKind kind = OpKind::Copy;
  Cond cond = Cond::Always;
  RunsOn onlyOn = RunsOn::All; ///< rank condition: all ranks, only the root, or only non-roots
  bool last = false;           ///< run only by the last arriver of the preceding Arrive
  /// Reduce only: one step of a running reduction over the enclosing loop's
  /// rank `var` (ascending over the loop's domain): the loop's first rank
  /// sets dst to its operand, each later one combines dst with its operand.
  /// The latency program keeps the accumulator in fp32 registers and stores
  /// dst after the last step; the IR names the accumulator by dst.
  bool step = false;
  // forEach
  RankRef var = RankRef::None;
  Domain domain = Domain::All;
  // data ops
  Access dst, src;
  Access srcSelf;              ///< Reduce: operand used for p == r (own contribution)
  bool hasSrcSelf = false;
  // sync ops
  Sig sig = Sig::STAGED;
  RankRef sigSrc = RankRef::R; ///< Wait: the notifying rank; Notify: always R
  RankRef target = RankRef::None; ///< Notify: the receiving rank (forEach binds it)
  SlotSpace slotSpace = SlotSpace::None;
  RankRef slotPart = RankRef::None; ///< S: the partition whose seq(part, c) names the slot
  RankRef slotOwner = RankRef::R;   ///< whose staging/Y the slot is in
  RankRef slotRegion = RankRef::None; ///< push: the source region of slotOwner's half the slot is in
  bool fence = false;          ///< Notify: fence.acq_rel.sys first (publishes other CTAs' remote writes at system scope)
  RoundOf round = RoundOf::Cur;
  /// Direct (InRound, HasRounds, RoundOf::Last): the partition whose CTA
  /// slice is cut into rounds; the sender and the receiver of a partition
  /// name the same length.
  Access roundOf;
  // Arrive
  int counterBase = 0;         ///< counter index = counterBase + counterStride*rank(counterRank) + slot
  int counterStride = 0;
  RankRef counterRank = RankRef::None;
  int arrivals = 0;            ///< CTAs that arrive (bound by bindPolicy)
  std::string note;            ///< free text printed after the op (why it exists)
  /// Copy-engine form: the stream the op runs on (a kernel's ops: the
  /// kernel's). At the host level, a Copy is a copy-engine transfer
  /// (cudaMemcpyAsync), a Notify E_PUT/E_BACK a stream memory operation, a
  /// Notify/Wait EDGE an event record / stream wait.
  Stream stream = Stream::Stream;
  bool host = false;           ///< copy-engine form: enqueued by the host (not inside a kernel node)
  Event event = Event::Fork;   ///< EDGE: the event (Chunk: chunk event c of the enclosing loop)
  /// Lowering decisions (Lowering.h passes; the printers follow them, the
  /// verifier checks them; -1: none).
  int reusesLoadOf = -1;       ///< shareLoads: this Reduce's own operand is the words op %N loaded
  int fusedInto = -1;          ///< fuseWriteBack: this Copy is done by op %N's stores

  static Op copy(Access dst, Access src);
  static Op reduce(Access dst, Access src, RankRef var, Domain d);
  static Op notify(Sig s, SlotSpace sp, RankRef slotPart, RankRef target);
  static Op wait(Sig s, SlotSpace sp, RankRef slotPart, RankRef src, RoundOf round);
  static Op arrive(int base, int stride, SlotSpace sp, RankRef slotPart);
  static Op put(Access dst, Access src);
  static Op poll(Access src);
  static Op reset(Sig s);
  Op &each(RankRef v, Domain d) { var = v; domain = d; return *this; }
  Op &when(Cond c) { cond = c; return *this; }
  Op &on(RunsOn r) { onlyOn = r; return *this; }
  Op &byLast() { last = true; return *this; }
  Op &stepwise() { step = true; return *this; }
  Op &why(std::string s) { note = std::move(s); return *this; }
  Op &onStream(Stream s) { stream = s; return *this; }
};

/// A loop or an op. A loop binds `var` to each rank of `domain` (None: no
/// rank loop) and, when `chunks`, c to 0..cpp-1; `chunkMajor` puts c outside
/// the rank loop. Iterations run in program order within one CTA.
struct Stmt {
  bool isLoop = false;
  Op op;
  RankRef var = RankRef::None;
  Domain domain = Domain::All;
  bool chunks = false;
  bool chunkMajor = false;
  /// Chunks distributed over the role's workers (CTAs, or lanes of CTAs in
  /// the runtime; one simulator thread each): iteration j (in loop order)
  /// runs only on worker j mod workers, which moves whole chunks (no slices) and
  /// sends the iteration's notifies itself (no arrive, no last arriver).
  bool perCta = false;
  /// Direct: loop j over the rounds of the CTA's slices, j = 0 ..
  /// max(rounds of the InRound ops' `roundOf`) - 1.
  bool rounds = false;
  /// Copy-engine form: k over the engine chunks of `chunksOf`'s partition
  /// (protocol.h engineChunkBytes; k binds the ops' chunk index c).
  bool engineChunks = false;
  Access chunksOf;
  /// Copy-engine form: a kernel node of the call's graph, named `kernel`
  /// (arrive, reduce, finish), on `stream`; its body is device code. Wide:
  /// direct.ctas CTAs x kDirectEngineReduceThreads, each reducing its slice
  /// of the chunk; otherwise one CTA of 32 threads. `endsCall`: the kernel
  /// ends the call (ctaEndCall advances the epoch). Every kernel reads the
  /// call's epoch e first.
  std::string kernel;
  bool wide = false, endsCall = false;
  Stream stream = Stream::Stream;
  /// specializeTwoRanks: besides the loop over every rank, a form for
  /// n == 2 (the one peer polled, the two operands combined by one
  /// pairwise reduction in rank order), taken when the call has two ranks.
  bool twoRankForm = false;
  std::vector<Stmt> body;

  static Stmt of(Op o) { Stmt s; s.op = std::move(o); return s; }
  static Stmt kernelNode(std::string name, Stream on, bool wide, std::vector<Stmt> body);
  static Stmt loop(RankRef v, Domain d, bool chunks, bool chunkMajor, std::vector<Stmt> body);
};


/// A group of CTAs of one kernel running the same op sequence; each CTA
/// moves its own slice of every data op. Roles run concurrently.
struct Role {
  std::string name;            ///< stage, reduce, consume, gather, latency
  std::string ctasFrom;        ///< policy field giving `ctas`, e.g. "throughput.stageCtas"
  int ctas = 0;
  int threads = 0;
  /// Push roles: independent workers per CTA (runtime lane.cuh), bound by
  /// bindPolicy with snac::pushLanes; a perCta loop's workers are the
  /// role's ctas x lanes. 1 elsewhere.
  int lanes = 1;
  RunsOn runsOn = RunsOn::All;
  /// Latency role: the body is the work of one packet group; group g of
  /// every flow runs on warp g mod (warps of the grid), each warp over its
  /// groups in ascending order (docs/snac-ir.md "Latency program"). The
  /// instantiation models a warp's groups by its CTA's slices.
  bool perWarpGroup = false;
  std::vector<Stmt> body;
};

/// A buffer declaration (printed in the header of a program).
struct BufferDecl {
  Buf buf;
  std::string desc;
};

/// A signal declaration: who notifies, who waits, what value.
struct SignalDecl {
  Sig sig;
  std::string producers, consumers, value;
};

/// Direct: the program of captured calls (no staging; docs/snac-protocol.md
/// "Direct program"), in its kernel form or its copy-engine form
/// (Program::engine).
enum class Regime { Latency, Throughput, Direct };
const char *toString(Regime);
struct Program;
/// The name of a program in messages: latency, throughput, direct, or
/// "direct (copy engine)".
const char *programName(const Program &p);

/// One regime of one collective for world size n, parametric in sizes.
struct Program {
  Regime regime = Regime::Throughput;
  /// Throughput programs: pull (consumers read the producers' staging) or
  /// push (producers write into per-source regions of the consumers'
  /// staging; every read is local). Latency programs: Pull (unused).
  Transfer transfer = Transfer::Pull;
  /// Direct program, copy-engine form: one role `host`, whose body is the
  /// host's enqueue sequence of the call's graph (copy-engine transfers,
  /// stream memory operations, event edges and kernel nodes, each on a
  /// Stream). Instantiated as two concurrent actors per rank, one per stream.
  bool engine = false;
  std::vector<BufferDecl> buffers;
  std::vector<SignalDecl> signals;
  std::vector<Role> roles;
};

/// Policy numbers bound into the IR for world size n (bindPolicy): the
/// policy's knobs as the runtime reads them (snac::WorldConsts, one member
/// per row of policy_knobs.def: ir::worldConsts), and what the IR derives
/// from them and the policy's Atom and staging.
struct Bound {
  /// world[n] of the policy, as purlinc prints it into NAME_Policy
  /// (0: the runtime's default; directCtas -1: the direct program is off).
  snac::WorldConsts knobs;
  /// Push: lanes per CTA of the stage role and of the other roles (snac::pushLanes).
  int stageLanes = 1, consumeLanes = 1;
  int pipelineStages = 0, stageBytes = 0;
  uint64_t stagingBytes = 0;    ///< one staging half
  uint64_t regionBytes = 0;     ///< S region (and Y region for a compose) of a half
  int slots = 0, ySlots = 0;    ///< cyclic slots at the policy chunk
  Transfer transfer = Transfer::Pull;       ///< what the throughput program does
  Transfer policyTransfer = Transfer::Pull; ///< what the policy asked for (push only where derivable)
  bool bound = false;
  /// The gather role's CTAs (a composition's only; 0 otherwise).
  int gatherCtas(bool compose) const { return compose ? knobs.gatherCtas : 0; }
  /// Direct program: captured calls with dispatch bytes >= directMinBytes()
  /// (policy world[n].direct; off when the policy disables it).
  bool directOn() const { return knobs.directCtas >= 0; }
  uint64_t directMinBytes() const { return snac::directMinBytesOf(knobs); }
  int directCtas() const { return knobs.directCtas > 0 ? knobs.directCtas : snac::kDirectCtas; }
  int directThreads() const { return knobs.directThreads > 0 ? knobs.directThreads : snac::kDirectThreads; }
  /// Copy-engine form: captured calls with message bytes >= this, not on
  /// checked communicators.
  uint64_t directEngineMinBytes() const { return snac::directEngineMinBytesOf(knobs); }
};

/// The call plan (CallPlan.h): ops %p0.. that say how every call of the
/// collective is planned before a program runs.
enum class PlanOpKind {
  Ranges,      ///< byte ranges per peer, from the layouts (snac::planByteRanges)
  Flow,        ///< the bytes every source sends in the latency program
  Latency,     ///< the latency program: crossover and packet window
  Throughput,  ///< otherwise the throughput program: its transfer and chunk
  Direct,      ///< the direct program: the world sizes it exists for, the threshold
  Engine,      ///< the direct program's copy-engine form
};
/// What every source sends in the latency program: the whole message (a
/// composition's latency program is one-shot) or its largest segment.
enum class FlowOf { Message, Segment };
struct PlanOp {
  int id = 0;  ///< printed %p<id>
  PlanOpKind kind = PlanOpKind::Ranges;
  FlowOf flow = FlowOf::Segment;  ///< Flow
  std::vector<int> worlds;        ///< Direct: the world sizes its program is derived for (empty: none)
  bool needsMemOps = false;       ///< Engine: its flags are stream memory operations
  bool reduces = false;           ///< Engine: a reduce kernel between the copies
  std::string why;                ///< the derivation's reason, printed with the op
};

/// Both programs of one collective, for world size n.
struct CollectiveIR {
  std::string name;
  Kind kind = Kind::Unknown;
  ConsumeOp op = ConsumeOp::Copy;
  Layout in = Layout::Packed, out = Layout::Packed;
  Root root = Root::None;
  bool compose = false;
  std::string policyName;
  int n = 0;
  Bound bound;
  Program latency, throughput;
  /// The direct program (regime Direct); no roles when it is not derived
  /// for this kind and n, or the policy turns it off (`directWhyNot` says which).
  Program direct;
  std::string directWhyNot;
  bool hasDirect() const { return !direct.roles.empty(); }
  /// The direct program's copy-engine form (derived and bound with `direct`).
  Program engine;
  bool hasEngine() const { return !engine.roles.empty(); }
  std::string dispatchBytes;    ///< how the dispatch size is computed, e.g. "n*count*E"
  /// The call plan (derivePlan): for every world size, not only n.
  std::vector<PlanOp> plan;
};

/// Protocol constants: the runtime's own (runtime/include/purlin/snac/
/// protocol.h and plan.h, plain C++ compiled by purlinc and the kernels
/// alike), so the IR's bound values are the values the kernels use.
inline constexpr int kSlotsPerSource = int(snac::kSlotsPerSource);
inline constexpr int kMaxSlots = snac::kMaxSlots;
inline constexpr int kMaxYSlots = snac::kMaxYSlots;
inline constexpr int kStageCounterBase = int(snac::kStageCounterBase);
inline constexpr int kConsumeCounterBase = int(snac::kConsumeCounterBase);
inline constexpr int kGatherCounterBase = int(snac::kGatherCounterBase);
/// The rooted programs' DONE counter (the IR's; the runtime does not run
/// them yet): after the gather role's counters.
inline constexpr int kDoneCounter = int(snac::kNumCounters);
/// Push, sliced variant (the IR's; the runtime runs the per-CTA one):
/// per-source slots are capped so that the stage counters
/// `kStageCounterBase + kPushSlotStride*k + pslot` of all destinations k fit
/// the stage counter region (kMaxRanks * 32 = kMaxSlots).
inline constexpr int kPushSlotStride = snac::kMaxSlots / kMaxRanks;
/// Direct program signals: one per (source rank, CTA index < kMaxEpochSlots).
inline constexpr int kDirectSlotsPerSource = kMaxEpochSlots;
inline constexpr int kMaxDirectCtas = kMaxEpochSlots;
/// The runtime's round bounds (protocol.h directRoundBytes).
inline constexpr uint64_t kDirectRoundDivisor = snac::kDirectRoundDivisor;
inline constexpr uint64_t kDirectRoundMin = snac::kDirectRoundMinBytes, kDirectRoundMax = snac::kDirectRoundMaxBytes;
/// The copy-engine form's bounds (protocol.h, plan.h).
inline constexpr uint64_t kEngineMinChunk = snac::kEngineMinChunkBytes;
inline constexpr int kMaxEngineChunks = purlin::kMaxEngineChunks;
inline constexpr uint64_t kDirectDefaultEngineMinBytes = snac::kDirectEngineMinBytes;
inline constexpr int kEngineReduceThreads = snac::kDirectEngineReduceThreads;
/// EDGE "signals" of the model (not in the workspace): event*kEdgeStride + record serial.
inline constexpr uint32_t kEdgeBase = 1u << 30, kEdgeStride = 4096;
/// The runtime's defaults for a policy number 0 (plan.h).
inline constexpr uint64_t kDirectDefaultMinBytes = snac::kDirectMinBytes;
inline constexpr int kDirectDefaultCtas = snac::kDirectCtas, kDirectDefaultThreads = snac::kDirectThreads;
/// sig(e, round) = (e << 20) + round + 1 (protocol.h signalValue).
inline uint64_t sigValue(uint64_t e, uint64_t round) { return snac::signalValue(e, uint32_t(round)); }

/// A user-facing error of the IR library (unsupported declaration, bad
/// policy numbers, bad simulation arguments). Never a crash.
struct IRError {
  std::string message;
};

/// Slots per source region of a push program: kPushSlotStride when its
/// stage role uses per-destination last-arriver counters (sliced chunks),
/// kMaxSlots when chunks are distributed per CTA (no counters).
int pushSlotCap(const Program &p);

/// Visits every op of a role body (and nested loops) in program order.
template <class F> void forEachOp(std::vector<Stmt> &body, F &&f) {
  for (auto &s : body) {
    if (s.isLoop) forEachOp(s.body, f);
    else f(s.op);
  }
}
template <class F> void forEachOp(const std::vector<Stmt> &body, F &&f) {
  for (auto &s : body) {
    if (s.isLoop) forEachOp(s.body, f);
    else f(s.op);
  }
}

/// The programs of `ir` in print order: latency, throughput, then direct
/// (kernel form, copy-engine form) when derived.
std::vector<const Program *> programsOf(const CollectiveIR &ir);
std::vector<Program *> programsOf(CollectiveIR &ir);

/// Assigns ids %0, %1, ... in print order over all programs (latency first).
void numberOps(CollectiveIR &ir);

} // namespace purlin::ir
