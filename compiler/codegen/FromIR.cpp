/// @file FromIR.cpp
/// @brief Program and role notes for the generated code, read off the IR.
#include "codegen/FromIR.h"

#include <algorithm>
#include <climits>

#include "codegen/Spelling.h"
#include "ir/DerivePush.h"
#include "ir/Pipeline.h"

namespace purlin::codegen {

namespace {

std::string opWord(const ir::Op &op) {
  switch (op.kind) {
  case ir::OpKind::Copy: return "copy " + std::string(ir::toString(op.src.buf)) + "->" + ir::toString(op.dst.buf);
  case ir::OpKind::Reduce: return "reduce ->" + std::string(ir::toString(op.dst.buf));
  case ir::OpKind::Arrive: return "arrive";
  case ir::OpKind::Notify: return std::string("notify ") + ir::toString(op.sig);
  case ir::OpKind::Wait: return std::string("wait ") + ir::toString(op.sig);
  case ir::OpKind::PacketPut: return "packet put";
  case ir::OpKind::PacketPoll: return "packet poll";
  }
  return "op";
}

} // namespace

std::string summarizeRole(const ir::Role &role) {
  std::vector<std::string> words;
  ir::forEachOp(role.body, [&](const ir::Op &op) {
    std::string w = opWord(op);
    if (words.empty() || words.back() != w) words.push_back(w);
  });
  std::string s;
  for (const auto &w : words) {
    if (!s.empty()) s += "; ";
    s += w;
  }
  return s;
}

namespace {

RoleNote roleNote(const ir::Role &r) {
  RoleNote rn;
  rn.role = r.name;
  if (!r.ctasFrom.empty()) {
    // "throughput.stageCtas" -> "world[n].stageCtas" (the policy struct's field)
    std::string field = r.ctasFrom.substr(r.ctasFrom.find_last_of('.') + 1);
    if (r.ctasFrom == "latency.ctas") field = "latencyCtas";
    if (r.ctasFrom == "direct.ctas") field = "directCtas";
    rn.ctas = "world[n]." + field;
  }
  int lo = INT_MAX, hi = INT_MIN;
  ir::forEachOp(r.body, [&](const ir::Op &op) {
    if (op.id < 0) return;
    lo = std::min(lo, op.id);
    hi = std::max(hi, op.id);
  });
  if (lo != INT_MAX) rn.opIds = lo == hi ? "%" + std::to_string(lo) : "%" + std::to_string(lo) + "..%" + std::to_string(hi);
  if (r.runsOn != ir::RunsOn::All) rn.role += std::string(" (") + ir::toString(r.runsOn) + " ranks)";
  rn.summary = summarizeRole(r);
  return rn;
}

ProgramNote note(const std::string &name, const std::string &when, const ir::Program &p) {
  ProgramNote n;
  n.name = name;
  n.when = when;
  for (const ir::Role &r : p.roles) n.roles.push_back(roleNote(r));
  return n;
}

/// `policy` with every world size's throughput transfer set to `t`.
Policy withTransfer(const Policy &policy, Transfer t) {
  Policy forced = policy;
  for (int m = kMinWorld; m <= kMaxWorld; ++m) forced.world[m].throughput.transfer = t;
  return forced;
}

} // namespace

std::vector<ProgramNote> programNotes(const ir::CollectiveIR &ir) {
  std::vector<ProgramNote> notes;
  const std::string bytes = ir.dispatchBytes.empty() ? "bytes" : ir.dispatchBytes;
  if (!ir.latency.roles.empty()) notes.push_back(note("latency", bytes + " <= world[n].latencyMaxBytes", ir.latency));
  if (!ir.throughput.roles.empty())
    notes.push_back(note(std::string("throughput (") + (ir.throughput.transfer == Transfer::Push ? "push" : "pull") + ")",
                         bytes + " > world[n].latencyMaxBytes" +
                             (ir.throughput.transfer == Transfer::Push ? " and world[n].push" : " and !world[n].push"),
                         ir.throughput));
  return notes;
}

std::vector<ProgramNote> programNotes(const EmitCollective &c) {
  std::vector<ProgramNote> notes;
  if (!c.ir) return notes;
  const std::string bytes = c.ir->ir().dispatchBytes.empty() ? "bytes" : c.ir->ir().dispatchBytes;
  notes.push_back(note("latency", bytes + " <= world[n].latencyMaxBytes", c.ir->ir().latency));
  if (c.pullIR)
    notes.push_back(note("throughput (pull)",
                         bytes + " > world[n].latencyMaxBytes and !world[n].push (IR of world n = " +
                             std::to_string(c.pullIR->ir().n) + ")",
                         c.pullIR->ir().throughput));
  if (c.pushIR)
    notes.push_back(note("throughput (push)",
                         bytes + " > world[n].latencyMaxBytes and world[n].push (IR of world n = " +
                             std::to_string(c.pushIR->ir().n) + ")",
                         c.pushIR->ir().throughput));
  if (c.directIR)
    notes.push_back(note("direct", "captured or output registered, " + bytes + " >= world[n].directMinBytes (IR of world n = " +
                                       std::to_string(c.directIR->ir().n) + ")",
                         c.directIR->ir().direct));
  if (c.directIR && c.directIR->ir().hasEngine())
    notes.push_back(note("direct (copy engine)",
                         "captured (or output registered, no GPU shared), unchecked, message bytes >= " +
                             std::to_string(c.directIR->ir().bound.directEngineMinBytes()) + " (IR of world n = " +
                             std::to_string(c.directIR->ir().n) + ")",
                         c.directIR->ir().engine));
  return notes;
}

IRProvider irProvider(int n) {
  return [n](const Collective &c, const Policy &policy, EmitCollective &out) -> std::optional<std::string> {
    try {
      out.ir = ir::lowerVerified(c, policy, n);
      // The throughput programs come from the world sizes --emit=ir shows
      // them for (each transfer the policy binds somewhere).
      const ir::Kind kind = out.ir->ir().kind;
      const int pullWorld = ir::worldShowing(kind, policy, Transfer::Pull);
      const int pushWorld = ir::worldShowing(kind, policy, Transfer::Push);
      out.pullIR.reset();
      out.pushIR.reset();
      out.directIR.reset();
      for (int m = kMinWorld; m <= kMaxWorld; ++m) {
        if (m == n) continue;
        if (m == pullWorld) out.pullIR = ir::lowerVerified(c, policy, m);
        else if (m == pushWorld) out.pushIR = ir::lowerVerified(c, policy, m);
      }
      if (pullWorld == n) out.pullIR = out.ir;
      if (pushWorld == n) out.pushIR = out.ir;
      // The push CTA shapes of every world size that takes the push
      // transfer, as the IR binds them (Passes: snac::pushLanes).
      out.pushLanes.clear();
      for (int m = kMinWorld; m <= kMaxWorld; ++m) {
        if (ir::boundTransfer(kind, policy.forWorld(m).throughput.transfer) != Transfer::Push) continue;
        const ir::Bound b = m == n ? out.ir->ir().bound : ir::lower(c, policy, m, {.verify = false}).bound;
        const PushLaneShape shape{b.stageLanes, b.consumeLanes};
        if (std::find(out.pushLanes.begin(), out.pushLanes.end(), shape) == out.pushLanes.end())
          out.pushLanes.push_back(shape);
      }
      std::sort(out.pushLanes.begin(), out.pushLanes.end());
      // The code is symbolic over ranks and runs for every world size, under
      // either transfer (a policy table, or a test, may pick either for any
      // n): the verifier accepts the collective's programs for every n in
      // 2..8 under both (push where it is derived), so no world size runs a
      // program the verifier has not seen. (Peer orders r+1..r-1, r-1..r+1,
      // r..r-1 only differ from each other for n > 2.)
      for (Transfer t : {Transfer::Pull, Transfer::Push}) {
        if (ir::boundTransfer(kind, t) != t) continue;  // push is not derived for this collective
        const Policy forced = withTransfer(policy, t);
        for (int m = kMinWorld; m <= kMaxWorld; ++m) (void)ir::lower(c, forced, m);
      }
      // The direct program: from a shown world size when it has one, else
      // from the first world size that derives it (the reductions' is n = 2
      // only; a policy may turn it off at some world sizes).
      for (const auto *v : {&out.pullIR, &out.pushIR})
        if (!out.directIR && *v && (*v)->ir().hasDirect()) out.directIR = **v;
      for (int m = kMinWorld; m <= kMaxWorld && !out.directIR; ++m) {
        ir::VerifiedIR v = ir::lowerVerified(c, policy, m);
        if (v.ir().hasDirect()) out.directIR = v;
      }
      out.programs = programNotes(out);
      return std::nullopt;
    } catch (const ir::IRError &e) {
      return "SNAC IR of " + c.name + ": " + e.message;
    }
  };
}

void printPrograms(EmitCollective &c) {
  if (!c.ir) throw EmitError("internal: no verified SNAC IR for " + c.name);
  // The latency program of the world size --emit=ir shows (its ops are the
  // same for every n; a rooted program's DONE counter cites the bound CTAs).
  const ir::CollectiveIR &shown = c.pullIR ? c.pullIR->ir() : c.pushIR ? c.pushIR->ir() : c.ir->ir();
  c.latency = printLatencyProgram(flatName(c.name), shown.latency, isVariable(shown.in) || isVariable(shown.out));
  c.throughput = printThroughputPrograms(flatName(c.name), c.pullIR ? &c.pullIR->ir().throughput : nullptr,
                                         c.pushIR ? &c.pushIR->ir().throughput : nullptr, c.pushLanes,
                                         isVariable(shown.in) || isVariable(shown.out));
  c.direct.reset();
  c.engine.reset();
  if (c.directIR) {
    c.direct = printDirectProgram(flatName(c.name), c.directIR->ir().direct);
    if (c.directIR->ir().hasEngine())
      c.engine = printEngineProgram(flatName(c.name), c.directIR->ir().kind, c.directIR->ir().engine);
    c.directWorld = c.directIR->ir().n;
  }
}

} // namespace purlin::codegen
