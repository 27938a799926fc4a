/// @file KernelIR.h
/// @brief The kernel-level IR: a program of the SNAC IR lowered to the
/// statements of one execution form, the level the CUDA printers print
/// (docs/snac-ir.md "Kernel IR"). Each statement is one primitive of the
/// runtime's packet layer (a lane's load, put, poll, store, the reduction of
/// a group) or a structure around them (a loop over peers, a rank
/// condition, the two-rank form), and names the SNAC op it implements, so a
/// reader holds `--print-ir-after-all` beside the printed `.cu`.
///
/// Forms lowered to it so far: packet warps (the latency program:
/// lowerPacketWarps, LowerPacketWarps.cpp) and direct CTAs (the direct
/// program's kernel form: lowerDirectCtas, LowerDirectCtas.cpp) and host
/// graphs (its copy-engine form: lowerHostGraph, LowerHostGraph.cpp), and
/// throughput roles (CTA slices and lane workers: lowerThroughputRoles,
/// LowerThroughputRoles.cpp).
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace purlin::ir::kernel {

/// The registers a lane's two payload words are in: `a, b` (a flow's
/// words, reused op after op), `mineA, mineB` (the reduction's own
/// operand) and `ra, rb` (a reduced group).
enum class Words { Flow, Mine, Reduced };
const char *toString(Words);

/// Why the call's epoch is read where it is (the packet half and the
/// signal values follow from it; reading it costs a load).
enum class EpochRead {
  AfterLoad,   ///< right after a put's first loads are issued (E12)
  NothingPut,  ///< the ranks of a rooted program that put nothing
  PastFlows,   ///< V form: a warp past the groups of every flow it sends
};

/// How a poll staggers its loads (bench/NOTES.md E13): the first pair only
/// (copies), or every round (reductions).
enum class Stagger { First, EveryRound };

/// The packet region a put or poll addresses, and the rank it hears.
enum class Region {
  SendRing,  ///< rg.send[i - 1]: ring position i of the enclosing loop (or of RootPosition)
  RecvRing,  ///< rg.recv[i - 1], from rank p (p = rg.from[i - 1]) or the root
  RecvRank,  ///< rg.recvFrom[p], from rank p of a loop over all ranks
  OnlyPeer,  ///< rg.recv[0], from rg.from[0]: the one peer of two ranks
};

enum class StmtKind {
  OnRanks,       ///< body runs on the root or on the other ranks (`on`)
  PeerLoop,      ///< body for ring positions i = 1..n-1: to k = (r + i) mod n, or from p = rg.from[i - 1] (`fromPeers`)
  RootPosition,  ///< i = the root's ring position (to the root: send side; from it: receive side)
  FlowLength,    ///< V form: len, groups and lane words of the loop's flow (send or receive side); past its groups, next i
  OwnFlow,       ///< V form: body for the groups of this rank's own partition
  Load,          ///< `words` <- the lane's words of `operand` (or of the bound `own`)
  ReadEpoch,     ///< the call's epoch, read here (`epochRead`)
  Put,           ///< `words` -> the slot of region `region`
  PutToPeers,    ///< `words` -> the slot of every peer (one load feeding every put)
  Poll,          ///< `words` <- the slot of region `region` once full (a checked wait that gives up ends the role)
  Store,         ///< `words` -> the lane's words of `operand`
  StoreUnlessInPlace, ///< `words` -> the lane's words of the bound `ownDst`, unless it is the source
  GatherRanks,   ///< rank p's words of the group for p in 0..n-1: the own operand (p == r) or a poll (`op`: the poll, `use`: the reduce)
  ReduceRanks,   ///< `ra, rb` = the reduction of the gathered words of n ranks (one class dispatch)
  ReducePair,    ///< `ra, rb` = the reduction of the own and the one peer's words, in ascending rank order
  TwoRanks,      ///< `body` for n > 2 and `orElse` for n == 2 (chosen once per kernel: specializeTwoRanks)
  // Direct CTAs (the direct program's kernel form): CTA c of C owns slice c
  // of every partition and signals with index c.
  Arrive,        ///< thread 0 tells every peer's CTA c it started and waits for theirs, one barrier after (`op`: the notify, `use`: the wait)
  CopyToMany,    ///< the CTA's slice of the whole input into block r of every rank's output, peers first, own last (skipped in place)
  CopyPairs,     ///< the CTA's slice of input block k into block r of rank k's output, for every k, interleaved
  Notify,        ///< thread 0 releases `sig` to every peer's CTA c with `value` (after a barrier and a system fence when `fence`)
  Wait,          ///< thread 0 waits for `sig` from every peer's CTA c to reach `value`; one barrier shares the verdict
  TwoRankSlices, ///< others(r) = {q} (the program is derived for two ranks): the CTA's slices of partitions q and r, their rounds and pointers
  Rounds,        ///< body for the rounds j of the longer slice
  InRound,       ///< body when j < the rounds of the slice of partition `part` (K: the peer's, R: the own)
  PushRound,     ///< round j of the peer's partition into its output
  ReduceRound,   ///< round j of the own partition reduced in place in rank order (`fusedBack`: also stored into the peer's output)
  AfterRounds,   ///< body when the peer's partition had rounds, with the value of its last round
  // Host graph (the direct program's copy-engine form): what the host
  // enqueues on the call's stream and the communicator's branch.
  GraphGuard,    ///< a reduction's graph: two ranks with equal partitions, else the call is refused
  GraphKernel,   ///< a kernel node `kernelName` on `stream` (`wide`: direct.ctas CTAs, one slice each; `endsCall`); `body`: its statements
  EngineChunks,  ///< body for the engine chunks c of `operand`'s partition (in the host's order or in a kernel)
  GraphCopy,     ///< a copy-engine transfer for each rank of the op (`op`), under its NonEmpty guard
  GraphEdge,     ///< an event record or wait between the stream and the branch (`op`)
  GraphFlag,     ///< a stream memory operation writing 1 into flag c of each target (`op`)
  NodeNotify,    ///< in a kernel node: thread 0 releases a per-CTA signal to each target (after a barrier and a fence when the op fences)
  NodeWait,      ///< in a kernel node: thread 0 waits for each source, one barrier shares the verdict
  NodeReduce,    ///< in a wide kernel node: the two-rank in-place reduction of the CTA's slice of chunk c
  NodeReset,     ///< in a kernel node: the own flags of the op's signal reset to 0
  // Throughput roles: CTA slices (pull: CTA i of ctas moves its slice of
  // every chunk) and lane workers (push: worker w of W, a lane of a CTA,
  // moves whole chunks).
  RoleGuard,     ///< the role runs on one side of the root only: the other side returns (`on`)
  ChunkLoop,     ///< body for the chunks c: every one (slices), or c = w, w + W, ... (workers; with `var`: steps j = c*(n-1) + m over the peers of `domain`)
  PeerSteps,     ///< slices: body for the ranks `var` of `domain` (a ring order), inside a chunk loop
  Hoist,         ///< seq, slot and round of (`owner`, `partOf`) in this iteration, named once for its ops
  WaitSignal,    ///< the op's wait: CTA-collective (slices) or lane-collective (workers)
  MoveData,      ///< the op's copy or reduction of the slice or chunk (`syncAfter`: then a CTA barrier, the workspace is reused)
  ArriveCounter, ///< the op's last-arriver counter; `body`: what the last arriver's thread 0 runs
  NotifySignal,  ///< the op's notify (a last arriver's)
  LaneNotify,    ///< the op's notify by the lane's leader (`syncFirst`: after a lane barrier)
};

/// The signal value a direct notify or wait uses: the call's first
/// (sig(e, 0)), round j's, or the last round of the peer's partition.
enum class SignalValue { First, Round, LastRound };

/// One statement. `op` is the SNAC op it implements (-1: none); a statement
/// with `cites` set begins with the op's citation (`// %N <IR line>`, or
/// `// %N [n == 2]` when `citesAgain`).
struct Stmt {
  StmtKind kind = StmtKind::Load;
  int op = -1;
  bool cites = false, citesAgain = false;
  RunsOn on = RunsOn::All;          ///< OnRanks
  bool fromPeers = false;           ///< PeerLoop; RootPosition: from the root (receive side)
  Words words = Words::Flow;        ///< Load, Put, PutToPeers, Poll, Store, StoreUnlessInPlace
  Access operand;                   ///< Load, Store, FlowLength (whose bytes)
  bool bound = false;               ///< Load: from the bound `own` instead of `operand`
  int operandOf = -1;               ///< Load: the reduce whose own operand this is (-1: none)
  bool alsoOperand = false;         ///< Load: a put's load that is also operandOf's operand (shareLoads)
  int after = -1;                   ///< Store: the reduce it stores after its last rank (-1: none)
  EpochRead epochRead = EpochRead::AfterLoad;
  Stagger stagger = Stagger::First; ///< Poll
  Region region = Region::SendRing; ///< Put, Poll
  bool fromRoot = false;            ///< Poll: the rank heard is the root (else the loop's p)
  int use = -1;                     ///< GatherRanks: the reduce the words are for
  Access reduced;                   ///< GatherRanks: the reduce's destination
  bool partition = false;           ///< OwnFlow: the groups of a reduction's partition
  Sig sig = Sig::ARRIVED;           ///< Notify, Wait
  bool fence = false;               ///< Notify: publishes the CTA's writes first
  SignalValue value = SignalValue::First; ///< Notify, Wait
  RankRef part = RankRef::R;        ///< InRound
  int fusedBack = -1;               ///< ReduceRound, TwoRankSlices: the write-back copy done by the reduction's stores (fuseWriteBack)
  Stream stream = Stream::Stream;   ///< GraphKernel
  std::string kernelName;           ///< GraphKernel
  bool wide = false, endsCall = false, readsEpoch = false; ///< GraphKernel
  bool inChunks = false;            ///< GraphKernel: launched per engine chunk (c, done, chunk passed)
  bool records = false;             ///< GraphEdge: an event record (else a stream wait on it)
  RankRef var = RankRef::None;      ///< ChunkLoop, PeerSteps: the rank the loop binds
  Domain domain = Domain::All;      ///< ChunkLoop, PeerSteps: the ranks it runs over
  RankRef owner = RankRef::R, partOf = RankRef::R; ///< Hoist
  bool worker = false;              ///< ChunkLoop: workers' steps (else every chunk, sliced)
  bool syncAfter = false;           ///< MoveData
  bool reduces = false;             ///< MoveData: a reduction (else a copy)
  bool syncFirst = false;           ///< LaneNotify
  std::vector<Stmt> body, orElse;
};

/// A statement implementing `op`, citing it unless `cites` is false, with
/// the op's signal, stream and destination (the lowerings set what else
/// their statement needs).
Stmt stmtFor(StmtKind kind, const Op &op, bool cites = true);
/// A structural statement (a loop, a condition) that implements no op.
Stmt stmtOf(StmtKind kind);

/// A bound operand: a pointer named before the group loop (the compiler
/// cannot move shared-memory loads across the puts).
struct Binding {
  std::string name;  ///< "own" or "ownDst"
  Access access;
  bool writable = false;
};

/// The DONE acknowledgement of a rooted program, after the groups (ops
/// cited by id; insertDoneAcks).
struct DoneAcks {
  int arrive = -1, notify = -1, wait = -1;
  RunsOn readers = RunsOn::Root;  ///< the ranks that arrive (read packets)
  int counterBase = 0;
  bool notifyEveryProducer = false, waitEveryProducer = false;
};

/// A latency program lowered to packet warps: every warp of the grid runs
/// `group` for its packet groups g (g = warp, warp + warps, ...); lane l
/// < 31 carries payload words 62g + 2l and 62g + 2l + 1 of every flow (lane
/// 31: the group's header and collector).
struct PacketWarps {
  bool reduces = false;   ///< a reduction (the class dispatch, the two-rank form)
  bool rooted = false;    ///< a rooted program (the root's side and the others')
  bool variable = false;  ///< a V form: each flow its own length
  bool sharedLoad = false; ///< one load feeds every put and the reduction (shareLoads)
  bool triggerOnRead = true; ///< the next grid is let in once the epoch load is issued (else right after the wait)
  std::vector<Binding> bindings;
  std::vector<Stmt> group;
  bool hasDoneAcks = false;
  DoneAcks acks;
  std::vector<int> ops;  ///< the SNAC ops lowered, in program order (each once)
};

/// A direct program lowered to direct CTAs: every CTA c of the grid runs
/// `body` for slice c of every partition.
struct DirectCtas {
  bool reduces = false;  ///< a reduction (its round dispatches over the classes)
  std::vector<Stmt> body;
  std::vector<int> ops;  ///< the SNAC ops lowered, in program order (each once)
};

/// The direct program's copy-engine form lowered to a host graph: the
/// statements the host runs to enqueue the call's graph, in order; a
/// kernel node holds its device statements.
struct HostGraph {
  bool reduces = false;  ///< a reduce kernel between the copies
  std::vector<Stmt> body;
  std::vector<int> ops;  ///< the SNAC ops lowered, in program order (each once)
};

/// One role of a throughput program as the function its CTAs (slices) or
/// lanes (workers) run.
struct RoleKernel {
  std::string name;
  bool worker = false;   ///< lane workers (push), else CTA slices (pull)
  std::vector<Stmt> body;
  std::vector<int> ops;  ///< the role's SNAC ops, in program order
};

/// A throughput program lowered to its roles.
struct ThroughputRoles {
  bool push = false;
  bool rooted = false;  ///< a role or an op runs on one side of the root only
  std::vector<RoleKernel> roles;
};

/// The kernel IR as text: what `--print-ir-after-all` shows after the
/// lowering passes (docs/snac-ir.md "Kernel IR"), ops cited by `%N`.
std::string toText(const ThroughputRoles &k);
std::string toText(const PacketWarps &k);
std::string toText(const DirectCtas &k);
std::string toText(const HostGraph &k);

} // namespace purlin::ir::kernel

namespace purlin::ir {

/// The lowering pass of a latency program (regime Latency, one role of
/// packet groups on every rank) to packet warps; `variable`: the
/// collective is a V form (partitions of run-time sizes). Each SNAC op
/// lowers to the statements of its kind and operands; the decisions the IR
/// records (shareLoads, specializeTwoRanks) choose among them. Throws
/// IRError ("latency program: %N ...: why") for an op, or an order of ops,
/// that packet warps have no statements for.
kernel::PacketWarps lowerPacketWarps(const Program &latency, bool variable);

/// The lowering pass of the direct program's kernel form (regime Direct,
/// one role of CTAs on every rank) to direct CTAs, op after op in the
/// role's order; fuseWriteBack's record makes the write-back the
/// reduction's second store. Throws IRError ("direct program: %N ...:
/// why") for an op direct CTAs have no statements for.
kernel::DirectCtas lowerDirectCtas(const Program &direct);

/// The lowering pass of the direct program's copy-engine form
/// (Program::engine, one host role) to a host graph, op after op in the
/// host's enqueue order. Throws IRError ("direct program (copy engine): %N
/// ...: why") for an op the graph has no statement for.
kernel::HostGraph lowerHostGraph(const Program &engine);

/// The lowering pass of a throughput program (pull or push) to its roles'
/// statements: chunk loops (every chunk sliced over the role's CTAs, or
/// steps dealt to workers), the per-iteration values named once (Hoist),
/// rank conditions, waits, data moves with the barriers the workspace
/// needs, last-arriver counters and lane notifies. Throws IRError
/// ("throughput program: %N ...: why") for an op or loop the roles have no
/// statement for.
kernel::ThroughputRoles lowerThroughputRoles(const Program &throughput);

} // namespace purlin::ir
