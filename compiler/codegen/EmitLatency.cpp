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
/// Runs on every rank, not by a last arriver, on whole (unchunked) operands.
bool plain(const Op &op) {
  for (const Access *a : {&op.dst, &op.src, &op.srcSelf})
    if (a->chunked || a->rounded) return false;
  return op.onlyOn == ir::RunsOn::All && !op.last;
}

/// The ops of a latency role, recognised by shape.
struct Shape {
  const Op *put = nullptr;      ///< packet.put PK_k[r] <- X_r[part] for k in r+1..r-1 (mod n)
  const Op *ownCopy = nullptr;  ///< copy O_r[r] <- X_r[own]
  const Op *pollCopy = nullptr; ///< for p in r-1..r+1: packet.poll PK_r[p]
  const Op *copy = nullptr;     ///<                      copy O_r[p] <- PK_r[p]
  const Op *pollRed = nullptr;  ///< for p in 0..n-1:     packet.poll PK_r[p] if p != r
  const Op *step = nullptr;     ///<                      reduce.step O_r <- op(O_r, p == r ? X_r[own] : PK_r[p])
  std::vector<const Op *> order; ///< every op, in program order
};

void checkPut(const Op &op) {
  if (!plain(op) || op.cond != ir::Cond::Always) unsupported(op, "a put runs on every rank, unconditionally");
  if (op.var != RankRef::K || op.domain != Domain::Ring)
    unsupported(op, "a put goes to every peer k in r+1..r-1 (mod n)");
  if (!is(op.dst, Buf::PK, RankRef::K, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
      (op.src.part != RankRef::None && op.src.part != RankRef::K))
    unsupported(op, "a put sends X_r or X_r[k] into PK_k[r]");
}

void checkOwnCopy(const Op &op) {
  if (!plain(op) || op.cond != ir::Cond::Always || op.var != RankRef::None)
    unsupported(op, "the own copy runs once on every rank");
  if (!is(op.dst, Buf::O, RankRef::R, RankRef::R) || op.src.buf != Buf::X || op.src.owner != RankRef::R ||
      (op.src.part != RankRef::None && op.src.part != RankRef::R))
    unsupported(op, "the own copy is O_r[r] <- X_r or X_r[r]");
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
    if (op.kind == OpKind::PacketPut) {
      if (sh.put || sh.pollCopy || sh.pollRed) unsupported(op, "one put per latency program, before its polls");
      checkPut(op);
      sh.put = &op;
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
  if (!sh.put || (!sh.pollCopy && !sh.pollRed)) throw EmitError("latency program: a put and a poll loop are required");
  if (sh.pollRed && sh.ownCopy) unsupported(*sh.ownCopy, "a reduction's own words enter through reduce.step");
  if (sh.pollCopy && !sh.ownCopy) unsupported(*sh.pollCopy, "a copy program copies its own contribution");
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
  Printer(const std::string &id, const Shape &sh) : id_(id), sh_(sh), reduce_(sh.pollRed != nullptr) {
    // The put's words are the reduction's own operand (X_r whole): one load
    // serves every peer and the reduction (the one-shot AllReduce form).
    shared_ = reduce_ && sameAccess(sh.put->src, sh.step->srcSelf);
  }

  LatencyCode print() {
    LatencyCode code;
    code.kernel = id_ + "_latencyKernel";
    code.typed = reduce_;
    for (const Op *op : sh_.order) code.ops.push_back(op->id);
    roleFunction();
    kernel();
    code.text = o_.str();
    return code;
  }

private:
  const std::string &id_;
  const Shape &sh_;
  bool reduce_, shared_ = false;
  std::ostringstream o_;

  void roleFunction() {
    o_ << "/// Role latency (every CTA of the grid; IR ops ";
    for (std::size_t i = 0; i < sh_.order.size(); ++i) o_ << (i ? ", %" : "%") << sh_.order[i]->id;
    o_ << "): packet group g of every\n"
       << "/// flow on warp g mod warps; lane l carries payload words 63g+2l and 63g+2l+1.\n";
    if (reduce_)
      o_ << "/// N2: two ranks (chosen at run time); the running reduction of the two\n"
         << "/// operands is one reducePair in rank order (bench/NOTES.md E13 run3).\n"
         << "template <class E, RedOp Op, bool W8, bool N2, class Epoch>\n";
    else
      o_ << "template <bool W8, class Epoch>\n";
    o_ << "__device__ void " << id_ << "_latency(const DeviceComm& dc, const Plan& pl, const packet::Regions& rg,\n"
       << "    const packet::CallShape& cs, const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp,\n"
       << "    std::size_t warps) {\n";
    o_ << (reduce_ ? "  const int r = pl.rank, n = N2 ? 2 : pl.n, lane = laneId();\n"
                   : "  const int n = pl.n, lane = laneId();\n")
       << "  const std::size_t len = cs.len, W = cs.W, G = cs.G;\n";
    // Operands that do not depend on a peer are bound before the group loop
    // (the compiler cannot move shared-memory loads across the puts).
    if (sh_.ownCopy) {
      o_ << "  const std::byte* const own = " << pointer(sh_.ownCopy->src) << ";\n"
         << "  std::byte* const ownDst = " << pointer(sh_.ownCopy->dst) << ";\n";
    } else if (!shared_) {
      o_ << "  const std::byte* const own = " << pointer(sh_.step->srcSelf) << ";\n";
    }
    o_ << "  for (std::size_t g = warp; g < G; g += warps) {\n"
       << "    const packet::LaneWords x(g, lane, W);\n"
       << (reduce_ ? "    uint64_t mineA, mineB, a, b;\n" : "    uint64_t a, b;\n");
    put();
    if (sh_.ownCopy) ownCopy();
    if (reduce_) reduceLoop();
    else copyLoop();
    o_ << "  }\n}\n\n";
  }

  void put() {
    const Op &op = *sh_.put;
    o_ << cite(op, "    ");
    if (shared_) {
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
       << "    for (int i = 1; i < n; ++i) {  // k = (r + i) mod n\n"
       << "      packet::loadLane<W8>(x, " << pointer(op.src) << ", len, a, b);\n"
       << "      ce.ensure(dc, rg);  // the call's epoch, read once the first loads are issued (E12)\n"
       << "      slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack(a, b, lane));\n"
       << "    }\n";
    if (reduce_) {
      // The reduction's own operand, loaded while the packets travel.
      o_ << "    packet::loadLane<W8>(x, own, len, mineA, mineB);  // %" << sh_.step->id << "'s operand p == r, "
         << ir::accessText(sh_.step->srcSelf) << "\n";
    }
  }

  void ownCopy() {
    o_ << cite(*sh_.ownCopy, "    ")
       << "    packet::loadLane<W8>(x, own, len, a, b);\n"
       << "    if (own != ownDst) packet::storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place\n";
  }

  void copyLoop() {
    // Copies poll with a staggered first pair of loads (PollStagger::First, E13).
    o_ << "#pragma unroll 1\n"
       << "    for (int i = 1; i < n; ++i) {  // p in r-1..r+1 (mod n)\n"
       << "      const int p = rg.from[i - 1];\n"
       << cite(*sh_.pollCopy, "      ")
       << "      if (!packet::pollLane<PollStagger::First>(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b))\n"
       << "        return;  // a checked wait gave up\n"
       << cite(*sh_.copy, "      ")
       << "      packet::storeLane<W8>(x, " << pointer(sh_.copy->dst) << ", len, a, b);\n"
       << "    }\n";
  }

  void reduceLoop() {
    const Op &poll = *sh_.pollRed, &step = *sh_.step;
    // Reductions poll with staggered loads every round (PollStagger::EveryRound, E13).
    o_ << "    if constexpr (!N2) {\n"
       << "      WordAcc<E, Op> accA, accB;  // the running value of " << ir::accessText(step.dst) << " (fp32)\n"
       << "#pragma unroll 1\n"
       << "      for (int p = 0; p < n; ++p) {  // p in 0..n-1\n"
       << cite(poll, "        ")
       << "        if (p == r) {\n"
       << "          a = mineA;  // %" << step.id << "'s operand p == r\n"
       << "          b = mineB;\n"
       << "        } else if (!packet::pollLane<PollStagger::EveryRound>(dc, pl, rg.recvFrom[p] + ce.h, p, g, lane, a, b)) {\n"
       << "          return;  // a checked wait gave up\n"
       << "        }\n"
       << cite(step, "        ")
       << "        if (p == 0) {\n"
       << "          accA.first(a);\n"
       << "          accB.first(b);\n"
       << "        } else {\n"
       << "          accA.next(a);\n"
       << "          accB.next(b);\n"
       << "        }\n"
       << "      }\n"
       << "      packet::storeLane<W8>(x, " << pointer(step.dst) << ", len, accA.result(), accB.result());  // %"
       << step.id << " after the last p\n"
       << "    } else {\n"
       << "      // p in 0..1: the one peer is rg.from[0]\n"
       << citeAgain(poll, "      ", "n == 2")
       << "      if (!packet::pollLane<PollStagger::EveryRound>(dc, pl, rg.recv[0] + ce.h, rg.from[0], g, lane, a, b))\n"
       << "        return;  // a checked wait gave up\n"
       << citeAgain(step, "      ", "n == 2")
       << "      const bool ownFirst = r == 0;  // both steps at once, in ascending rank order\n"
       << "      packet::storeLane<W8>(x, " << pointer(step.dst)
       << ", len, reducePair<E, Op>(ownFirst ? mineA : a, ownFirst ? a : mineA),\n"
       << "                            reducePair<E, Op>(ownFirst ? mineB : b, ownFirst ? b : mineB));\n"
       << "    }\n";
  }

  void kernel() {
    // Where the next call's grid is let in (griddepcontrol.launch_dependents):
    // right after the wait when one load feeds every put (it lost its whole
    // gain otherwise), else once the epoch load is issued (E12; measured).
    const bool trigger = !shared_;
    o_ << "/// The latency kernel: grid = plan.latencyCtas x plan.latencyThreads (latencyShape),\n"
       << "/// no dynamic shared memory. W8 = Plan::words8 (whole aligned words).\n";
    o_ << (reduce_ ? "template <class E, RedOp Op, bool W8>\n" : "template <bool W8>\n")
       << "__global__ void " << id_ << "_latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {\n"
       << "  constexpr bool kTriggerOnRead = " << (trigger ? "true" : "false")
       << ";  // " << (trigger ? "let the next grid in once the epoch load is issued"
                                : "one load feeds every put: let the next grid in right after the wait")
       << " (E12)\n"
       << "  __shared__ packet::Regions rg;\n"
       << "  packet::ctaRegions(dc, pl, rg);  // parameters only: before the wait\n"
       << "  const packet::CallShape cs(rg);\n"
       << "  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / 32);\n"
       << "  const std::size_t warp = std::size_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;\n"
       << "  gridDependencyWait();\n"
       << "  if constexpr (!kTriggerOnRead) gridLaunchDependents();\n"
       << "  packet::CallEpoch<kTriggerOnRead> ce;\n";
    if (reduce_)
      o_ << "  if (pl.n == 2)\n"
         << "    " << id_ << "_latency<E, Op, W8, true>(dc, pl, rg, cs, in, out, ce, warp, warps);\n"
         << "  else\n"
         << "    " << id_ << "_latency<E, Op, W8, false>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    else
      o_ << "  " << id_ << "_latency<W8>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    o_ << "  ce.ensure(dc, rg);  // threads that pushed nothing (a warp without a group)\n"
       << "  ctaEndCall(dc, ce.e);\n"
       << "}\n";
  }
};

} // namespace

LatencyCode printLatencyProgram(const std::string &id, const ir::Program &prog) {
  if (prog.regime != ir::Regime::Latency || prog.roles.size() != 1 || !prog.roles[0].perWarpGroup ||
      prog.roles[0].runsOn != ir::RunsOn::All)
    throw EmitError("latency program: one role of packet groups on every rank is required");
  Shape sh = recognise(prog.roles[0]);
  return Printer(id, sh).print();
}

} // namespace purlin::codegen
