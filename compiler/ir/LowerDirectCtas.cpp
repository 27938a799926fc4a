/// @file LowerDirectCtas.cpp
/// @brief lowerDirectCtas(): the direct program's kernel form lowered to
/// the direct-CTA statements of the kernel IR (KernelIR.h), op after op in
/// the role's order. The shapes are the measured ones (bench/NOTES.md E9;
/// the runtime's hand-written program is at commit cfcd7a0): the arrive
/// pair in one block of thread 0, one read of the source for every
/// destination, interleaved pairs, a pairwise reduction per round.
#include <set>
#include <string>

#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::ir {

namespace {

using kernel::DirectCtas;
using kernel::SignalValue;
using kernel::StmtKind;
using KStmt = kernel::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw IRError{"direct program: " + opLine(op) + ": " + why};
}
void expect(bool ok, const Op &op, const std::string &why) {
  if (!ok) unsupported(op, why);
}

bool is(const Access &a, Buf b, RankRef owner, RankRef part, bool rounded) {
  return a.buf == b && a.owner == owner && a.part == part && a.rounded == rounded && !a.chunked;
}

/// A notify of its signal with index sig[r][cta] to every peer.
void checkNotify(const Op &op) {
  expect(op.slotSpace == SlotSpace::Cta, op, std::string("expected a notify of ") + toString(op.sig) + "[r][cta]");
  expect(op.var == RankRef::K && op.target == RankRef::K && op.domain == Domain::Others, op,
         "a direct notify goes to every peer k in others(r)");
  expect(!op.last && op.onlyOn == RunsOn::All, op, "unexpected round or rank condition");
}
/// A wait on its signal sig[p][cta] from every peer.
void checkWait(const Op &op) {
  expect(op.slotSpace == SlotSpace::Cta, op, std::string("expected a wait on ") + toString(op.sig) + "[p][cta]");
  expect(op.var == RankRef::P && op.sigSrc == RankRef::P && op.domain == Domain::Others, op,
         "a direct wait hears every peer p in others(r)");
  expect(op.onlyOn == RunsOn::All, op, "unexpected round or rank condition");
}
/// The op runs for round j only when j < rounds(X_r[part]).
void checkInRound(const Op &op, RankRef part) {
  expect(op.cond == Cond::InRound && is(op.roundOf, Buf::X, RankRef::R, part, false), op,
         std::string("expected `if j < rounds(X_r[") + toString(part) + "])`");
}

KStmt stmt(StmtKind kind, const Op &op) { return kernel::stmtFor(kind, op); }

class Lowerer {
public:
  explicit Lowerer(const Role &role) : role_(role) {
    forEachOp(role.body, [&](const Op &o) {
      k_.ops.push_back(o.id);
      if (o.kind == OpKind::Notify) notified_.insert(o.sig);
      if (o.kind == OpKind::Wait) awaited_.insert(o.sig);
    });
  }

  DirectCtas run() {
    const auto &b = role_.body;
    // The arrive pair: one block of thread 0 (a release to every peer, then
    // a wait for every peer), one barrier after.
    if (b.size() < 2 || b[0].isLoop || b[1].isLoop || b[0].op.kind != OpKind::Notify || b[0].op.sig != Sig::ARRIVED ||
        b[1].op.kind != OpKind::Wait || b[1].op.sig != Sig::ARRIVED)
      throw IRError{"direct program: role " + role_.name + ": the role begins with the ARRIVED exchange"};
    const Op &n = b[0].op, &w = b[1].op;
    checkNotify(n);
    expect(!n.fence, n, "the arrive notify has no data to publish");
    expect(n.round == RoundOf::Zero && n.cond == Cond::Always, n, "unexpected round or rank condition");
    checkWait(w);
    expect(w.round == RoundOf::Zero && w.cond == Cond::Always, w, "unexpected round or rank condition");
    KStmt a = stmt(StmtKind::Arrive, n);
    a.use = w.id;
    k_.body.push_back(a);
    bool moves = false;
    for (std::size_t i = 2; i < b.size(); ++i) {
      if (b[i].isLoop) {
        if (twoRanks_) throw IRError{"direct program: one rounds loop per direct program"};
        rounds(b[i]);
        moves = true;
        continue;
      }
      moves |= b[i].op.kind == OpKind::Copy;
      const Op &op = b[i].op;
      switch (op.kind) {
        case OpKind::Copy: k_.body.push_back(copy(op)); break;
        case OpKind::Notify:
          checkPublishes(op, k_.body);
          k_.body.push_back(notify(op, SignalValue::First));
          break;
        case OpKind::Wait:
          if (op.cond == Cond::HasRounds) k_.body.push_back(afterRounds(op));
          else k_.body.push_back(wait(op, SignalValue::First));
          break;
        default: unsupported(op, "no direct-CTA statement for this op outside the rounds loop");
      }
    }
    if (!moves) throw IRError{"direct program: role " + role_.name + ": the role arrives, then moves data"};
    // Every signal the role notifies is awaited in it, and every one it
    // awaits is notified: a missing wait would let a peer read a round
    // before it lands, a missing notify would never return.
    for (Sig sg : notified_)
      if (!awaited_.count(sg))
        throw IRError{std::string("direct program: role ") + role_.name + ": " + toString(sg) +
                      " is notified but no op of the role waits for it"};
    return std::move(k_);
  }

private:
  const Role &role_;
  DirectCtas k_;
  std::set<Sig> notified_, awaited_;
  bool twoRanks_ = false;  ///< a rounds loop was lowered (others(r) = {q})

  /// The signals of the data exchange after the arrive pair (the printer
  /// indexes them with putIndex / backIndex).
  static void checkDataSignal(const Op &op) {
    expect(op.sig == Sig::PUT || op.sig == Sig::BACK, op,
           std::string("no direct-CTA form for a notify or wait of ") + toString(op.sig) + " (PUT or BACK)");
  }

  /// A notify that publishes data follows the statement that wrote it, in
  /// the same block.
  static void checkPublishes(const Op &op, const std::vector<KStmt> &before) {
    const bool data = !before.empty() &&
                      (before.back().kind == StmtKind::CopyToMany || before.back().kind == StmtKind::CopyPairs ||
                       before.back().kind == StmtKind::PushRound || before.back().kind == StmtKind::ReduceRound);
    expect(data, op, "a notify after data writes follows the copy or reduction it publishes");
  }

  KStmt notify(const Op &op, SignalValue v) {
    checkDataSignal(op);
    checkNotify(op);
    expect(op.round == (v == SignalValue::First ? RoundOf::Zero : RoundOf::Cur), op, "unexpected round or rank condition");
    expect(op.fence || op.sig == Sig::ARRIVED, op, "a notify after data writes fences first");
    KStmt s = stmt(StmtKind::Notify, op);
    s.sig = op.sig, s.fence = op.fence, s.value = v;
    return s;
  }
  KStmt wait(const Op &op, SignalValue v) {
    checkDataSignal(op);
    checkWait(op);
    expect(op.round == (v == SignalValue::First ? RoundOf::Zero : v == SignalValue::Round ? RoundOf::Cur : RoundOf::Last),
           op, "unexpected round or rank condition");
    // A wait no op of the role notifies would never return.
    expect(notified_.count(op.sig) != 0, op, std::string("no op of the role notifies ") + toString(op.sig));
    KStmt s = stmt(StmtKind::Wait, op);
    s.sig = op.sig, s.value = v;
    return s;
  }

  /// The copy of the CTA's slice to every destination (peers first, the own
  /// output last): one source read once (AllGather), or one source per
  /// destination, interleaved (AllToAll).
  KStmt copy(const Op &c) {
    expect(c.var == RankRef::K && c.domain == Domain::RingSelf && c.cond == Cond::Always, c,
           "the copy writes every rank's output, k in r+1..r (mod n)");
    expect(is(c.dst, Buf::O, RankRef::K, RankRef::R, false), c, "the copy writes block r of O_k");
    expect(is(c.src, Buf::X, RankRef::R, RankRef::None, false) || is(c.src, Buf::X, RankRef::R, RankRef::K, false), c,
           "the copy reads X_r (AllGather) or X_r[k] (AllToAll)");
    return stmt(c.src.part == RankRef::None ? StmtKind::CopyToMany : StmtKind::CopyPairs, c);
  }

  /// The rounds loop of a reduction, derived for two ranks only (others(r)
  /// = {q}): the slices of both partitions, then per round the statements
  /// of its ops, those under one round condition in one block.
  void rounds(const Stmt &loop) {
    if (!loop.rounds || loop.var != RankRef::None || loop.chunks)
      throw IRError{"direct program: the rounds loop runs over the rounds of the CTA's slices"};
    KStmt slices = kernel::stmtOf(StmtKind::TwoRankSlices);
    KStmt body = kernel::stmtOf(StmtKind::Rounds);
    const Op *reduce = nullptr;
    for (const Stmt &st : loop.body) {
      if (st.isLoop) throw IRError{"direct program: the rounds loop holds ops only"};
      const Op &op = st.op;
      const RankRef part = op.cond == Cond::InRound && op.roundOf.part == RankRef::K ? RankRef::K : RankRef::R;
      checkInRound(op, part);
      if (body.body.empty() || body.body.back().part != part) {
        KStmt in = kernel::stmtOf(StmtKind::InRound);
        in.part = part;
        body.body.push_back(in);
      }
      std::vector<KStmt> &to = body.body.back().body;
      switch (op.kind) {
        case OpKind::Copy:
          // A write-back the IR does not record as fused has no form of its
          // own (the copy of a reduced round is the reduction's second store).
          if (op.src.buf == Buf::O && op.fusedInto < 0)
            unsupported(op, "the write-back is not fused into the reduction (the pass fuseWriteBack)");
          if (op.fusedInto >= 0) {  // done by the reduction's stores (fuseWriteBack)
            expect(reduce && op.fusedInto == reduce->id && !to.empty() && to.back().kind == StmtKind::ReduceRound, op,
                   "the write-back is fused into the reduction right before it");
            expect(is(op.dst, Buf::O, RankRef::K, RankRef::R, true) && is(op.src, Buf::O, RankRef::R, RankRef::R, true) &&
                       op.var == RankRef::K && op.domain == Domain::Others,
                   op, "the write-back copies the reduced round into every peer's output");
            to.back().fusedBack = op.id;
            slices.fusedBack = op.id;
            break;
          }
          expect(part == RankRef::K && op.var == RankRef::K && op.domain == Domain::Others, op,
                 "round j of partition k goes to every peer k");
          expect(is(op.src, Buf::X, RankRef::R, RankRef::K, true) &&
                     (is(op.dst, Buf::O, RankRef::K, RankRef::None, true) || is(op.dst, Buf::O, RankRef::K, RankRef::K, true)),
                 op, "the push writes X_r[k][round j] into O_k (its partition k)");
          expect(op.dst.part == RankRef::K || op.dst.part == RankRef::None, op, "the push writes partition k");
          to.push_back(stmt(StmtKind::PushRound, op));
          break;
        case OpKind::Notify:
          checkPublishes(op, to);
          to.push_back(notify(op, SignalValue::Round));
          break;
        case OpKind::Wait: to.push_back(wait(op, SignalValue::Round)); break;
        case OpKind::Reduce: {
          // Round j of the own partition is reduced once the peer's PUT for
          // it was heard, in the same round block.
          bool heard = false;
          for (const KStmt &k : to) heard |= k.kind == StmtKind::Wait && k.sig == Sig::PUT;
          expect(heard, op, "the reduction of round j follows the wait for the peer's PUT of it");
          const RankRef ownPart = pushedPartition(loop);
          expect(!op.step && op.var == RankRef::P && op.domain == Domain::All && op.hasSrcSelf &&
                     is(op.dst, Buf::O, RankRef::R, ownPart, true) && is(op.src, Buf::O, RankRef::R, ownPart, true) &&
                     is(op.srcSelf, Buf::X, RankRef::R, RankRef::R, true) && part == RankRef::R,
                 op, "the reduction combines X_r[r] with what landed in O_r, in place");
          reduce = &op;
          to.push_back(stmt(StmtKind::ReduceRound, op));
          k_.reduces = true;
          break;
        }
        default: unsupported(op, "no direct-CTA statement for this op in the rounds loop");
      }
    }
    if (!reduce) throw IRError{"direct program: the rounds loop reduces the own partition"};
    twoRanks_ = true;
    k_.body.push_back(slices);
    k_.body.push_back(body);
  }

  /// The partition the push writes in the peer's output (O_k[k] or the
  /// packed O_k), and so where the own partition lands (O_r[r] or O_r).
  static RankRef pushedPartition(const Stmt &loop) {
    for (const Stmt &st : loop.body)
      if (st.op.kind == OpKind::Copy && st.op.src.buf == Buf::X) return st.op.dst.part == RankRef::K ? RankRef::R : RankRef::None;
    return RankRef::R;
  }

  /// The wait after the rounds: for the peer's last round, when it had any.
  KStmt afterRounds(const Op &w) {
    if (!twoRanks_) unsupported(w, "a wait for the peer's last round follows a rounds loop");
    expect(is(w.roundOf, Buf::X, RankRef::R, RankRef::P, false), w, "the last round is awaited when partition p has rounds");
    KStmt s = kernel::stmtOf(StmtKind::AfterRounds);
    s.body.push_back(wait(w, SignalValue::LastRound));
    return s;
  }
};

} // namespace

kernel::DirectCtas lowerDirectCtas(const Program &prog) {
  if (prog.regime != Regime::Direct || prog.roles.size() != 1 || prog.roles[0].runsOn != RunsOn::All ||
      prog.roles[0].perWarpGroup)
    throw IRError{"direct program: one role of CTAs on every rank is required"};
  return Lowerer(prog.roles[0]).run();
}

} // namespace purlin::ir
