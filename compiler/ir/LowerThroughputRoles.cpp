/// @file LowerThroughputRoles.cpp
/// @brief lowerThroughputRoles(): a throughput program's roles lowered to
/// the statements of the kernel IR (KernelIR.h) for their two work
/// distributions: CTA slices (pull: every CTA of the role moves its slice
/// of each chunk; waits CTA-collective, an arrive is a last-arriver
/// counter whose thread 0 notifies) and lane workers (push, `step j on
/// worker j mod workers`: a worker, one lane of a CTA, moves whole chunks
/// and notifies after its lane barrier). The decisions taken here: the
/// per-iteration values named once at the top of a pull loop (Hoist: seq,
/// slot and round of each staging slot the loop's ops name; the
/// hand-written programs computed them once per iteration too: each is an
/// integer division on the critical path of thread 0's wait -> copy ->
/// arrive -> notify chain), the rank conditions, and the barriers.
#include <string>
#include <utility>
#include <vector>

#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::ir {

namespace {

using kernel::StmtKind;
using KStmt = kernel::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw IRError{"throughput program: " + opLine(op) + ": " + why};
}

RankRef partKey(RankRef part) { return part == RankRef::None ? RankRef::R : part; }
bool pullSlot(const Op &o) { return o.slotSpace == SlotSpace::S && o.slotRegion == RankRef::None; }

/// The first op inside a loop (an unnumbered op, id -1, for an empty loop).
const Op &firstOp(const Stmt &s) {
  const Stmt *f = &s;
  while (f->isLoop && !f->body.empty()) f = &f->body[0];
  return f->op;
}

KStmt stmt(StmtKind kind, const Op &op) { return kernel::stmtFor(kind, op); }

/// A program whose role or op runs on one side of the root only.
bool rootedProgram(const Program &p) {
  bool any = false;
  for (const Role &role : p.roles) {
    any |= role.runsOn != RunsOn::All;
    forEachOp(role.body, [&](const Op &op) { any |= op.onlyOn != RunsOn::All; });
  }
  return any;
}

class Lowerer {
public:
  Lowerer(const Role &role, bool worker, bool rooted) : role_(role), worker_(worker), rooted_(rooted) {}

  kernel::RoleKernel run() {
    if (role_.perWarpGroup || (worker_ && rooted_))
      throw IRError{"throughput program: role " + role_.name + " runs on CTAs (a rooted program pulls)"};
    kernel::RoleKernel k;
    k.name = role_.name;
    k.worker = worker_;
    forEachOp(role_.body, [&](const Op &o) { k.ops.push_back(o.id); });
    if (role_.runsOn != RunsOn::All) {
      KStmt g = kernel::stmtOf(StmtKind::RoleGuard);
      g.on = role_.runsOn;
      k.body.push_back(g);
      guard_ = role_.runsOn;
    }
    body(role_.body, k.body, false);
    return k;
  }

private:
  const Role &role_;
  bool worker_, rooted_;
  /// The ranks the statements being lowered run on (a role's, or an open
  /// rank condition's): an op on these needs no condition of its own.
  RunsOn guard_ = RunsOn::All;

  /// The statements of an op that runs on fewer ranks than the code around
  /// it go into `if (r == root)` / `if (r != root)`: opens one, or returns
  /// nullptr.
  KStmt *openOn(const Op &op, std::vector<KStmt> &out) {
    if (op.onlyOn == RunsOn::All || op.onlyOn == guard_) return nullptr;
    if (guard_ != RunsOn::All) unsupported(op, "runs on the other side of the root than the code around it");
    KStmt on = kernel::stmtOf(StmtKind::OnRanks);
    on.on = op.onlyOn;
    out.push_back(on);
    guard_ = op.onlyOn;
    return &out.back();
  }
  void closeOn(const KStmt *opened) {
    if (opened) guard_ = RunsOn::All;
  }

  void body(const std::vector<Stmt> &stmts, std::vector<KStmt> &out, bool inLoop) {
    for (std::size_t i = 0; i < stmts.size(); ++i) {
      const Stmt &s = stmts[i];
      if (s.isLoop) {
        out.push_back(loop(s));
        continue;
      }
      const Op &op = s.op;
      if (op.last) unsupported(op, "a last-arriver op follows an arrive");
      const Stmt *next = i + 1 < stmts.size() ? &stmts[i + 1] : nullptr;
      const bool prevData = i > 0 && !stmts[i - 1].isLoop &&
                            (stmts[i - 1].op.kind == OpKind::Copy || stmts[i - 1].op.kind == OpKind::Reduce);
      KStmt *on = openOn(op, out);
      std::vector<KStmt> &to = on ? on->body : out;
      switch (op.kind) {
        case OpKind::Wait: to.push_back(stmt(StmtKind::WaitSignal, op)); break;
        case OpKind::Copy:
        case OpKind::Reduce: {
          if (!inLoop && op.dst.chunked) unsupported(op, "a chunked op sits in a loop over chunks");
          KStmt d = stmt(StmtKind::MoveData, op);
          // A sliced role's next op reuses the Atom workspace: a barrier
          // first (an arrive right after counts the CTA's arrival instead).
          const bool arriveNext = next && !next->isLoop && next->op.kind == OpKind::Arrive;
          d.syncAfter = !worker_ && !arriveNext;
          d.reduces = op.kind == OpKind::Reduce;
          d.worker = worker_;  // a worker's data move ends with its lane barrier
          to.push_back(d);
          break;
        }
        case OpKind::Arrive: {
          if (worker_) unsupported(op, "a worker moves whole chunks: no last-arriver counter");
          KStmt a = stmt(StmtKind::ArriveCounter, op);
          // The ops the last arriver runs.
          std::size_t j = i + 1;
          for (; j < stmts.size() && !stmts[j].isLoop && stmts[j].op.last; ++j) {
            const Op &n = stmts[j].op;
            if (n.kind != OpKind::Notify) unsupported(n, "the last arriver only notifies");
            KStmt *onN = openOn(n, a.body);
            (onN ? onN->body : a.body).push_back(stmt(StmtKind::NotifySignal, n));
            closeOn(onN);
          }
          to.push_back(a);
          i = j - 1;
          break;
        }
        case OpKind::Notify: {
          if (!worker_) unsupported(op, "a sliced role notifies from its last arriver");
          KStmt n = stmt(StmtKind::LaneNotify, op);
          n.syncFirst = !prevData;  // the lane's accesses before the notify (a data op ends with its own)
          to.push_back(n);
          break;
        }
        default: unsupported(op, "no CUDA form for this op in a throughput program");
      }
      closeOn(on);
    }
  }

  KStmt loop(const Stmt &s) {
    auto bad = [&](const std::string &why) {
      if (firstOp(s).id >= 0) unsupported(firstOp(s), why);  // name the loop's first op
      throw IRError{"throughput program: a loop " + why};
    };
    if (!s.chunks || s.rounds) bad("of a throughput role runs over the call's chunks");
    if (s.var != RankRef::None && !s.chunkMajor) bad("over chunks and ranks is chunk-major");
    KStmt l = kernel::stmtOf(StmtKind::ChunkLoop);
    l.op = firstOp(s).id;  // names the loop's ranks in errors
    l.worker = worker_;
    if (worker_) {
      if (!s.perCta) bad("of a push role distributes its steps over workers");
      if (s.var != RankRef::None && s.domain != Domain::Ring && s.domain != Domain::RevRing)
        bad("over peers of a push role runs r+1..r-1 or r-1..r+1 (mod n)");
      l.var = s.var, l.domain = s.domain;
      body(s.body, l.body, true);
      return l;
    }
    if (s.perCta) bad("of a pull role slices every chunk over its CTAs");
    if (s.var == RankRef::None) {
      hoist(s.body, l.body);
      body(s.body, l.body, true);
      return l;
    }
    if (s.domain != Domain::Ring && s.domain != Domain::RevRing && s.domain != Domain::SelfRing)
      bad("over ranks of a pull role runs a ring order");
    KStmt ranks = kernel::stmtOf(StmtKind::PeerSteps);
    ranks.op = l.op;
    ranks.var = s.var, ranks.domain = s.domain;
    hoist(s.body, ranks.body);
    body(s.body, ranks.body, true);
    l.body.push_back(ranks);
    return l;
  }

  /// The values named once at the top of a pull loop's body: seq/slot/round
  /// of every (owner, part) its ops name with ranks the loop binds (not an
  /// op's own forEach rank).
  static void hoist(const std::vector<Stmt> &body, std::vector<KStmt> &out) {
    std::vector<std::pair<RankRef, RankRef>> pairs;
    auto add = [&](const Op &op, RankRef owner, RankRef part) {
      if (op.var != RankRef::None && (owner == op.var || part == op.var)) return;
      const std::pair<RankRef, RankRef> key{owner, partKey(part)};
      for (const auto &p : pairs)
        if (p == key) return;
      pairs.push_back(key);
    };
    for (const Stmt &s : body) {
      if (s.isLoop) continue;
      const Op &op = s.op;
      if (pullSlot(op)) add(op, op.slotOwner, op.slotPart);
      for (const Access *a : {&op.dst, &op.src})
        if (a->buf == Buf::S && a->region == RankRef::None && (op.kind == OpKind::Copy || op.kind == OpKind::Reduce))
          add(op, a->owner, a->part);
    }
    for (const auto &[owner, part] : pairs) {
      KStmt h = kernel::stmtOf(StmtKind::Hoist);
      h.owner = owner, h.partOf = part;
      out.push_back(h);
    }
  }
};

} // namespace

kernel::ThroughputRoles lowerThroughputRoles(const Program &prog) {
  if (prog.regime != Regime::Throughput || prog.roles.empty() || prog.roles.size() > 3)
    throw IRError{std::string("throughput program: a ") + (prog.transfer == Transfer::Push ? "push" : "pull") +
                  " program of one to three roles is required"};
  kernel::ThroughputRoles t;
  t.push = prog.transfer == Transfer::Push;
  t.rooted = rootedProgram(prog);
  for (const Role &role : prog.roles) t.roles.push_back(Lowerer(role, t.push, t.rooted).run());
  return t;
}

} // namespace purlin::ir
