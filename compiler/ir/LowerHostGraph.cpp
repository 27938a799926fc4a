/// @file LowerHostGraph.cpp
/// @brief lowerHostGraph(): the direct program's copy-engine form lowered
/// to the host-graph statements of the kernel IR (KernelIR.h), op after op
/// in the host's enqueue order: copy-engine transfers, stream memory
/// operations and event edges on the call's stream or the communicator's
/// branch, kernel nodes holding their device statements, engine-chunk
/// loops. Each op is checked for what the printed graph can express (the
/// rank loops others(r) and r+1..r-1, the NonEmpty guards, whole X / O
/// partitions or their engine chunks).
#include <string>

#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::ir {

namespace {

using kernel::HostGraph;
using kernel::StmtKind;
using KStmt = kernel::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw IRError{"direct program (copy engine): " + opLine(op) + ": " + why};
}
[[noreturn]] void fail(const std::string &why) { throw IRError{"direct program (copy engine): " + why}; }

bool printableRank(RankRef r) { return r == RankRef::R || r == RankRef::K || r == RankRef::P; }

/// An operand the graph addresses: this rank's input, or an output (its own
/// or a peer's mapped one), whole or a partition, or its engine chunk c.
void checkAccess(const Access &a) {
  if (a.chunked || a.rounded || (a.buf != Buf::X && a.buf != Buf::O))
    fail("access " + accessText(a) + " is not printed");
  if (!printableRank(a.owner)) fail(std::string("rank ") + toString(a.owner) + " is not printed");
  if (a.buf == Buf::X && a.owner != RankRef::R) fail("another rank's input " + accessText(a));
  if (a.part != RankRef::None && !printableRank(a.part)) fail(std::string("rank ") + toString(a.part) + " is not printed");
}
/// The op's rank loop: none, others(r) or r+1..r-1 (mod n).
void checkRankLoop(const Op &op) {
  if (op.var == RankRef::None) return;
  if (!printableRank(op.var)) fail(std::string("rank ") + toString(op.var) + " is not printed");
  if (op.domain != Domain::Others && op.domain != Domain::Ring)
    unsupported(op, "a rank loop over " + std::string(toString(op.domain)));
}
/// `if (<roundOf> not empty)` or nothing.
void checkGuard(const Op &op) {
  if (op.cond == Cond::Always) return;
  if (op.cond != Cond::NonEmpty) unsupported(op, "only `if ... not empty` conditions are printed");
  checkAccess(op.roundOf);
}
bool signalOfKernel(Sig s) { return s == Sig::ARRIVED || s == Sig::PUT || s == Sig::E_PUT || s == Sig::E_BACK; }

KStmt stmt(StmtKind kind, const Op &op) { return kernel::stmtFor(kind, op); }

class Lowerer {
public:
  explicit Lowerer(const Role &role) : role_(role) {
    forEachOp(role.body, [&](const Op &o) {
      g_.ops.push_back(o.id);
      g_.reduces |= o.kind == OpKind::Reduce;
    });
  }

  HostGraph run() {
    if (g_.reduces) {
      KStmt guard = kernel::stmtOf(StmtKind::GraphGuard);
      g_.body.push_back(guard);
    }
    host(role_.body, g_.body, false);
    return std::move(g_);
  }

private:
  const Role &role_;
  HostGraph g_;

  static KStmt chunks(const Stmt &s) {
    checkAccess(s.chunksOf);
    KStmt c = kernel::stmtOf(StmtKind::EngineChunks);
    c.operand = s.chunksOf;
    return c;
  }

  void host(const std::vector<Stmt> &body, std::vector<KStmt> &out, bool inChunks) {
    for (const Stmt &s : body) {
      if (s.isLoop && !s.kernel.empty()) {
        out.push_back(kernelNode(s, inChunks));
      } else if (s.isLoop) {
        if (!s.engineChunks || inChunks) fail("a host loop other than one level of engine chunks");
        KStmt c = chunks(s);
        host(s.body, c.body, true);
        out.push_back(c);
      } else {
        out.push_back(hostOp(s.op, inChunks));
      }
    }
  }

  KStmt hostOp(const Op &op, bool inChunks) {
    if (!op.host) unsupported(op, "a device op outside a kernel node");
    if (op.kind == OpKind::Copy) {
      checkRankLoop(op);
      checkGuard(op);
      checkAccess(op.dst);
      checkAccess(op.src);
      return stmt(StmtKind::GraphCopy, op);
    }
    if (op.sig == Sig::EDGE) {
      if (op.cond != Cond::Always && op.cond != Cond::NonEmpty) unsupported(op, "an edge condition");
      checkGuard(op);
      if (op.event == Event::Chunk && !inChunks) unsupported(op, "a chunk event outside an engine-chunk loop");
      KStmt e = stmt(StmtKind::GraphEdge, op);
      e.records = op.kind == OpKind::Notify;
      return e;
    }
    if (op.kind == OpKind::Notify && (op.sig == Sig::E_PUT || op.sig == Sig::E_BACK)) {
      if (op.round != RoundOf::One || op.slotSpace != SlotSpace::Chunk || op.target != op.var || !inChunks)
        unsupported(op, "a flag write is `= 1` into flag c of each target, inside an engine-chunk loop");
      checkRankLoop(op);
      checkGuard(op);
      return stmt(StmtKind::GraphFlag, op);
    }
    unsupported(op, "not a host op of the copy-engine form");
  }

  KStmt kernelNode(const Stmt &k, bool inChunks) {
    KStmt n = kernel::stmtOf(StmtKind::GraphKernel);
    n.kernelName = k.kernel;
    n.stream = k.stream;
    n.wide = k.wide;
    n.endsCall = k.endsCall;
    n.inChunks = inChunks;
    n.readsEpoch = k.endsCall;
    forEachOp(k.body, [&](const Op &o) {
      n.readsEpoch |= (o.kind == OpKind::Notify || o.kind == OpKind::Wait) && o.round != RoundOf::One;
    });
    device(k.body, n.body);
    return n;
  }

  void device(const std::vector<Stmt> &body, std::vector<KStmt> &out) {
    for (const Stmt &s : body) {
      if (s.isLoop) {
        if (!s.engineChunks) fail("a kernel loop other than engine chunks");
        KStmt c = chunks(s);
        device(s.body, c.body);
        out.push_back(c);
      } else {
        out.push_back(deviceOp(s.op));
      }
    }
  }

  KStmt deviceOp(const Op &op) {
    if (op.host) unsupported(op, "a host op inside a kernel node");
    if (op.cond != Cond::Always) unsupported(op, "a condition inside a kernel");
    const bool value = op.round == RoundOf::One || op.round == RoundOf::Zero;
    switch (op.kind) {
      case OpKind::Notify:
        if (op.slotSpace != SlotSpace::Cta || !signalOfKernel(op.sig) || op.target != op.var)
          unsupported(op, "a kernel notifies a per-CTA signal (index 0 of a one-CTA kernel) of each target");
        if (!value) unsupported(op, "a signal value other than sig(e,0) or 1");
        checkRankLoop(op);
        return stmt(StmtKind::NodeNotify, op);
      case OpKind::Wait:
        if (!signalOfKernel(op.sig) || op.sigSrc != op.var) unsupported(op, "a kernel waits on each source of a forEach");
        if (op.slotSpace != SlotSpace::Chunk && op.slotSpace != SlotSpace::Cta)
          unsupported(op, "a wait on a per-CTA signal or a flag");
        if (!value) unsupported(op, "a signal value other than sig(e,0) or 1");
        checkRankLoop(op);
        return stmt(StmtKind::NodeWait, op);
      case OpKind::Reduce:
        if (op.step || op.var != RankRef::P || op.domain != Domain::All || !op.hasSrcSelf ||
            op.dst.buf != op.src.buf || op.dst.owner != op.src.owner || op.dst.part != op.src.part ||
            !op.dst.engineChunk || !op.srcSelf.engineChunk)
          unsupported(op, "the kernel reduction is in place over chunk c, the own contribution from the input");
        checkAccess(op.dst);
        checkAccess(op.srcSelf);
        return stmt(StmtKind::NodeReduce, op);
      case OpKind::Reset:
        if (op.sig != Sig::E_PUT && op.sig != Sig::E_BACK) unsupported(op, "only the engine flags are reset");
        return stmt(StmtKind::NodeReset, op);
      default: unsupported(op, "not an op of a copy-engine kernel");
    }
  }
};

} // namespace

kernel::HostGraph lowerHostGraph(const Program &prog) {
  if (!prog.engine || prog.roles.size() != 1) throw IRError{"direct program (copy engine): one host role is required"};
  return Lowerer(prog.roles[0]).run();
}

} // namespace purlin::ir
