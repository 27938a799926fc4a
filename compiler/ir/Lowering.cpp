/// @file Lowering.cpp
/// @brief shareLoads(), specializeTwoRanks(), fuseWriteBack() (Lowering.h).
#include "ir/Lowering.h"

namespace purlin::ir {

namespace {

bool sameAccess(const Access &a, const Access &b) {
  return a.buf == b.buf && a.owner == b.owner && a.part == b.part && a.chunked == b.chunked &&
         a.shapePart == b.shapePart && a.region == b.region && a.rounded == b.rounded &&
         a.engineChunk == b.engineChunk;
}

/// The reduce step and the poll of a latency role's reduction loop (a loop
/// over every rank whose body is a packet poll and a reduce step), or nullptr.
Stmt *reductionLoop(Role &role) {
  for (Stmt &s : role.body)
    if (s.isLoop && s.var == RankRef::P && s.domain == Domain::All && s.body.size() == 2 && !s.body[0].isLoop &&
        !s.body[1].isLoop && s.body[0].op.kind == OpKind::PacketPoll && s.body[1].op.kind == OpKind::Reduce &&
        s.body[1].op.step)
      return &s;
  return nullptr;
}

} // namespace

void shareLoads(CollectiveIR &ir) {
  for (Role &role : ir.latency.roles) {
    const Op *put = nullptr;
    for (const Stmt &s : role.body)
      if (!s.isLoop && s.op.kind == OpKind::PacketPut) put = &s.op;
    Stmt *loop = reductionLoop(role);
    if (!put || !loop) continue;
    Op &step = loop->body[1].op;
    // Every rank puts (not only the root or only the others) its whole input,
    // and that input is the step's own operand.
    if (put->onlyOn == RunsOn::All && step.onlyOn == RunsOn::All && step.hasSrcSelf &&
        sameAccess(put->src, step.srcSelf))
      step.reusesLoadOf = put->id;
  }
}

void specializeTwoRanks(CollectiveIR &ir) {
  for (Role &role : ir.latency.roles)
    if (Stmt *loop = reductionLoop(role)) loop->twoRankForm = true;
}

void fuseWriteBack(CollectiveIR &ir) {
  for (Role &role : ir.direct.roles)
    for (Stmt &s : role.body) {
      if (!s.isLoop || !s.rounds) continue;
      for (std::size_t i = 0; i + 1 < s.body.size(); ++i) {
        const Op &red = s.body[i].op;
        Op &copy = s.body[i + 1].op;
        if (s.body[i].isLoop || s.body[i + 1].isLoop || red.kind != OpKind::Reduce || copy.kind != OpKind::Copy)
          continue;
        // The copy sends the round the reduction just wrote, under the same
        // round condition, to every peer.
        if (sameAccess(copy.src, red.dst) && copy.cond == red.cond && sameAccess(copy.roundOf, red.roundOf) &&
            copy.var == RankRef::K && copy.domain == Domain::Others)
          copy.fusedInto = red.id;
      }
    }
}

std::vector<std::pair<std::string, int>> loweringProblems(const CollectiveIR &ir) {
  std::vector<std::pair<std::string, int>> problems;
  const auto walk = [&](const std::vector<Stmt> &body, const std::vector<Stmt> &top, auto &&self) -> void {
    for (std::size_t i = 0; i < body.size(); ++i) {
      const Stmt &s = body[i];
      if (s.isLoop) {
        if (s.twoRankForm &&
            !(s.var == RankRef::P && s.domain == Domain::All && s.body.size() == 2 && !s.body[0].isLoop &&
              s.body[0].op.kind == OpKind::PacketPoll && !s.body[1].isLoop && s.body[1].op.kind == OpKind::Reduce &&
              s.body[1].op.step))
          problems.push_back({"a two-rank form on a loop that is not a packet reduction over every rank", -1});
        self(s.body, top, self);
        continue;
      }
      const Op &o = s.op;
      if (o.reusesLoadOf >= 0) {
        const Op *put = nullptr;
        for (const Stmt &t : top)
          if (!t.isLoop && t.op.id == o.reusesLoadOf) put = &t.op;
        if (!put || put->kind != OpKind::PacketPut || put->onlyOn != RunsOn::All || o.onlyOn != RunsOn::All ||
            !o.hasSrcSelf || !sameAccess(put->src, o.srcSelf))
          problems.push_back({"%" + std::to_string(o.id) + " reuses the load of %" + std::to_string(o.reusesLoadOf) +
                                  ", which is not an earlier put of the same words by every rank",
                              o.id});
      }
      if (o.fusedInto >= 0) {
        const Op *red = i > 0 && !body[i - 1].isLoop ? &body[i - 1].op : nullptr;
        if (!red || red->id != o.fusedInto || red->kind != OpKind::Reduce || o.kind != OpKind::Copy ||
            !sameAccess(o.src, red->dst) || o.cond != red->cond || !sameAccess(o.roundOf, red->roundOf))
          problems.push_back({"%" + std::to_string(o.id) + " is fused into %" + std::to_string(o.fusedInto) +
                                  ", which is not the reduce right before it writing the copied round",
                              o.id});
      }
    }
  };
  for (const Program *p : programsOf(ir))
    for (const Role &r : p->roles) walk(r.body, r.body, walk);
  return problems;
}

} // namespace purlin::ir
