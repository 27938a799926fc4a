/// @file EmitThroughput.cpp
/// @brief printThroughputPrograms(): the throughput roles' device code,
/// printed statement by statement from their kernel IR (CTA slices and lane
/// workers, KernelIR.h; ir::lowerThroughputRoles lowers the SNAC IR to it),
/// each op's text from its operands (see EmitThroughput.h).
///
/// Printed forms (docs/codegen.md "Throughput program"):
///  - sliced roles (pull): CTA i of `ctas` moves sliceBegin/sliceSize of
///    every chunk; waits are CTA-collective (thread 0 polls, a barrier
///    shares the verdict); an arrive is ctaArriveLast, and the `last` ops
///    after it run in thread 0 of the last arriver;
///  - worker roles (push, `step j on worker j mod workers`): worker w of W
///    (one lane of a CTA, runtime lane.cuh) takes steps j = w, w+W, ...,
///    moves whole chunks and notifies itself after its lane barrier.
/// A notify is fence.acq_rel.sys then one st.release.sys per target (the
/// runtime's notify primitive fences always; the IR marks the fences the
/// protocol needs, docs/snac-ir.md).
#include "codegen/EmitThroughput.h"

#include <map>
#include <sstream>

#include "codegen/Cite.h"
#include "codegen/KernelPrinter.h"
#include "ir/KernelIR.h"
#include "codegen/Spelling.h"
#include "codegen/ThroughputKernel.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::Access;
using ir::Buf;
using ir::Cond;
using ir::Domain;
using ir::Op;
using ir::OpKind;
using ir::RankRef;
using ir::RoundOf;
using ir::Sig;
using ir::SlotSpace;
using ir::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw EmitError("throughput program: " + ir::opLine(op) + ": " + why);
}

/// The C++ name of a rank of the printed code.
std::string rankExpr(const Op &op, RankRef x) {
  switch (x) {
  case RankRef::R: return "r";
  case RankRef::P: return "p";
  case RankRef::K: return "k";
  case RankRef::Next: return "(r + 1) % n";
  case RankRef::Root: return "root";
  default: unsupported(op, std::string("no CUDA form for rank ") + ir::toString(x));
  }
}

/// The values of one loop iteration printed once at its top: per (owner,
/// part) of a pull slot, `seq_O_P` = seq(part, c) of owner's stage sequence,
/// `slot_O_P` and `round_O_P` (the hand-written programs computed them once
/// per iteration too; each is an integer division on the critical path of
/// thread 0's wait -> copy -> arrive -> notify chain).
struct Scope {
  std::map<std::pair<RankRef, RankRef>, std::string> seq;  ///< (owner, part or R) -> suffix "p_r"
};

RankRef partKey(RankRef part) { return part == RankRef::None ? RankRef::R : part; }

std::string rankName(RankRef x) { return x == RankRef::Next ? "next" : ir::toString(x); }

/// seq(part, c) of `owner`'s stage sequence (pull staging).
std::string seqExpr(const Scope &sc, const Op &op, RankRef owner, RankRef part) {
  if (auto it = sc.seq.find({owner, partKey(part)}); it != sc.seq.end()) return "seq_" + it->second;
  return "cx.seqIndex(" + rankExpr(op, owner) + ", " + rankExpr(op, partKey(part)) + ", c)";
}
std::string pullSlotExpr(const Scope &sc, const Op &op, RankRef owner, RankRef part) {
  if (auto it = sc.seq.find({owner, partKey(part)}); it != sc.seq.end()) return "slot_" + it->second;
  return "cx.slotOf(" + seqExpr(sc, op, owner, part) + ")";
}
std::string pullRoundExpr(const Scope &sc, const Op &op, RankRef owner, RankRef part) {
  if (auto it = sc.seq.find({owner, partKey(part)}); it != sc.seq.end()) return "round_" + it->second;
  return "cx.roundOf(" + seqExpr(sc, op, owner, part) + ")";
}

const char *sigIndexFn(const Op &op) {
  switch (op.sig) {
  case Sig::STAGED: return "stagedIndex";
  case Sig::CONSUMED: return "consumedIndex";
  case Sig::REDUCED: return "reducedIndex";
  case Sig::GATHERED: return "gatheredIndex";
  case Sig::DONE: return "doneIndex";
  default: unsupported(op, "no CUDA form for this signal in a throughput program");
  }
}

bool pushSlot(const Op &o) { return o.slotSpace == SlotSpace::S && o.slotRegion != RankRef::None; }
bool pullSlot(const Op &o) { return o.slotSpace == SlotSpace::S && o.slotRegion == RankRef::None; }

/// The slot a sync op (or an arrive) names.
std::string slotExpr(const Scope &sc, const Op &o) {
  if (o.slotSpace == SlotSpace::Y) return "cx.ySlotOf(c)";
  if (pushSlot(o)) return "cx.pushSlotOf(c)";
  if (pullSlot(o)) return pullSlotExpr(sc, o, o.slotOwner, o.slotPart);
  unsupported(o, "no slot");
}

/// The signal index of a sync op whose signal comes from rank `src`
/// (DONE: one per source, no slot).
std::string signalIndex(const Scope &sc, const Op &o, const std::string &src) {
  if (o.sig == Sig::DONE) return std::string("doneIndex(") + src + ")";
  return std::string(sigIndexFn(o)) + "(" + src + ", " + slotExpr(sc, o) + ")";
}

/// sig(e, round) of a sync op.
std::string valueExpr(const Scope &sc, const Op &o) {
  if (o.round == RoundOf::Zero) return "cx.sig(0)";
  const bool prev = o.round == RoundOf::Prev;
  if (o.round != RoundOf::Cur && !prev) unsupported(o, "a throughput signal names this round or the previous one");
  std::string round;
  if (o.slotSpace == SlotSpace::Y) round = prev ? "cx.yRoundOf(c - pl.ySlots)" : "cx.yRoundOf(c)";
  else if (pushSlot(o)) round = prev ? "cx.pushRoundOf(c - pl.slots)" : "cx.pushRoundOf(c)";
  else if (pullSlot(o)) {
    round = prev ? "cx.roundOf(" + seqExpr(sc, o, o.slotOwner, o.slotPart) + " - pl.slots)"
                 : pullRoundExpr(sc, o, o.slotOwner, o.slotPart);
  } else
    unsupported(o, "no slot");
  return "cx.sig(" + round + ")";
}

/// The op's condition as a C++ expression ("" = always).
std::string condExpr(const Scope &sc, const Op &o, bool worker) {
  switch (o.cond) {
  case Cond::Always: return "";
  case Cond::HasPrev:
    if (o.slotSpace == SlotSpace::Y) return "c >= pl.ySlots";
    if (pushSlot(o)) return "c >= pl.slots";
    if (pullSlot(o)) return seqExpr(sc, o, o.slotOwner, o.slotPart) + " >= pl.slots";
    break;
  case Cond::HasNext:
    if (o.slotSpace == SlotSpace::Y) return "cx.yReused(c)";
    if (pushSlot(o)) return "cx.pushReused(c)";
    if (pullSlot(o)) return "cx.slotReused(" + seqExpr(sc, o, o.slotOwner, o.slotPart) + ")";
    break;
  case Cond::FirstOfChunk:
    if (worker) return "m == 0";
    break;
  default: break;
  }
  unsupported(o, "no CUDA form for this condition in a throughput program");
}

/// Whether the op's slot (and so its condition and value) depends on its
/// own forEach rank.
bool slotDependsOnVar(const Op &o) {
  return o.var != RankRef::None && pullSlot(o) && (o.slotOwner == o.var || o.slotPart == o.var);
}

/// A loop over the ranks of `d` bound to `v`, opened in `o` (closed by "}").
void openRankLoop(std::ostream &o, const std::string &pad, const std::string &v, Domain d) {
  o << pad << "for (int " << v << " = 0; " << v << " < n; ++" << v << ") {\n";
  if (d == Domain::Others) o << pad << "  if (" << v << " == r) continue;\n";
  if (d == Domain::NonRoot) o << pad << "  if (" << v << " == root) continue;\n";
}
/// The skip of a one-line loop over `d` ("" for 0..n-1).
std::string skipOf(const std::string &v, Domain d) {
  return d == Domain::Others ? "if (" + v + " != r) " : d == Domain::NonRoot ? "if (" + v + " != root) " : "";
}
bool rankLoopDomain(Domain d) { return d == Domain::Others || d == Domain::All || d == Domain::NonRoot; }

struct Operand {
  std::string ptr, len;
  bool user = false;  ///< user memory (X or O): it gives the op's length
};

Operand operand(const Scope &sc, const Op &op, const Access &a) {
  Operand x;
  if (a.buf == Buf::X || a.buf == Buf::O) {
    if (a.owner != RankRef::R) unsupported(op, "a rank reads and writes only its own user buffers");
    const bool in = a.buf == Buf::X;
    const std::string base = in ? "in" : "out";
    const std::string offs = in ? "pl.txOff[" : "pl.rxOff[", lens = in ? "pl.txLen[" : "pl.rxLen[";
    std::string len;
    if (a.part == RankRef::None) {
      x.ptr = base;  // the whole packed buffer (AllGather input, ReduceScatter output)
      len = lens + "r]";
    } else {
      x.ptr = base + " + " + offs + rankExpr(op, a.part) + "]";
      len = lens + rankExpr(op, a.part) + "]";
    }
    if (a.chunked) {
      x.ptr += " + chunkBegin(" + len + ", pl.chunk, c)";
      x.len = "chunkSize(" + len + ", pl.chunk, c)";
    } else {
      x.len = len;
    }
    x.user = true;
    return x;
  }
  if (!a.chunked) unsupported(op, "a staging operand is one chunk's slot");
  if (a.buf == Buf::S) {
    x.ptr = a.region != RankRef::None
                ? "cx.pushSlot(" + rankExpr(op, a.owner) + ", " + rankExpr(op, a.region) + ", c)"
                : "cx.staging(" + rankExpr(op, a.owner) + ") + std::size_t(" +
                      pullSlotExpr(sc, op, a.owner, a.part) + ") * pl.chunk";
    return x;
  }
  if (a.buf == Buf::Y) {
    x.ptr = a.region != RankRef::None ? "cx.pushYSlot(" + rankExpr(op, a.owner) + ", " + rankExpr(op, a.region) + ", c)"
                                      : "cx.ySlot(" + rankExpr(op, a.owner) + ", c)";
    // Y_k holds partition k of the composition's result, which is output
    // partition k: chunk c of it (used when no operand is user memory).
    x.len = "chunkSize(pl.rxLen[" + rankExpr(op, a.region != RankRef::None ? a.region : a.owner) + "], pl.chunk, c)";
    return x;
  }
  unsupported(op, "no CUDA form for this buffer in a throughput program");
}

/// The length of a data op: that of its user-memory operand (dst, src, then
/// the reduction's own operand).
std::string dataLength(const Scope &sc, const Op &op) {
  for (const Access *a : {&op.dst, &op.src, &op.srcSelf}) {
    if (a == &op.srcSelf && !op.hasSrcSelf) continue;
    Operand x = operand(sc, op, *a);
    if (x.user) return x.len;
  }
  // A copy between staging and Y (Broadcast's consume role): Y's partition.
  for (const Access *a : {&op.dst, &op.src})
    if (a->buf == Buf::Y) return operand(sc, op, *a).len;
  unsupported(op, "a data op has an operand in user memory or Y, which gives its length");
}

/// Prints one role's function.
/// One role's function, printed from its kernel IR (ir::lowerThroughputRoles):
/// the walk of KernelPrinter; each statement's text here.
class RolePrinter : public KernelPrinter {
public:
  /// `rooted`: the program has a root (ops or roles on its side only);
  /// `doneArrivals`: the CTAs that arrive on the DONE counter, as an
  /// expression of the plan (every reading role's CTAs of this rank).
  RolePrinter(const std::string &id, const ir::Program &prog, const ir::Role &role, const ir::kernel::RoleKernel &k,
              std::string classes, std::vector<int> &ops, bool rooted = false, std::string doneArrivals = "")
      : KernelPrinter(id, prog), role_(role), k_(k), worker_(k.worker), classes_(std::move(classes)), rooted_(rooted),
        doneArrivals_(std::move(doneArrivals)), ops_(ops) {}

  std::string print(const std::string &fn) {
    o_ << "/// Role " << role_.name << " (" << (worker_ ? "push" : "pull") << "; IR ops " << opRange() << "), "
       << (worker_ ? "worker w of W (lane of a CTA: lane.cuh), whole chunks.\n"
                   : "CTA i of ctas, a slice of every chunk.\n");
    if (worker_) {
      o_ << "template <class AtomL, int L>\n"
         << "__device__ void " << fn << "(const TpContext& cx, const Lane<L>& ln, const std::byte* in, std::byte* out,\n"
         << "    int w, int W) {\n";
    } else {
      o_ << "template <class AtomT>\n"
         << "__device__ void " << fn << "(const TpContext& cx, const std::byte* in, std::byte* out, int i, int ctas) {\n";
    }
    o_ << "  const Plan& pl = cx.pl;\n"
       << "  [[maybe_unused]] const int r = pl.rank, n = pl.n;\n";
    if (rooted_) o_ << "  [[maybe_unused]] const int root = pl.root;\n";
    o_ << "  (void)in;\n"
       << "  (void)out;\n";
    body(k_.body, "  ");
    o_ << "}\n\n";
    return o_.str();
  }

private:
  const ir::Role &role_;
  const ir::kernel::RoleKernel &k_;
  bool worker_;
  std::string classes_;  ///< the reduction class set a reduce site dispatches over (instantiation table)
  bool rooted_;
  std::string doneArrivals_;
  std::vector<int> &ops_;
  Scope sc_;  ///< the enclosing pull loop's per-iteration values

  /// Prints seq/slot/round of (owner, part) and records them in sc_.
  void hoistOne(RankRef owner, RankRef part, const std::string &pad) {
    const Op none{};
    part = partKey(part);
    const std::string suffix = rankName(owner) + "_" + rankName(part);
    o_ << pad << "const int seq_" << suffix << " = cx.seqIndex(" << rankExpr(none, owner) << ", "
       << rankExpr(none, part) << ", c);  // seq(" << rankName(part) << ",c) of " << rankName(owner) << "\n"
       << pad << "[[maybe_unused]] const int slot_" << suffix << " = cx.slotOf(seq_" << suffix << ");\n"
       << pad << "[[maybe_unused]] const uint32_t round_" << suffix << " = cx.roundOf(seq_" << suffix << ");\n";
    sc_.seq[{owner, part}] = suffix;
  }
  /// Inside an op's own loop over ranks: hoists the (owner, part) pull slot
  /// the op names with its rank (the per-target values, once per target).
  void hoistForVar(const Op &op, RankRef owner, RankRef part, const std::string &pad) {
    if (op.var != RankRef::None && (owner == op.var || part == op.var)) hoistOne(owner, part, pad);
  }
  void dropVar(const Op &op, RankRef owner, RankRef part) {
    if (op.var != RankRef::None && (owner == op.var || part == op.var)) sc_.seq.erase({owner, partKey(part)});
  }

  std::string opRange() const {
    std::string s;
    ir::forEachOp(role_.body, [&](const Op &op) { s += (s.empty() ? "%" : ", %") + std::to_string(op.id); });
    return s;
  }

  /// The op a loop statement names its ranks with (an unnumbered one for an empty loop).
  const Op &loopOp(const ir::kernel::Stmt &s) const {
    static const Op none{};
    return s.op >= 0 ? op(s.op) : none;
  }

  void statement(const ir::kernel::Stmt &s, const std::string &pad) override {
    using ir::kernel::StmtKind;
    switch (s.kind) {
      case StmtKind::RoleGuard:
        o_ << pad << "if (r " << (s.on == ir::RunsOn::Root ? "!=" : "==") << " root) return;  // the role runs on "
           << ir::toString(s.on) << "\n";
        return;
      case StmtKind::OnRanks: return onRanks(s, pad);
      case StmtKind::ChunkLoop: return chunkLoop(s, pad);
      case StmtKind::PeerSteps: {
        const std::string v = rankExpr(loopOp(s), s.var), in = pad + "  ";
        if (s.domain == Domain::Ring)
          o_ << pad << "for (int s = 1; s < n; ++s) {  // " << v << " in r+1..r-1 (mod n)\n"
             << in << "const int " << v << " = (r + s) % n;\n";
        else if (s.domain == Domain::RevRing)
          o_ << pad << "for (int s = 1; s < n; ++s) {  // " << v << " in r-1..r+1 (mod n)\n"
             << in << "const int " << v << " = (r + n - s) % n;\n";
        else
          o_ << pad << "for (int s = 0; s < n; ++s) {  // " << v << " in r..r-1 (mod n)\n"
             << in << "const int " << v << " = (r + s) % n;\n";
        body(s.body, in);
        o_ << pad << "}\n";
        return;
      }
      case StmtKind::Hoist: return hoistOne(s.owner, s.partOf, pad);
      case StmtKind::WaitSignal: return wait(op(s.op), pad);
      case StmtKind::MoveData:
        data(op(s.op), pad);
        if (s.syncAfter) o_ << pad << "__syncthreads();  // the Atom workspace is reused by the next op\n";
        return;
      case StmtKind::ArriveCounter:
        arrive(op(s.op), pad);
        if (!s.body.empty()) {
          o_ << pad << "if (last && threadIdx.x == 0) {\n";
          body(s.body, pad + "  ");
          o_ << pad << "}\n";
        }
        return;
      case StmtKind::NotifySignal: return notify(op(s.op), pad);
      case StmtKind::LaneNotify:
        if (s.syncFirst) o_ << pad << "ln.sync();  // the lane's accesses before the notify\n";
        o_ << pad << "if (ln.leader()) {\n";
        notify(op(s.op), pad + "  ");
        o_ << pad << "}\n";
        return;
      default: notThisForm(s, "throughput roles");
    }
  }

  void chunkLoop(const ir::kernel::Stmt &s, const std::string &pad) {
    const std::string in = pad + "  ";
    if (s.worker) {
      if (s.var == RankRef::None) {
        o_ << pad << "for (int c = w; c < pl.cpp; c += W) {\n";
      } else {
        const std::string v = rankExpr(loopOp(s), s.var);
        o_ << pad << "for (int j = w; j < pl.cpp * (n - 1); j += W) {  // step j = c*(n-1) + m\n"
           << in << "const int c = j / (n - 1), m = j % (n - 1);\n"
           << in << "const int " << v << " = "
           << (s.domain == Domain::Ring ? "(r + 1 + m) % n;  // " : "(r + n - 1 - m) % n;  // ")
           << ir::toString(s.domain) << ": the m-th\n";
      }
      body(s.body, in);
      o_ << pad << "}\n";
      return;
    }
    o_ << pad << "for (int c = 0; c < pl.cpp; ++c) {\n";
    body(s.body, in);
    sc_ = Scope{};
    o_ << pad << "}\n";
  }

  void record(const Op &op, const std::string &pad) {
    o_ << cite(op, pad);
    ops_.push_back(op.id);
  }

  /// `if (cond) {` when the op has a condition; returns the body's pad.
  std::string openCond(const Op &op, const std::string &pad, bool &opened) {
    const std::string c = condExpr(sc_, op, worker_);
    opened = !c.empty();
    if (!opened) return pad;
    o_ << pad << "if (" << c << ") {\n";
    return pad + "  ";
  }
  void closeCond(bool opened, const std::string &pad) {
    if (opened) o_ << pad << "}\n";
  }

  std::string waitSource(const Op &op) {
    if (op.sigSrc == RankRef::Prev) {
      if (!pullSlot(op) || op.round != RoundOf::Prev) unsupported(op, "part(prev) names the previous use of a pull slot");
      // The partition the slot's previous use was staged for.
      return "cx.stageDest(r, (" + seqExpr(sc_, op, op.slotOwner, op.slotPart) + " - pl.slots) % pl.stageParts())";
    }
    return rankExpr(op, op.sigSrc);
  }

  void wait(const Op &op, const std::string &pad) {
    record(op, pad);
    if (slotDependsOnVar(op) && op.cond != Cond::Always)
      unsupported(op, "a conditional wait over ranks names one slot");
    bool opened;
    const std::string p = openCond(op, pad, opened);
    const std::string idx = signalIndex(sc_, op, waitSource(op));
    const std::string val = valueExpr(sc_, op);
    if (op.var == RankRef::None) {
      if (worker_) o_ << p << "if (!ln.wait(cx.dc, " << idx << ", " << val << ")) return;  // a checked wait gave up\n";
      else o_ << p << "if (!ctaWaitSignal(cx.dc, " << idx << ", " << val << ")) return;  // a checked wait gave up\n";
    } else {
      if (!rankLoopDomain(op.domain)) unsupported(op, "a wait over ranks waits on 0..n-1, others(r) or others(root)");
      const std::string v = rankExpr(op, op.var);
      o_ << p << "{\n"
         << p << "  int ok = 1;\n"
         << p << "  if (" << (worker_ ? "ln.leader()" : "threadIdx.x == 0") << ")\n";
      if (slotDependsOnVar(op)) {
        // Each source's own slot: its values once per source.
        o_ << p << "    for (int " << v << " = 0; " << v << " < n && ok; ++" << v << ") {\n";
        if (op.domain == Domain::Others) o_ << p << "      if (" << v << " == r) continue;\n";
        if (op.domain == Domain::NonRoot) o_ << p << "      if (" << v << " == root) continue;\n";
        hoistForVar(op, op.slotOwner, op.slotPart, p + "      ");
        o_ << p << "      ok = waitSignal(cx.dc, " << std::string(sigIndexFn(op)) + "(" + waitSource(op) + ", " +
                      slotExpr(sc_, op) + ")"
           << ", " << valueExpr(sc_, op) << ");\n"
           << p << "    }\n";
        dropVar(op, op.slotOwner, op.slotPart);
      } else {
        o_ << p << "    for (int " << v << " = 0; " << v << " < n && ok; ++" << v << ")\n"
           << p << "      " << skipOf(v, op.domain) << "ok = waitSignal(cx.dc, " << idx << ", " << val << ");\n";
      }
      o_ << p << "  if (!" << (worker_ ? "ln.agree(ok)" : "__syncthreads_and(ok)") << ") return;  // a checked wait gave up\n"
         << p << "}\n";
    }
    closeCond(opened, pad);
  }

  void data(const Op &op, const std::string &pad) {
    record(op, pad);
    bool opened;
    std::string p = openCond(op, pad, opened);
    const bool each = op.kind == OpKind::Copy && op.var != RankRef::None;
    if (each) {
      if (op.domain != Domain::Others) unsupported(op, "a copy over ranks writes to every peer");
      openRankLoop(o_, p, rankExpr(op, op.var), op.domain);
      p += "  ";
    }
    const Operand dst = operand(sc_, op, op.dst);
    const std::string len = dataLength(sc_, op);
    o_ << p << "{\n";
    const std::string q = p + "  ";
    o_ << q << "const std::size_t len = " << len << ";\n";
    std::string size = "len", plus = "";
    if (!worker_) {
      o_ << q << "const std::size_t b = sliceBegin(len, ctas, i), sz = sliceSize(len, ctas, i);\n";
      size = "sz", plus = " + b";
    }
    const std::string ws = worker_ ? "ln.ws, ln.slice" : "cx.ws";
    const std::string atom = worker_ ? "AtomL" : "AtomT";
    if (op.kind == OpKind::Copy) {
      const Operand src = operand(sc_, op, op.src);
      if (src.user && dst.user) {
        // Input to output: nothing to move when the call is in place.
        o_ << q << "const std::byte* const src = " << src.ptr << ";\n"
           << q << "std::byte* const dst = " << dst.ptr << ";\n"
           << q << "if (src != dst && " << size << ") " << atom << "::copy(dst" << plus << ", src" << plus << ", " << size
           << ", " << ws << ");  // skipped in place\n";
      } else {
        o_ << q << "if (" << size << ") " << atom << "::copy(" << dst.ptr << plus << ", " << src.ptr << plus << ", "
           << size << ", " << ws << ");\n";
      }
    } else {
      if (!op.hasSrcSelf || op.var != RankRef::P || op.domain != Domain::All || op.step)
        unsupported(op, "a throughput reduction reads (p == r ? own : peer p) for p in 0..n-1");
      const Operand self = operand(sc_, op, op.srcSelf);
      const bool perSource = op.src.buf == Buf::S && op.src.region == RankRef::None && op.src.owner == op.var;
      o_ << q << "if (" << size << ") {\n"
         << q << "  const std::byte* sources[kMaxRanks];\n";
      if (perSource) {
        // Each source's own slot, once per source.
        o_ << q << "  for (int p = 0; p < n; ++p) {\n"
           << q << "    if (p == r) {\n"
           << q << "      sources[p] = " << self.ptr << plus << ";\n"
           << q << "      continue;\n"
           << q << "    }\n";
        hoistForVar(op, op.src.owner, op.src.part, q + "    ");
        const Operand src = operand(sc_, op, op.src);
        dropVar(op, op.src.owner, op.src.part);
        o_ << q << "    sources[p] = " << src.ptr << plus << ";\n"
           << q << "  }\n";
      } else {
        const Operand src = operand(sc_, op, op.src);
        o_ << q << "  for (int p = 0; p < n; ++p)\n"
           << q << "    sources[p] = (p == r ? " << self.ptr << "\n"
           << q << "                         : " << src.ptr << ")" << plus << ";\n";
      }
      o_
         << q << "  " << atom << "::template reduce<" << classes_ << ">(cx.red, " << dst.ptr << plus
         << ", sources, " << size << ", n, " << ws << ");  // one dispatch for the range\n"
         << q << "}\n";
    }
    o_ << p << "}\n";
    if (worker_) o_ << p << "ln.sync();  // the lane's workspace is reused; its writes precede the notify\n";
    if (each) o_ << pad << (opened ? "  }\n" : "}\n");
    closeCond(opened, pad);
  }

  void arrive(const Op &op, const std::string &pad) {
    record(op, pad);
    std::string idx = std::to_string(op.counterBase) + "u";
    if (op.counterStride) {
      if (op.counterRank == RankRef::None) unsupported(op, "a counter stride names a rank");
      idx += " + " + std::to_string(op.counterStride) + "u * uint32_t(" + rankExpr(op, op.counterRank) + ")";
    }
    if (op.slotSpace != SlotSpace::None) idx += " + uint32_t(" + slotExpr(sc_, op) + ")";
    if (op.counterBase == ir::kDoneCounter) {
      if (doneArrivals_.empty()) unsupported(op, "a DONE counter needs the reading roles' CTAs");
      o_ << pad << "const bool last = ctaArriveLast(cx.dc, " << idx << ", " << doneArrivals_
         << ");  // every reading CTA of this rank\n";
      return;
    }
    o_ << pad << "const bool last = ctaArriveLast(cx.dc, " << idx << ", ctas);\n";
  }

  void notify(const Op &op, const std::string &pad) {
    record(op, pad);
    const std::string idx = signalIndex(sc_, op, "r");
    const std::string val = valueExpr(sc_, op);
    if (op.var == RankRef::None) {
      bool opened;
      const std::string p = openCond(op, pad, opened);
      o_ << p << "notify(cx.dc, " << rankExpr(op, op.target) << ", " << idx << ", " << val << ");\n";
      closeCond(opened, pad);
      return;
    }
    if (op.target != op.var || !rankLoopDomain(op.domain))
      unsupported(op, "a notify over ranks notifies each rank of 0..n-1, others(r) or others(root)");
    const std::string v = rankExpr(op, op.var);
    const bool perTarget = slotDependsOnVar(op);  // each target's own slot and condition
    bool opened = false;
    std::string p = pad;
    if (!perTarget) p = openCond(op, pad, opened);
    o_ << p << "arch::fenceAcqRelSys();  // one fence, then a release per target\n";
    openRankLoop(o_, p, v, op.domain);
    std::string tIdx = idx, tVal = val, c;
    if (perTarget) {
      // Each target's own slot: its values once per target.
      hoistForVar(op, op.slotOwner, op.slotPart, p + "  ");
      tIdx = signalIndex(sc_, op, "r");
      tVal = valueExpr(sc_, op);
      c = condExpr(sc_, op, worker_);
      dropVar(op, op.slotOwner, op.slotPart);
    }
    o_ << p << "  " << (c.empty() ? "" : "if (" + c + ") ") << "arch::stReleaseSys(cx.dc.signals[" << v << "] + " << tIdx
       << ", " << tVal << ");\n"
       << p << "}\n";
    closeCond(opened, pad);
  }
};

bool reduces(const ir::Program &p) {
  bool any = false;
  for (const auto &role : p.roles) ir::forEachOp(role.body, [&](const Op &op) { any |= op.kind == OpKind::Reduce; });
  return any;
}

/// The CTAs that arrive on a rooted program's DONE counter: those of every
/// role holding a DONE arrive (insertDoneAcks puts one in each role that
/// reads another rank's memory), e.g. "pl.consumeCtas + pl.gatherCtas".
std::string doneArrivals(const ir::Program &p) {
  std::string s;
  for (const auto &role : p.roles) {
    bool has = false;
    ir::forEachOp(role.body, [&](const Op &op) { has |= op.kind == OpKind::Arrive && op.counterBase == ir::kDoneCounter; });
    if (has) s += (s.empty() ? "" : " + ") + ctasField(role);
  }
  return s;
}

void checkProgram(const ir::Program &p, Transfer want) {
  if (p.regime != ir::Regime::Throughput || p.transfer != want || p.roles.empty() || p.roles.size() > 3)
    throw EmitError(std::string("throughput program: a ") + (want == Transfer::Push ? "push" : "pull") +
                    " program of one to three roles is required");
}

} // namespace

ThroughputCode printThroughputPrograms(const std::string &id, const ir::Program *pull, const ir::Program *push,
                                       const std::vector<PushLaneShape> &pushLanes, bool variable) {
  if (!pull && !push) throw EmitError("throughput program: neither a pull nor a push program");
  if (pull) checkProgram(*pull, Transfer::Pull);
  if (push) checkProgram(*push, Transfer::Push);
  ThroughputCode code;
  code.kernel = id + "_throughputKernel";
  code.reduces = (pull && reduces(*pull)) || (push && reduces(*push));
  code.hasPull = pull != nullptr;
  code.hasPush = push != nullptr;
  // Each program lowered to its roles' kernel IR, then printed role by role.
  auto roles = [](const ir::Program &p) {
    try {
      return ir::lowerThroughputRoles(p);
    } catch (const ir::IRError &e) {
      throw EmitError(e.message);
    }
  };
  if (pull) {
    const ir::kernel::ThroughputRoles k = roles(*pull);
    const std::string arrivals = doneArrivals(*pull);
    for (std::size_t i = 0; i < pull->roles.size(); ++i)
      code.pullText += RolePrinter(id, *pull, pull->roles[i], k.roles[i], reductionsName(id), code.pullOps, k.rooted,
                                   arrivals)
                           .print(roleFn(id, false, pull->roles[i]));
  }
  if (push) {
    const ir::kernel::ThroughputRoles k = roles(*push);
    for (std::size_t i = 0; i < push->roles.size(); ++i)
      code.pushText += RolePrinter(id, *push, push->roles[i], k.roles[i], reductionsName(id), code.pushOps, k.rooted)
                           .print(roleFn(id, true, push->roles[i]));
    code.pushText += printPushCta(id, *push);
  }
  if (push) code.pushLanes = pushLanes;
  code.kernelText = printThroughputKernel(id, pull, push, pushLanes, variable);
  return code;
}

} // namespace purlin::codegen
