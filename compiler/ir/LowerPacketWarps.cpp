/// @file LowerPacketWarps.cpp
/// @brief lowerPacketWarps(): the latency program's SNAC ops lowered to the
/// packet-warp statements of the kernel IR (KernelIR.h), one op after the
/// other, with the decisions the IR records (shareLoads,
/// specializeTwoRanks) choosing among them. The code shapes are the ones
/// measured best on the H200s (bench/NOTES.md E11-E13); where the lowering
/// chooses one, the rule is stated next to it.
#include <string>

#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::ir {

namespace {

using kernel::EpochRead;
using kernel::PacketWarps;
using kernel::Region;
using kernel::Stagger;
using kernel::StmtKind;
using kernel::Words;
using KStmt = kernel::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw IRError{"latency program: " + opLine(op) + ": " + why};
}

bool is(const Access &a, Buf b, RankRef owner, RankRef part) { return a.buf == b && a.owner == owner && a.part == part; }
bool sameAccess(const Access &a, const Access &b) {
  return a.buf == b.buf && a.owner == b.owner && a.part == b.part && a.chunked == b.chunked;
}
/// Not by a last arriver, on whole (unchunked) operands (on any ranks:
/// the caller checks which).
bool plain(const Op &op) {
  for (const Access *a : {&op.dst, &op.src, &op.srcSelf})
    if (a->chunked || a->rounded) return false;
  return !op.last;
}

/// The ops of a latency role, recognised by shape. A rooted collective's
/// ops run on the root or on the other ranks (Op::onlyOn): its put goes
/// from the root to every peer (Scatter, Broadcast) or from every other
/// rank to the root (Gather, Reduce), and only the ranks that read
/// packets poll; after the role, the DONE acknowledgement (insertDoneAcks)
/// keeps producers from running a call ahead of their readers.
struct Shape {
  const Op *put = nullptr;      ///< packet.put PK_k[r] <- X_r[part] for k in r+1..r-1 (mod n), or PK_root[r] <- X_r
  const Op *ownCopy = nullptr;  ///< copy O_r[r] <- X_r[own] (O_r <- X_r[own] for a packed output)
  const Op *pollCopy = nullptr; ///< for p in r-1..r+1: packet.poll PK_r[p]
  const Op *copy = nullptr;     ///<                      copy O_r[p] <- PK_r[p]
  const Op *pollRoot = nullptr; ///< packet.poll PK_r[root] (ranks != root)
  const Op *copyRoot = nullptr; ///< copy O_r <- PK_r[root]
  const Op *pollRed = nullptr;  ///< for p in 0..n-1:     packet.poll PK_r[p] if p != r
  const Op *step = nullptr;     ///<                      reduce.step O_r <- op(O_r, p == r ? X_r[own] : PK_r[p])
  const Op *doneArrive = nullptr, *doneNotify = nullptr, *doneWait = nullptr; ///< DONE acks, after the groups
  std::vector<const Op *> order; ///< every op, in program order
  bool toRoot() const { return put && put->var == RankRef::None; }
};

void checkPut(const Op &op) {
  if (!plain(op) || op.cond != Cond::Always) unsupported(op, "a put runs unconditionally");
  if (op.var == RankRef::None && op.onlyOn == RunsOn::NonRoot) {
    if (!is(op.dst, Buf::PK, RankRef::Root, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
        op.src.part != RankRef::None)
      unsupported(op, "a put to the root sends X_r into PK_root[r]");
    return;
  }
  if (op.onlyOn == RunsOn::NonRoot) unsupported(op, "the ranks != root put to the root");
  if (op.var != RankRef::K || op.domain != Domain::Ring)
    unsupported(op, "a put goes to every peer k in r+1..r-1 (mod n), or to the root");
  if (!is(op.dst, Buf::PK, RankRef::K, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
      (op.src.part != RankRef::None && op.src.part != RankRef::K))
    unsupported(op, "a put sends X_r or X_r[k] into PK_k[r]");
}

void checkOwnCopy(const Op &op) {
  if (!plain(op) || op.cond != Cond::Always || op.var != RankRef::None || op.onlyOn == RunsOn::NonRoot)
    unsupported(op, "the own copy runs once on every rank, or on the root");
  const bool packedOut = op.onlyOn == RunsOn::Root && is(op.dst, Buf::O, RankRef::R, RankRef::None);
  if ((!is(op.dst, Buf::O, RankRef::R, RankRef::R) && !packedOut) || op.src.buf != Buf::X ||
      op.src.owner != RankRef::R || (op.src.part != RankRef::None && op.src.part != RankRef::R))
    unsupported(op, "the own copy is O_r[r] <- X_r or X_r[r] (the root's: O_r <- X_r or X_r[r])");
}

bool isDone(const Op &op) {
  return (op.kind == OpKind::Arrive && op.counterBase == kDoneCounter) ||
         ((op.kind == OpKind::Notify || op.kind == OpKind::Wait) && op.sig == Sig::DONE);
}

/// The DONE acknowledgement after the groups: the ranks that read packets
/// arrive (every CTA) and the last arriver notifies the producers, which
/// wait for it.
void checkDone(const Op &op, Shape &sh) {
  const RunsOn readers = sh.put && sh.put->onlyOn == RunsOn::Root ? RunsOn::NonRoot : RunsOn::Root;
  const RunsOn producers = readers == RunsOn::Root ? RunsOn::NonRoot : RunsOn::Root;
  if (!sh.put || sh.put->onlyOn == RunsOn::All) unsupported(op, "DONE acks belong to a rooted program");
  if (op.kind == OpKind::Arrive) {
    if (sh.doneArrive || op.onlyOn != readers || op.slotSpace != SlotSpace::None || op.counterStride)
      unsupported(op, "one DONE counter, on the ranks that read packets");
    sh.doneArrive = &op;
    return;
  }
  if (op.kind == OpKind::Notify) {
    const bool toRootOnly = op.var == RankRef::None && op.target == RankRef::Root;
    const bool toOthers = op.var == RankRef::K && op.target == RankRef::K && op.domain == Domain::NonRoot;
    if (!sh.doneArrive || sh.doneNotify || !op.last || op.onlyOn != readers || op.round != RoundOf::Zero ||
        !(toRootOnly || toOthers))
      unsupported(op, "the DONE counter's last arriver notifies the producers");
    sh.doneNotify = &op;
    return;
  }
  const bool fromRoot = op.var == RankRef::None && op.sigSrc == RankRef::Root;
  const bool fromOthers = op.var == RankRef::P && op.sigSrc == RankRef::P && op.domain == Domain::NonRoot;
  if (!sh.doneNotify || sh.doneWait || op.last || op.onlyOn != producers || op.round != RoundOf::Zero ||
      op.cond != Cond::Always || !(fromRoot || fromOthers))
    unsupported(op, "the producers wait for their readers' DONE");
  sh.doneWait = &op;
}

/// A rooted program's poll of the root's packets and the copy of them.
void checkPollRoot(const Op &op, Shape &sh) {
  if (op.kind == OpKind::PacketPoll) {
    if (sh.pollRoot || !plain(op) || op.onlyOn != RunsOn::NonRoot || op.cond != Cond::Always ||
        op.var != RankRef::None || !is(op.src, Buf::PK, RankRef::R, RankRef::Root))
      unsupported(op, "the ranks != root poll PK_r[root] once");
    sh.pollRoot = &op;
    return;
  }
  if (!sh.pollRoot || sh.copyRoot || !plain(op) || op.onlyOn != RunsOn::NonRoot || op.cond != Cond::Always ||
      op.var != RankRef::None || !is(op.dst, Buf::O, RankRef::R, RankRef::None) || !sameAccess(op.src, sh.pollRoot->src))
    unsupported(op, "the polled root packets are stored into O_r");
  sh.copyRoot = &op;
}

void checkLoop(const Stmt &s, Shape &sh) {
  auto bad = [&](const std::string &why) {
    if (!s.body.empty() && !s.body[0].isLoop) unsupported(s.body[0].op, why);
    throw IRError{"latency program: a loop " + why};
  };
  if (s.var != RankRef::P || s.chunks || s.perCta || s.rounds || s.body.size() != 2 || s.body[0].isLoop ||
      s.body[1].isLoop)
    bad("over ranks p holds a poll and the op that reads its packets");
  const Op &poll = s.body[0].op, &use = s.body[1].op;
  if (poll.kind != OpKind::PacketPoll || !is(poll.src, Buf::PK, RankRef::R, RankRef::P) || !plain(poll) ||
      poll.var != RankRef::None)
    unsupported(poll, "the loop's first op polls PK_r[p]");
  // Every rank polls, or only the root (it alone reads: Gather, Reduce).
  if (poll.onlyOn == RunsOn::NonRoot || use.onlyOn != poll.onlyOn)
    unsupported(use, "a poll loop and its use run on every rank, or on the root");
  if (s.domain == Domain::RevRing && use.kind == OpKind::Copy) {
    if (poll.cond != Cond::Always) unsupported(poll, "a copy loop polls every peer");
    if (!plain(use) || use.cond != Cond::Always || !is(use.dst, Buf::O, RankRef::R, RankRef::P) ||
        !sameAccess(use.src, poll.src))
      unsupported(use, "the copy stores the polled packets into O_r[p]");
    if (sh.pollCopy || sh.pollRed) unsupported(poll, "one poll loop per latency program");
    sh.pollCopy = &poll, sh.copy = &use;
    return;
  }
  if (s.domain == Domain::All && use.kind == OpKind::Reduce) {
    if (poll.cond != Cond::NotSelf) unsupported(poll, "a reduce loop over 0..n-1 polls only p != r");
    if (!use.step || !plain(use) || use.cond != Cond::Always || !is(use.dst, Buf::O, RankRef::R, RankRef::None) ||
        !sameAccess(use.src, poll.src) || !use.hasSrcSelf || use.srcSelf.buf != Buf::X ||
        use.srcSelf.owner != RankRef::R || (use.srcSelf.part != RankRef::None && use.srcSelf.part != RankRef::R))
      unsupported(use, "the reduce.step accumulates (p == r ? X_r : PK_r[p]) into O_r");
    if (sh.pollCopy || sh.pollRed) unsupported(poll, "one poll loop per latency program");
    // The printed reduction has its n == 2 form (N2) as the IR records it.
    if (!s.twoRankForm)
      unsupported(use, "the reduction loop has no two-rank form recorded (the pass specializeTwoRanks)");
    sh.pollRed = &poll, sh.step = &use;
    return;
  }
  bad("over r-1..r+1 (mod n) copies, one over 0..n-1 reduces");
}

Shape recognise(const Role &role) {
  Shape sh;
  for (const Stmt &s : role.body) {
    if (s.isLoop) {
      checkLoop(s, sh);
      for (const Stmt &b : s.body) sh.order.push_back(&b.op);
      continue;
    }
    const Op &op = s.op;
    if (sh.doneArrive && !isDone(op)) unsupported(op, "nothing follows the DONE acks");
    if (isDone(op)) {
      checkDone(op, sh);
    } else if (op.kind == OpKind::PacketPut) {
      if (sh.put || sh.pollCopy || sh.pollRed || sh.pollRoot) unsupported(op, "one put per latency program, before its polls");
      checkPut(op);
      sh.put = &op;
    } else if (op.kind == OpKind::PacketPoll || (op.kind == OpKind::Copy && sh.pollRoot)) {
      if (sh.pollCopy || sh.pollRed) unsupported(op, "one poll per latency program");
      checkPollRoot(op, sh);
    } else if (op.kind == OpKind::Copy) {
      if (sh.ownCopy || sh.pollCopy || sh.pollRed) unsupported(op, "one own copy, before the polls");
      checkOwnCopy(op);
      sh.ownCopy = &op;
    } else {
      unsupported(op, "no CUDA form for this op at the top of a latency role");
    }
    sh.order.push_back(&op);
  }
  if (!sh.put || (!sh.pollCopy && !sh.pollRed && !sh.copyRoot))
    throw IRError{"latency program: a put and a poll are required"};
  if (sh.pollRed && sh.ownCopy) unsupported(*sh.ownCopy, "a reduction's own words enter through reduce.step");
  if ((sh.pollCopy || sh.copyRoot) && !sh.ownCopy) unsupported(*sh.put, "a copy program copies its own contribution");
  // Who reads and who produces: every rank both, or the root one side.
  const RunsOn readOn = sh.pollCopy ? sh.pollCopy->onlyOn : sh.pollRed ? sh.pollRed->onlyOn : RunsOn::NonRoot;
  const bool rooted = sh.put->onlyOn != RunsOn::All;
  if (rooted != (readOn != RunsOn::All) || (rooted && readOn == sh.put->onlyOn))
    unsupported(*sh.put, "the ranks that put are the ones that do not poll (or every rank does both)");
  if (sh.ownCopy && sh.ownCopy->onlyOn != RunsOn::All && sh.ownCopy->onlyOn != RunsOn::Root)
    unsupported(*sh.ownCopy, "the own copy runs on every rank or on the root");
  if (rooted != (sh.doneWait != nullptr))
    throw IRError{"latency program: a rooted program ends with DONE acks (and only a rooted one)"};
  return sh;
}

KStmt stmt(StmtKind kind, const Op *op = nullptr, bool cites = false) {
  return op ? kernel::stmtFor(kind, *op, cites) : kernel::stmtOf(kind);
}

/// A load of a lane's words: of `operand`, or of the bound `own` when `bound`.
KStmt load(const Access &operand, Words w, bool bound, const Op *citing = nullptr) {
  KStmt s = stmt(StmtKind::Load, citing, citing != nullptr);
  s.operand = operand, s.words = w, s.bound = bound;
  return s;
}
KStmt readEpoch(EpochRead why) {
  KStmt s = stmt(StmtKind::ReadEpoch);
  s.epochRead = why;
  return s;
}
KStmt put(Words w) {
  KStmt s = stmt(StmtKind::Put);
  s.words = w, s.region = Region::SendRing;
  return s;
}
KStmt poll(const Op &op, Stagger st, Region region, Words w, bool cites = true) {
  KStmt s = stmt(StmtKind::Poll, &op, cites);
  s.stagger = st, s.region = region, s.words = w;
  return s;
}
KStmt store(const Op &op, const Access &dst, Words w, bool cites) {
  KStmt s = stmt(StmtKind::Store, &op, cites);
  s.operand = dst, s.words = w;
  return s;
}
KStmt peerLoop(bool fromPeers, const Op *citing = nullptr) {
  KStmt s = stmt(StmtKind::PeerLoop, citing, citing != nullptr);
  s.fromPeers = fromPeers;
  return s;
}
/// The statements `body` on the ranks of `op` (as they are when it runs on every rank).
std::vector<KStmt> onRanksOf(const Op &op, std::vector<KStmt> body) {
  if (op.onlyOn == RunsOn::All) return body;
  KStmt s = stmt(StmtKind::OnRanks);
  s.on = op.onlyOn;
  s.body = std::move(body);
  return {s};
}
void append(std::vector<KStmt> &to, std::vector<KStmt> more) {
  for (KStmt &s : more) to.push_back(std::move(s));
}

class Lowerer {
public:
  Lowerer(const Role &role, const Shape &sh, bool variable) : role_(role), sh_(sh) {
    k_.reduces = sh.pollRed != nullptr;
    k_.rooted = sh.put->onlyOn != RunsOn::All;
    k_.variable = variable;
    if (variable && k_.rooted) unsupported(*sh.put, "a V form has no root");
    // One load serves every peer and the reduction where the IR records it
    // (the pass shareLoads: the one-shot AllReduce form).
    k_.sharedLoad = k_.reduces && sh.step->reusesLoadOf == sh.put->id;
    // Where the next call's grid is let in (griddepcontrol.launch_dependents):
    // right after the wait when one load feeds every put (it lost its whole
    // gain otherwise), else once the epoch load is issued (E12; measured).
    k_.triggerOnRead = !k_.sharedLoad;
    for (const Op *op : sh.order) k_.ops.push_back(op->id);
  }

  PacketWarps run() {
    // Operands that do not depend on a peer are bound before the group loop
    // (the compiler cannot move shared-memory loads across the puts).
    if (sh_.ownCopy) {
      k_.bindings.push_back({"own", sh_.ownCopy->src, false});
      k_.bindings.push_back({"ownDst", sh_.ownCopy->dst, true});
    } else if (!k_.sharedLoad) {
      k_.bindings.push_back({"own", sh_.step->srcSelf, false});
    }
    // The statements of each op, in the role's order (the IR's): the put
    // (with the epoch read after its first loads), the own copy, the
    // polls. A rooted program's ranks that put nothing read the epoch
    // before their first poll; the reduction's own operand is loaded right
    // after the put, while the packets travel (a V form loads it with its
    // partition's groups).
    auto &g = k_.group;
    bool epochRead = !k_.rooted;
    auto beforePoll = [&] {
      if (epochRead) return;
      g.push_back(readEpoch(k_.variable ? EpochRead::PastFlows : EpochRead::NothingPut));
      epochRead = true;
    };
    for (const ir::Stmt &st : role_.body) {
      const Op *op = st.isLoop ? &st.body[0].op : &st.op;
      if (op == sh_.put) {
        append(g, k_.variable ? variablePut() : putStmts());
        if (k_.variable) g.push_back(readEpoch(EpochRead::PastFlows)), epochRead = true;
      } else if (op == sh_.ownCopy) {
        if (k_.variable) g.push_back(variableOwnCopy());
        else append(g, ownCopy());
      } else if (op == sh_.pollRoot) {
        beforePoll();
        append(g, rootPoll());
      } else if (op == sh_.pollCopy) {
        beforePoll();
        if (k_.variable) g.push_back(variableCopyLoop());
        else append(g, copyLoop());
      } else if (op == sh_.pollRed) {
        beforePoll();
        if (k_.variable) g.push_back(variableReduce());
        else append(g, reduceLoop());
      }
      // copyRoot: with its poll; the DONE acks: after the groups (below).
    }
    if (sh_.doneWait) {
      k_.hasDoneAcks = true;
      kernel::DoneAcks &a = k_.acks;
      a.arrive = sh_.doneArrive->id, a.notify = sh_.doneNotify->id, a.wait = sh_.doneWait->id;
      a.readers = sh_.doneArrive->onlyOn;
      a.counterBase = sh_.doneArrive->counterBase;
      a.notifyEveryProducer = sh_.doneNotify->var != RankRef::None;
      a.waitEveryProducer = sh_.doneWait->var != RankRef::None;
    }
    return std::move(k_);
  }

private:
  const Role &role_;
  const Shape &sh_;
  PacketWarps k_;

  std::vector<KStmt> putStmts() {
    const Op &op = *sh_.put;
    if (sh_.toRoot()) {
      // The ranks != root: one flow, into the root's region r.
      KStmt at = stmt(StmtKind::RootPosition, &op, true);
      return onRanksOf(op, {at, load(op.src, Words::Flow, false), readEpoch(EpochRead::AfterLoad), put(Words::Flow)});
    }
    if (k_.sharedLoad) {  // never rooted
      KStmt l = load(op.src, Words::Mine, false, &op);
      l.operandOf = sh_.step->id, l.alsoOperand = true;
      KStmt all = stmt(StmtKind::PutToPeers);
      all.words = Words::Mine;
      return {l, readEpoch(EpochRead::AfterLoad), all};
    }
    // One load per peer: measured 0.04-0.09 us faster per call than one
    // load put to every peer when the words are not needed again (E12 run 22).
    KStmt loop = peerLoop(false, &op);
    loop.body = {load(op.src, Words::Flow, false), readEpoch(EpochRead::AfterLoad), put(Words::Flow)};
    std::vector<KStmt> out = onRanksOf(op, {loop});
    if (k_.reduces && !k_.rooted) {
      // The reduction's own operand, loaded while the packets travel.
      KStmt own = load(sh_.step->srcSelf, Words::Mine, true);
      own.operandOf = sh_.step->id;
      out.push_back(own);
    }
    return out;
  }

  /// V form: the put of every flow, each its own length and groups.
  std::vector<KStmt> variablePut() {
    const Op &op = *sh_.put;
    KStmt len = stmt(StmtKind::FlowLength);
    len.operand = op.src;
    KStmt loop = peerLoop(false, &op);
    loop.body = {len, load(op.src, Words::Flow, false), readEpoch(EpochRead::AfterLoad), put(Words::Flow)};
    return {loop};
  }

  /// V form: the own copy, of this rank's partition's length.
  KStmt variableOwnCopy() {
    KStmt own = stmt(StmtKind::OwnFlow, sh_.ownCopy, true);
    own.body = {load(sh_.ownCopy->src, Words::Flow, true), stmt(StmtKind::StoreUnlessInPlace)};
    return own;
  }

  /// V form: every peer's flow polled (its marker group when empty) and stored.
  KStmt variableCopyLoop() {
    KStmt len = stmt(StmtKind::FlowLength);
    len.operand = sh_.copy->dst, len.fromPeers = true;
    KStmt loop = peerLoop(true);
    loop.body = {len, poll(*sh_.pollCopy, Stagger::First, Region::RecvRing, Words::Flow),
                 store(*sh_.copy, sh_.copy->dst, Words::Flow, true)};
    return loop;
  }

  /// V form of a reduction: every source sends this rank's partition, so
  /// the polled flows all have its length (rg.ownLen).
  KStmt variableReduce() {
    KStmt own = stmt(StmtKind::OwnFlow);
    own.partition = true;
    own.body = {ownOperand(), reduceSteps()};
    return own;
  }

  std::vector<KStmt> ownCopy() {
    const Op &op = *sh_.ownCopy;
    return onRanksOf(op, {load(op.src, Words::Flow, true, &op), stmt(StmtKind::StoreUnlessInPlace)});
  }

  /// The copy loop: copies poll with a staggered first pair of loads
  /// (PollStagger::First, E13).
  std::vector<KStmt> copyLoop() {
    KStmt loop = peerLoop(true);
    loop.body = {poll(*sh_.pollCopy, Stagger::First, Region::RecvRing, Words::Flow),
                 store(*sh_.copy, sh_.copy->dst, Words::Flow, true)};
    return onRanksOf(*sh_.pollCopy, {loop});
  }

  /// The ranks != root: the root's packets, polled once, into O_r.
  std::vector<KStmt> rootPoll() {
    KStmt at = stmt(StmtKind::RootPosition);
    at.fromPeers = true;
    KStmt p = poll(*sh_.pollRoot, Stagger::First, Region::RecvRing, Words::Flow);
    p.fromRoot = true;
    return onRanksOf(*sh_.pollRoot, {at, p, store(*sh_.copyRoot, sh_.copyRoot->dst, Words::Flow, true)});
  }

  /// The reduction's own operand (p == r), from the bound `own`.
  KStmt ownOperand() {
    KStmt own = load(sh_.step->srcSelf, Words::Mine, true);
    own.operandOf = sh_.step->id;
    return own;
  }

  std::vector<KStmt> reduceLoop() {
    const Op &step = *sh_.step;
    if (step.onlyOn == RunsOn::All) return {reduceSteps()};
    // Only the root reduces (Reduce): its own words, then the steps.
    return onRanksOf(step, {ownOperand(), reduceSteps()});
  }

  /// The reduce loop: reductions poll with staggered loads every round
  /// (PollStagger::EveryRound, E13). Every rank's words of the group are
  /// held in registers (the loop over the ranks unrolled to kMaxRanks), then
  /// reduced by one dispatch; the two-rank form (specializeTwoRanks) polls
  /// the one peer and reduces the pair in rank order.
  KStmt reduceSteps() {
    const Op &pl = *sh_.pollRed, &step = *sh_.step;
    KStmt two = stmt(StmtKind::TwoRanks);
    KStmt gather = stmt(StmtKind::GatherRanks, &pl, true);
    gather.use = step.id, gather.reduced = step.dst, gather.stagger = Stagger::EveryRound;
    KStmt after = store(step, step.dst, Words::Reduced, false);
    after.after = step.id;
    two.body = {gather, stmt(StmtKind::ReduceRanks, &step, true), after};
    KStmt peer = poll(pl, Stagger::EveryRound, Region::OnlyPeer, Words::Flow);
    peer.citesAgain = true;
    KStmt pair = stmt(StmtKind::ReducePair, &step, true);
    pair.citesAgain = true;
    two.orElse = {peer, pair, store(step, step.dst, Words::Reduced, false)};
    return two;
  }
};

} // namespace

kernel::PacketWarps lowerPacketWarps(const Program &prog, bool variable) {
  if (prog.regime != Regime::Latency || prog.roles.size() != 1 || !prog.roles[0].perWarpGroup ||
      prog.roles[0].runsOn != RunsOn::All)
    throw IRError{"latency program: one role of packet groups on every rank is required"};
  const Shape sh = recognise(prog.roles[0]);
  return Lowerer(prog.roles[0], sh, variable).run();
}

} // namespace purlin::ir
