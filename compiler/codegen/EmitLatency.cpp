/// @file EmitLatency.cpp
/// @brief printLatencyProgram(): the latency role's device code, printed op
/// by op from the SNAC IR (see EmitLatency.h).
///
/// Shape of the printed code (docs/codegen.md "Latency program"): the role
/// function loops over the warp's packet groups (Role::perWarpGroup); in a
/// group, a lane carries two payload words of every flow, so every data op
/// moves the lane's words (`a`, `b`) and the printer keeps track of which
/// op's words they are. The code shapes are the ones measured best on the
/// H200s (bench/NOTES.md E11-E13); where the printer chooses one, the rule
/// is stated next to it in the output.
#include "codegen/EmitLatency.h"

#include <sstream>

#include "codegen/Cite.h"
#include "codegen/Spelling.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::Access;
using ir::Buf;
using ir::Domain;
using ir::Op;
using ir::OpKind;
using ir::RankRef;
using ir::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw EmitError("latency program: " + ir::opLine(op) + ": " + why);
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
  if (!plain(op) || op.cond != ir::Cond::Always) unsupported(op, "a put runs unconditionally");
  if (op.var == RankRef::None && op.onlyOn == ir::RunsOn::NonRoot) {
    if (!is(op.dst, Buf::PK, RankRef::Root, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
        op.src.part != RankRef::None)
      unsupported(op, "a put to the root sends X_r into PK_root[r]");
    return;
  }
  if (op.onlyOn == ir::RunsOn::NonRoot) unsupported(op, "the ranks != root put to the root");
  if (op.var != RankRef::K || op.domain != Domain::Ring)
    unsupported(op, "a put goes to every peer k in r+1..r-1 (mod n), or to the root");
  if (!is(op.dst, Buf::PK, RankRef::K, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
      (op.src.part != RankRef::None && op.src.part != RankRef::K))
    unsupported(op, "a put sends X_r or X_r[k] into PK_k[r]");
}

void checkOwnCopy(const Op &op) {
  if (!plain(op) || op.cond != ir::Cond::Always || op.var != RankRef::None || op.onlyOn == ir::RunsOn::NonRoot)
    unsupported(op, "the own copy runs once on every rank, or on the root");
  const bool packedOut = op.onlyOn == ir::RunsOn::Root && is(op.dst, Buf::O, RankRef::R, RankRef::None);
  if ((!is(op.dst, Buf::O, RankRef::R, RankRef::R) && !packedOut) || op.src.buf != Buf::X ||
      op.src.owner != RankRef::R || (op.src.part != RankRef::None && op.src.part != RankRef::R))
    unsupported(op, "the own copy is O_r[r] <- X_r or X_r[r] (the root's: O_r <- X_r or X_r[r])");
}

bool isDone(const Op &op) {
  return (op.kind == OpKind::Arrive && op.counterBase == ir::kDoneCounter) ||
         ((op.kind == OpKind::Notify || op.kind == OpKind::Wait) && op.sig == ir::Sig::DONE);
}

/// The DONE acknowledgement after the groups: the ranks that read packets
/// arrive (every CTA) and the last arriver notifies the producers, which
/// wait for it.
void checkDone(const Op &op, Shape &sh) {
  const ir::RunsOn readers = sh.put && sh.put->onlyOn == ir::RunsOn::Root ? ir::RunsOn::NonRoot : ir::RunsOn::Root;
  const ir::RunsOn producers = readers == ir::RunsOn::Root ? ir::RunsOn::NonRoot : ir::RunsOn::Root;
  if (!sh.put || sh.put->onlyOn == ir::RunsOn::All) unsupported(op, "DONE acks belong to a rooted program");
  if (op.kind == OpKind::Arrive) {
    if (sh.doneArrive || op.onlyOn != readers || op.slotSpace != ir::SlotSpace::None || op.counterStride)
      unsupported(op, "one DONE counter, on the ranks that read packets");
    sh.doneArrive = &op;
    return;
  }
  if (op.kind == OpKind::Notify) {
    const bool toRootOnly = op.var == RankRef::None && op.target == RankRef::Root;
    const bool toOthers = op.var == RankRef::K && op.target == RankRef::K && op.domain == Domain::NonRoot;
    if (!sh.doneArrive || sh.doneNotify || !op.last || op.onlyOn != readers || op.round != ir::RoundOf::Zero ||
        !(toRootOnly || toOthers))
      unsupported(op, "the DONE counter's last arriver notifies the producers");
    sh.doneNotify = &op;
    return;
  }
  const bool fromRoot = op.var == RankRef::None && op.sigSrc == RankRef::Root;
  const bool fromOthers = op.var == RankRef::P && op.sigSrc == RankRef::P && op.domain == Domain::NonRoot;
  if (!sh.doneNotify || sh.doneWait || op.last || op.onlyOn != producers || op.round != ir::RoundOf::Zero ||
      op.cond != ir::Cond::Always || !(fromRoot || fromOthers))
    unsupported(op, "the producers wait for their readers' DONE");
  sh.doneWait = &op;
}

/// A rooted program's poll of the root's packets and the copy of them.
void checkPollRoot(const Op &op, Shape &sh) {
  if (op.kind == OpKind::PacketPoll) {
    if (sh.pollRoot || !plain(op) || op.onlyOn != ir::RunsOn::NonRoot || op.cond != ir::Cond::Always ||
        op.var != RankRef::None || !is(op.src, Buf::PK, RankRef::R, RankRef::Root))
      unsupported(op, "the ranks != root poll PK_r[root] once");
    sh.pollRoot = &op;
    return;
  }
  if (!sh.pollRoot || sh.copyRoot || !plain(op) || op.onlyOn != ir::RunsOn::NonRoot || op.cond != ir::Cond::Always ||
      op.var != RankRef::None || !is(op.dst, Buf::O, RankRef::R, RankRef::None) || !sameAccess(op.src, sh.pollRoot->src))
    unsupported(op, "the polled root packets are stored into O_r");
  sh.copyRoot = &op;
}

void checkLoop(const Stmt &s, Shape &sh) {
  auto bad = [&](const std::string &why) {
    if (!s.body.empty() && !s.body[0].isLoop) unsupported(s.body[0].op, why);
    throw EmitError("latency program: a loop " + why);
  };
  if (s.var != RankRef::P || s.chunks || s.perCta || s.rounds || s.body.size() != 2 || s.body[0].isLoop ||
      s.body[1].isLoop)
    bad("over ranks p holds a poll and the op that reads its packets");
  const Op &poll = s.body[0].op, &use = s.body[1].op;
  if (poll.kind != OpKind::PacketPoll || !is(poll.src, Buf::PK, RankRef::R, RankRef::P) || !plain(poll) ||
      poll.var != RankRef::None)
    unsupported(poll, "the loop's first op polls PK_r[p]");
  // Every rank polls, or only the root (it alone reads: Gather, Reduce).
  if (poll.onlyOn == ir::RunsOn::NonRoot || use.onlyOn != poll.onlyOn)
    unsupported(use, "a poll loop and its use run on every rank, or on the root");
  if (s.domain == Domain::RevRing && use.kind == OpKind::Copy) {
    if (poll.cond != ir::Cond::Always) unsupported(poll, "a copy loop polls every peer");
    if (!plain(use) || use.cond != ir::Cond::Always || !is(use.dst, Buf::O, RankRef::R, RankRef::P) ||
        !sameAccess(use.src, poll.src))
      unsupported(use, "the copy stores the polled packets into O_r[p]");
    if (sh.pollCopy || sh.pollRed) unsupported(poll, "one poll loop per latency program");
    sh.pollCopy = &poll, sh.copy = &use;
    return;
  }
  if (s.domain == Domain::All && use.kind == OpKind::Reduce) {
    if (poll.cond != ir::Cond::NotSelf) unsupported(poll, "a reduce loop over 0..n-1 polls only p != r");
    if (!use.step || !plain(use) || use.cond != ir::Cond::Always || !is(use.dst, Buf::O, RankRef::R, RankRef::None) ||
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

Shape recognise(const ir::Role &role) {
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
      if (!sh.put) unsupported(op, "the own copy comes after the put (the words travel while it runs)");
      checkOwnCopy(op);
      sh.ownCopy = &op;
    } else {
      unsupported(op, "no CUDA form for this op at the top of a latency role");
    }
    sh.order.push_back(&op);
  }
  if (!sh.put || (!sh.pollCopy && !sh.pollRed && !sh.copyRoot))
    throw EmitError("latency program: a put and a poll are required");
  if (sh.pollRed && sh.ownCopy) unsupported(*sh.ownCopy, "a reduction's own words enter through reduce.step");
  if ((sh.pollCopy || sh.copyRoot) && !sh.ownCopy) unsupported(*sh.put, "a copy program copies its own contribution");
  // Who reads and who produces: every rank both, or the root one side.
  const ir::RunsOn readOn = sh.pollCopy ? sh.pollCopy->onlyOn : sh.pollRed ? sh.pollRed->onlyOn : ir::RunsOn::NonRoot;
  const bool rooted = sh.put->onlyOn != ir::RunsOn::All;
  if (rooted != (readOn != ir::RunsOn::All) || (rooted && readOn == sh.put->onlyOn))
    unsupported(*sh.put, "the ranks that put are the ones that do not poll (or every rank does both)");
  if (sh.ownCopy && sh.ownCopy->onlyOn != ir::RunsOn::All && sh.ownCopy->onlyOn != ir::RunsOn::Root)
    unsupported(*sh.ownCopy, "the own copy runs on every rank or on the root");
  if (rooted != (sh.doneWait != nullptr))
    throw EmitError("latency program: a rooted program ends with DONE acks (and only a rooted one)");
  return sh;
}

/// The C++ expression of an operand of the group body; a peer's partition
/// is indexed by the ring position `i` of the enclosing loop over peers.
std::string pointer(const Access &a) {
  if (a.buf == Buf::X) return a.part == RankRef::None ? "in" : a.part == RankRef::R ? "in + rg.ownTx" : "in + rg.tx[i - 1]";
  if (a.part == RankRef::None) return "out";
  return a.part == RankRef::R ? "out + rg.ownRx" : "out + rg.rx[i - 1]";
}

/// "// %N [n == 2]": the same op again, in a specialization for two ranks
/// (cited once in full above, in the general form).
std::string citeAgain(const Op &op, const std::string &pad, const std::string &variant) {
  return pad + "// %" + std::to_string(op.id) + " [" + variant + "]\n";
}

class Printer {
public:
  Printer(const std::string &id, const Shape &sh, bool variable)
      : id_(id), sh_(sh), reduce_(sh.pollRed != nullptr), rooted_(sh.put->onlyOn != ir::RunsOn::All),
        variable_(variable) {
    if (variable_ && rooted_) unsupported(*sh.put, "a V form has no root");
    // One load serves every peer and the reduction where the IR records it
    // (the pass shareLoads: the one-shot AllReduce form).
    shared_ = reduce_ && sh.step->reusesLoadOf == sh.put->id;
  }

  LatencyCode print() {
    LatencyCode code;
    code.kernel = id_ + "_latencyKernel";
    code.reduces = reduce_;
    for (const Op *op : sh_.order) code.ops.push_back(op->id);
    roleFunction();
    kernel();
    code.text = o_.str();
    return code;
  }

private:
  const std::string &id_;
  const Shape &sh_;
  bool reduce_, rooted_, variable_, shared_ = false;
  std::ostringstream o_;

  /// "if (r == root) {" / "if (r != root) {" for an op of some ranks only
  /// ("" for every rank); closed by closeOn.
  std::string openOn(const Op &op, const std::string &pad) {
    if (op.onlyOn == ir::RunsOn::All) return pad;
    o_ << pad << "if (r " << (op.onlyOn == ir::RunsOn::Root ? "==" : "!=") << " root) {  // "
       << ir::toString(op.onlyOn) << "\n";
    return pad + "  ";
  }
  void closeOn(const Op &op, const std::string &pad) {
    if (op.onlyOn != ir::RunsOn::All) o_ << pad << "}\n";
  }

  void roleFunction() {
    o_ << "/// Role latency (every CTA of the grid; IR ops ";
    for (std::size_t i = 0; i < sh_.order.size(); ++i) o_ << (i ? ", %" : "%") << sh_.order[i]->id;
    o_ << "): packet group g of every\n"
       << "/// flow on warp g mod warps; lane l carries payload words 63g+2l and 63g+2l+1.\n";
    if (reduce_)
      o_ << "/// N2: two ranks (chosen at run time); the running reduction of the two\n"
         << "/// operands is one reducePair in rank order (bench/NOTES.md E13 run3).\n"
         << "/// The reduction's class is dispatched once per packet group (every rank's\n"
         << "/// words of the group in registers), not per rank or word; Pair: one pair's\n"
         << "/// kernel (a constant reduction) or kAnyPair (the instantiation table).\n"
         << "template <bool W8, bool N2, int Pair, class Epoch>\n";
    else
      o_ << "template <bool W8, class Epoch>\n";
    o_ << "__device__ void " << id_ << "_latency(const DeviceComm& dc, const Plan& pl, const packet::Regions& rg,\n"
       << "    const packet::CallShape& cs, const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp,\n"
       << "    std::size_t warps) {\n";
    o_ << (reduce_ ? "  const int r = pl.rank, n = N2 ? 2 : pl.n, lane = laneId();\n"
                   : rooted_ ? "  const int r = pl.rank, n = pl.n, lane = laneId();\n"
                             : "  const int n = pl.n, lane = laneId();\n");
    if (rooted_) o_ << "  const int root = pl.root;\n";
    if (reduce_) o_ << "  " << kPairReductionStatement << "\n";
    if (variable_)
      o_ << "  // V form: flows differ in length; G covers the longest, each flow its own\n"
         << "  // flowGroups (a zero-byte flow: its marker group, docs/snac-protocol.md).\n"
         << "  const std::size_t G = cs.G;\n";
    else
      o_ << "  const std::size_t len = cs.len, W = cs.W, G = cs.G;\n";
    // Operands that do not depend on a peer are bound before the group loop
    // (the compiler cannot move shared-memory loads across the puts).
    if (sh_.ownCopy) {
      o_ << "  const std::byte* const own = " << pointer(sh_.ownCopy->src) << ";\n"
         << "  std::byte* const ownDst = " << pointer(sh_.ownCopy->dst) << ";\n";
    } else if (!shared_) {
      o_ << "  const std::byte* const own = " << pointer(sh_.step->srcSelf) << ";\n";
    }
    o_ << "  for (std::size_t g = warp; g < G; g += warps) {\n";
    if (!variable_) o_ << "    const packet::LaneWords x(g, lane, W);\n";
    o_ << (reduce_ ? "    uint64_t mineA, mineB, a, b;\n" : "    uint64_t a, b;\n");
    if (variable_) {
      variablePut();
      o_ << "    ce.ensure(dc, rg);  // a warp past the groups of every flow it sends reads the epoch here\n";
      if (sh_.ownCopy) variableOwnCopy();
      if (reduce_) variableReduce();
      else variableCopyLoop();
      o_ << "  }\n}\n\n";
      return;
    }
    put();
    if (sh_.ownCopy) ownCopy();
    if (rooted_) o_ << "    ce.ensure(dc, rg);  // the ranks that put nothing read the epoch here\n";
    if (reduce_) reduceLoop();
    else if (sh_.copyRoot) rootPoll();
    else copyLoop();
    o_ << "  }\n}\n\n";
  }

  /// The ranks != root: the root's packets, polled once, into O_r.
  void rootPoll() {
    const std::string p = openOn(*sh_.pollRoot, "    ");
    o_ << p << "const int i = (r + n - root) % n;  // root = (r - i) mod n: its region is rg.recv[i - 1]\n"
       << cite(*sh_.pollRoot, p)
       << p << "if (!packet::pollLane<PollStagger::First>(dc, pl, rg.recv[i - 1] + ce.h, root, g, lane, a, b))\n"
       << p << "  return;  // a checked wait gave up\n"
       << cite(*sh_.copyRoot, p)
       << p << "packet::storeLane<W8>(x, " << pointer(sh_.copyRoot->dst) << ", len, a, b);\n";
    closeOn(*sh_.pollRoot, "    ");
  }

  void put() {
    const Op &op = *sh_.put;
    if (sh_.toRoot()) {
      // The ranks != root: one flow, into the root's region r.
      const std::string p = openOn(op, "    ");
      o_ << cite(op, p)
         << p << "const int i = (root + n - r) % n;  // root = (r + i) mod n: rg.send[i - 1]\n"
         << p << "packet::loadLane<W8>(x, " << pointer(op.src) << ", len, a, b);\n"
         << p << "ce.ensure(dc, rg);  // the call's epoch, read once the first loads are issued (E12)\n"
         << p << "slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack(a, b, lane));\n";
      closeOn(op, "    ");
      return;
    }
    // A rooted put to every peer runs on the root (Scatter, Broadcast).
    const std::string pad = openOn(op, "    ");
    o_ << cite(op, pad);
    if (shared_) {  // never rooted: pad is the group loop's
      o_ << "    packet::loadLane<W8>(x, " << pointer(op.src) << ", len, mineA, mineB);  // also %" << sh_.step->id
         << "'s operand p == r\n"
         << "    ce.ensure(dc, rg);  // the call's epoch, read once the first loads are issued (E12)\n"
         << "    {\n"
         << "      const SlotWords s = groupPack(mineA, mineB, lane);\n"
         << "#pragma unroll 1\n"
         << "      for (int i = 1; i < n; ++i) slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), s);  // k = (r + i) mod n\n"
         << "    }\n";
      return;
    }
    // One load per peer: measured 0.04-0.09 us faster per call than one
    // load put to every peer when the words are not needed again (E12 run 22).
    o_ << "#pragma unroll 1\n"
       << pad << "for (int i = 1; i < n; ++i) {  // k = (r + i) mod n\n"
       << pad << "  packet::loadLane<W8>(x, " << pointer(op.src) << ", len, a, b);\n"
       << pad << "  ce.ensure(dc, rg);  // the call's epoch, read once the first loads are issued (E12)\n"
       << pad << "  slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack(a, b, lane));\n"
       << pad << "}\n";
    closeOn(op, "    ");
    if (reduce_ && !rooted_) {
      // The reduction's own operand, loaded while the packets travel.
      o_ << "    packet::loadLane<W8>(x, own, len, mineA, mineB);  // %" << sh_.step->id << "'s operand p == r, "
         << ir::accessText(sh_.step->srcSelf) << "\n";
    }
  }

  /// V form: the put of every flow, each its own length and groups.
  void variablePut() {
    const Op &op = *sh_.put;
    o_ << cite(op, "    ")
       << "#pragma unroll 1\n"
       << "    for (int i = 1; i < n; ++i) {  // k = (r + i) mod n\n"
       << "      const std::size_t len = rg.sendLen[i - 1];  // " << ir::accessText(op.src) << "'s bytes for k\n"
       << "      if (g >= packet::flowGroups(len)) continue;\n"
       << "      const packet::LaneWords x(g, lane, packet::words(len));\n"
       << "      packet::loadLane<W8>(x, " << pointer(op.src) << ", len, a, b);\n"
       << "      ce.ensure(dc, rg);  // the call's epoch, read once the first loads are issued (E12)\n"
       << "      slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack(a, b, lane));\n"
       << "    }\n";
  }

  /// V form: the own copy, of this rank's partition's length.
  void variableOwnCopy() {
    o_ << cite(*sh_.ownCopy, "    ")
       << "    if (g < packet::flowGroups(rg.ownLen)) {\n"
       << "      const std::size_t len = rg.ownLen;\n"
       << "      const packet::LaneWords x(g, lane, packet::words(len));\n"
       << "      packet::loadLane<W8>(x, own, len, a, b);\n"
       << "      if (own != ownDst) packet::storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place\n"
       << "    }\n";
  }

  /// V form: every peer's flow polled (its marker group when empty) and stored.
  void variableCopyLoop() {
    o_ << "#pragma unroll 1\n"
       << "    for (int i = 1; i < n; ++i) {  // p in r-1..r+1 (mod n)\n"
       << "      const int p = rg.from[i - 1];\n"
       << "      const std::size_t len = rg.recvLen[i - 1];  // " << ir::accessText(sh_.copy->dst) << "'s bytes\n"
       << "      if (g >= packet::flowGroups(len)) continue;\n"
       << "      const packet::LaneWords x(g, lane, packet::words(len));\n"
       << cite(*sh_.pollCopy, "      ")
       << "      if (!packet::pollLane<PollStagger::First>(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b))\n"
       << "        return;  // a checked wait gave up\n"
       << cite(*sh_.copy, "      ")
       << "      packet::storeLane<W8>(x, " << pointer(sh_.copy->dst) << ", len, a, b);\n"
       << "    }\n";
  }

  /// V form of a reduction: every source sends this rank's partition, so
  /// the polled flows all have its length (rg.ownLen).
  void variableReduce() {
    const Op &step = *sh_.step;
    o_ << "    if (g < packet::flowGroups(rg.ownLen)) {  // the groups of this rank's partition\n"
       << "      const std::size_t len = rg.ownLen;\n"
       << "      const packet::LaneWords x(g, lane, packet::words(len));\n"
       << "      packet::loadLane<W8>(x, own, len, mineA, mineB);  // %" << step.id << "'s operand p == r, "
       << ir::accessText(step.srcSelf) << "\n";
    reduceSteps("      ");
    o_ << "    }\n";
  }

  void ownCopy() {
    const std::string p = openOn(*sh_.ownCopy, "    ");
    o_ << cite(*sh_.ownCopy, p)
       << p << "packet::loadLane<W8>(x, own, len, a, b);\n"
       << p << "if (own != ownDst) packet::storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place\n";
    closeOn(*sh_.ownCopy, "    ");
  }

  void copyLoop() {
    // Copies poll with a staggered first pair of loads (PollStagger::First, E13).
    const std::string q = openOn(*sh_.pollCopy, "    ");
    o_ << "#pragma unroll 1\n"
       << q << "for (int i = 1; i < n; ++i) {  // p in r-1..r+1 (mod n)\n"
       << q << "  const int p = rg.from[i - 1];\n"
       << cite(*sh_.pollCopy, q + "  ")
       << q << "  if (!packet::pollLane<PollStagger::First>(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b))\n"
       << q << "    return;  // a checked wait gave up\n"
       << cite(*sh_.copy, q + "  ")
       << q << "  packet::storeLane<W8>(x, " << pointer(sh_.copy->dst) << ", len, a, b);\n"
       << q << "}\n";
    closeOn(*sh_.pollCopy, "    ");
  }

  void reduceLoop() {
    const Op &step = *sh_.step;
    if (step.onlyOn == ir::RunsOn::All) return reduceSteps("    ");
    // Only the root reduces (Reduce): its own words, then the steps.
    const std::string q = openOn(step, "    ");
    o_ << q << "packet::loadLane<W8>(x, own, len, mineA, mineB);  // %" << step.id << "'s operand p == r, "
       << ir::accessText(step.srcSelf) << "\n";
    reduceSteps(q);
    closeOn(step, "    ");
  }

  /// The reduce loop at indentation `q` (the group loop's, or a rank condition's).
  void reduceSteps(const std::string &q) {
    const Op &poll = *sh_.pollRed, &step = *sh_.step;
    const std::string classes = "kernelClasses<Pair>(" + reductionsName(id_) + ")";
    // Reductions poll with staggered loads every round (PollStagger::EveryRound, E13).
    // Every rank's words of the group are held in registers (the loop over
    // the ranks unrolled to kMaxRanks), then reduced by one dispatch.
    o_ << q << "if constexpr (!N2) {\n"
       << q << "  uint64_t wa[kMaxRanks], wb[kMaxRanks];  // rank p's operand words of " << ir::accessText(step.dst) << "\n"
       << "#pragma unroll\n"
       << q << "  for (int p = 0; p < kMaxRanks; ++p) {  // p in 0..n-1\n"
       << q << "    if (p >= n) break;\n"
       << cite(poll, q + "    ")
       << q << "    if (p == r) {\n"
       << q << "      wa[p] = mineA;  // %" << step.id << "'s operand p == r\n"
       << q << "      wb[p] = mineB;\n"
       << q << "    } else if (!packet::pollLane<PollStagger::EveryRound>(dc, pl, rg.recvFrom[p] + ce.h, p, g, lane, wa[p], wb[p])) {\n"
       << q << "      return;  // a checked wait gave up\n"
       << q << "    }\n"
       << q << "  }\n"
       << cite(step, q + "  ")
       << q << "  uint64_t ra, rb;\n"
       << q << "  reduceGroupWords<" << classes << ">(red, wa, wb, n, ra, rb);  // one dispatch for the group\n"
       << q << "  packet::storeLane<W8>(x, " << pointer(step.dst) << ", len, ra, rb);  // %"
       << step.id << " after the last p\n"
       << q << "} else {\n"
       << q << "  // p in 0..1: the one peer is rg.from[0]\n"
       << citeAgain(poll, q + "  ", "n == 2")
       << q << "  if (!packet::pollLane<PollStagger::EveryRound>(dc, pl, rg.recv[0] + ce.h, rg.from[0], g, lane, a, b))\n"
       << q << "    return;  // a checked wait gave up\n"
       << citeAgain(step, q + "  ", "n == 2")
       << q << "  const bool ownFirst = r == 0;  // both steps at once, in ascending rank order\n"
       << q << "  uint64_t ra, rb;\n"
       << q << "  reduceGroupPair<" << classes << ">(red, ownFirst ? mineA : a, ownFirst ? a : mineA,\n"
       << q << "                  ownFirst ? mineB : b, ownFirst ? b : mineB, ra, rb);  // one dispatch for the group\n"
       << q << "  packet::storeLane<W8>(x, " << pointer(step.dst) << ", len, ra, rb);\n"
       << q << "}\n";
  }

  void kernel() {
    // Where the next call's grid is let in (griddepcontrol.launch_dependents):
    // right after the wait when one load feeds every put (it lost its whole
    // gain otherwise), else once the epoch load is issued (E12; measured).
    const bool trigger = !shared_;
    o_ << "/// The latency kernel: grid = plan.latencyCtas x plan.latencyThreads (latencyShape),\n"
       << "/// no dynamic shared memory. W8 = Plan::words8 (whole aligned words).\n";
    if (reduce_) o_ << "/// Pair: kAnyPair, or the one (dtype, op) pair it is specialized for.\n";
    o_ << (reduce_ ? "template <bool W8, int Pair>\n" : "template <bool W8>\n")
       << "__global__ void " << id_ << "_latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {\n"
       << "  constexpr bool kTriggerOnRead = " << (trigger ? "true" : "false")
       << ";  // " << (trigger ? "let the next grid in once the epoch load is issued"
                                : "one load feeds every put: let the next grid in right after the wait")
       << " (E12)\n";
    o_ << "  __shared__ packet::Regions rg;\n"
       << "  packet::ctaRegions" << (variable_ ? "<true>" : "") << "(dc, pl, rg);  // parameters only: before the wait\n"
       << "  const packet::CallShape cs(rg);\n"
       << "  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / 32);\n"
       << "  const std::size_t warp = std::size_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;\n"
       << "  gridDependencyWait();\n"
       << "  if constexpr (!kTriggerOnRead) gridLaunchDependents();\n"
       << "  packet::CallEpoch<kTriggerOnRead> ce;\n";
    if (reduce_)
      o_ << "  if (pl.n == 2)\n"
         << "    " << id_ << "_latency<W8, true, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n"
         << "  else\n"
         << "    " << id_ << "_latency<W8, false, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    else
      o_ << "  " << id_ << "_latency<W8>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    o_ << "  ce.ensure(dc, rg);  // threads that pushed nothing (a warp without a group)\n";
    if (rooted_) doneAcks();
    o_ << "  ctaEndCall(dc, ce.e);\n"
       << "}\n";
  }

  /// The DONE acknowledgement of a rooted program, once per CTA after its
  /// groups: every CTA of a reading rank arrives; the last one notifies the
  /// producers; every CTA of a producer waits for it (so that a producer's
  /// next call cannot overwrite packets its readers still hold).
  void doneAcks() {
    const Op &arrive = *sh_.doneArrive, &note = *sh_.doneNotify, &wait = *sh_.doneWait;
    const std::string on = arrive.onlyOn == ir::RunsOn::Root ? "==" : "!=";
    o_ << "  const int r = pl.rank, root = pl.root;\n"
       << "  if (r " << on << " root) {  // " << ir::toString(arrive.onlyOn) << "\n"
       << cite(arrive, "    ")
       << "    const bool last = ctaArriveLast(dc, " << arrive.counterBase << "u, int(gridDim.x));  // every CTA of the grid\n"
       << "    if (last && threadIdx.x == 0) {\n"
       << cite(note, "      ");
    if (note.var == RankRef::None) {
      o_ << "      notify(dc, root, doneIndex(r), signalValue(ce.e, 0));\n";
    } else {
      o_ << "      arch::fenceAcqRelSys();  // one fence, then a release per target\n"
         << "      for (int k = 0; k < pl.n; ++k)\n"
         << "        if (k != root) arch::stReleaseSys(dc.signals[k] + doneIndex(r), signalValue(ce.e, 0));\n";
    }
    o_ << "    }\n"
       << "  } else {  // " << ir::toString(wait.onlyOn) << "\n"
       << cite(wait, "    ");
    if (wait.var == RankRef::None) {
      o_ << "    (void)ctaWaitSignal(dc, doneIndex(root), signalValue(ce.e, 0));  // a checked wait that gave up has recorded it\n";
    } else {
      o_ << "    int ok = 1;\n"
         << "    if (threadIdx.x == 0)\n"
         << "      for (int p = 0; p < pl.n && ok; ++p)\n"
         << "        if (p != root) ok = waitSignal(dc, doneIndex(p), signalValue(ce.e, 0));\n"
         << "    (void)__syncthreads_and(ok);  // a checked wait that gave up has recorded it\n";
    }
    o_ << "  }\n";
  }
};

} // namespace

LatencyCode printLatencyProgram(const std::string &id, const ir::Program &prog, bool variable) {
  if (prog.regime != ir::Regime::Latency || prog.roles.size() != 1 || !prog.roles[0].perWarpGroup ||
      prog.roles[0].runsOn != ir::RunsOn::All)
    throw EmitError("latency program: one role of packet groups on every rank is required");
  Shape sh = recognise(prog.roles[0]);
  return Printer(id, sh, variable).print();
}

} // namespace purlin::codegen
