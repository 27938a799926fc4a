/// @file Mutation.cpp
/// @brief mutate(): verifier first (on the sample calls), then the simulator.
#include "ir/Mutation.h"

#include "ir/Printer.h"
#include "ir/Simulator.h"
#include "ir/Verifier.h"

namespace purlin::ir {
namespace {

bool erase(std::vector<Stmt> &body, int id) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      if (erase(body[i].body, id)) return true;
    } else if (body[i].op.id == id) {
      body.erase(body.begin() + long(i));
      return true;
    }
  }
  return false;
}

const Op *findOp(const CollectiveIR &ir, int id) {
  const Op *found = nullptr;
  for (const Program *p : programsOf(ir))
    for (auto &r : p->roles)
      forEachOp(r.body, [&](const Op &o) {
        if (o.id == id) found = &o;
      });
  return found;
}

/// True when one of `ids` is an op on the same signal as `deleted`, or a
/// data op (the read the deleted wait guarded).
bool names(const CollectiveIR &ir, const Op &deleted, const std::vector<int> &ids) {
  for (int id : ids) {
    const Op *o = findOp(ir, id);
    if (!o) continue;
    if ((o->kind == OpKind::Notify || o->kind == OpKind::Wait) && o->sig == deleted.sig) return true;
    if (deleted.kind == OpKind::Wait && o->kind != OpKind::Notify && o->kind != OpKind::Wait) return true;
  }
  return false;
}

} // namespace

CollectiveIR withoutOp(const CollectiveIR &ir, int id) {
  CollectiveIR m = ir;
  for (Program *p : programsOf(m))
    for (auto &r : p->roles)
      if (erase(r.body, id)) return m;
  return m;
}

CollectiveIR withoutFence(const CollectiveIR &ir, int id) {
  CollectiveIR m = ir;
  for (Program *p : programsOf(m))
    for (auto &r : p->roles)
      forEachOp(r.body, [&](Op &o) {
        if (o.id == id) o.fence = false;
      });
  return m;
}

std::vector<Mutant> mutate(const CollectiveIR &ir, int seeds, bool withDirect) {
  std::vector<Mutant> out;
  std::vector<const Program *> progs = {&ir.latency, &ir.throughput};
  if (withDirect && ir.hasDirect()) progs.push_back(&ir.direct);
  if (withDirect && ir.hasEngine()) progs.push_back(&ir.engine);
  for (const Program *prog : progs) {
    std::vector<std::pair<const Op *, bool>> targets; // (op, fence only)
    for (auto &r : prog->roles)
      forEachOp(r.body, [&](const Op &o) {
        if (o.kind == OpKind::Notify || o.kind == OpKind::Wait) targets.push_back({&o, false});
        // The model's unit is a CTA: a fence publishing other CTAs' writes
        // (last arriver) is checkable; a perCta CTA's fence over its own
        // threads is kept but not modelled.
        if (o.kind == OpKind::Notify && o.fence && o.last) targets.push_back({&o, true});
      });
    for (auto [t, fenceOnly] : targets) {
      Mutant mu;
      mu.program = programName(*prog);
      mu.opId = t->id;
      mu.fenceOnly = fenceOnly;
      mu.opText = fenceOnly ? "fence.acq_rel.sys of %" + std::to_string(t->id) : opText(*t);
      CollectiveIR m = fenceOnly ? withoutFence(ir, t->id) : withoutOp(ir, t->id);
      const Program &mp = prog->engine                     ? m.engine
                          : prog->regime == Regime::Latency ? m.latency
                          : prog->regime == Regime::Direct  ? m.direct
                                                            : m.throughput;
      for (auto &sc : sampleCalls(m, m.n)) {
        if (mp.engine && !engineApplies(m, sc.sizes)) continue;
        Report r = verifyInstance(instantiate(m, mp, sc.sizes, sc.geo, 2));
        if (r.ok()) continue;
        mu.caught = true;
        mu.by = "verifier";
        mu.message = sc.label + ": " + r.errors[0].message;
        for (auto &f : r.errors) mu.namesOp |= names(m, *t, f.ops);
        break;
      }
      for (int s = 0; !mu.caught && s < seeds; ++s)
        for (uint64_t bytes : {uint64_t(24 * m.n), uint64_t(200 * m.n)}) {
          CallArgs a = argsForBytes(m.kind, m.n, bytes * (reducesKind(m.kind) ? 4 : 1), uint64_t(s + 1));
          Sizes sz = computeSizes(m.kind, m.n, a);
          if (mp.engine && !engineApplies(m, sz)) continue;
          SimOptions o;
          o.seed = uint64_t(s + 1);
          SimResult r = simulate(m, mp, a, simGeometry(m, sz), o);
          if (r.report.ok()) continue;
          mu.caught = true;
          mu.by = "simulator";
          mu.message = r.report.errors[0].message;
          mu.namesOp = names(m, *t, r.report.errors[0].ops) || r.report.errors[0].rule == "wrong-result";
          break;
        }
      out.push_back(mu);
    }
  }
  return out;
}

} // namespace purlin::ir
