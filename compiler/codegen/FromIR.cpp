/// @file FromIR.cpp
/// @brief Program and role notes for the generated code, read off the IR.
#include "codegen/FromIR.h"

#include <algorithm>
#include <climits>

#include "codegen/Spelling.h"
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

std::vector<ProgramNote> programNotes(const ir::CollectiveIR &ir) {
  std::vector<ProgramNote> notes;
  const ir::Program *programs[2] = {&ir.latency, &ir.throughput};
  for (const ir::Program *p : programs) {
    if (p->roles.empty()) continue;
    ProgramNote note;
    const bool latency = p->regime == ir::Regime::Latency;
    note.name = latency ? "latency" : "throughput";
    std::string bytes = ir.dispatchBytes.empty() ? "bytes" : ir.dispatchBytes;
    note.when = latency ? bytes + " <= world[n].latencyMaxBytes" : bytes + " > world[n].latencyMaxBytes";
    for (const ir::Role &r : p->roles) {
      RoleNote rn;
      rn.role = r.name;
      if (!r.ctasFrom.empty()) {
        // "throughput.stageCtas" -> "world[n].stageCtas" (the policy struct's field)
        std::string field = r.ctasFrom.substr(r.ctasFrom.find_last_of('.') + 1);
        if (field == "ctas") field = "latencyCtas";
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
      note.roles.push_back(std::move(rn));
    }
    notes.push_back(std::move(note));
  }
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
      // The programs are symbolic over ranks, but peer orders (r+1..r-1,
      // r-1..r+1, r..r-1) only differ from each other for n > 2: the
      // verifier accepts them for every world size the code may run on.
      for (int m = kMinWorld; m <= kMaxWorld; ++m) {
        if (m == pullWorld) out.pullIR = ir::lowerVerified(c, policy, m);
        else if (m == pushWorld) out.pushIR = ir::lowerVerified(c, policy, m);
        else if (m != n) (void)ir::lower(c, policy, m);
      }
      if (pullWorld == n) out.pullIR = out.ir;
      if (pushWorld == n) out.pushIR = out.ir;
      out.programs = programNotes(out.ir->ir());
      return std::nullopt;
    } catch (const ir::IRError &e) {
      return "SNAC IR of " + c.name + ": " + e.message;
    }
  };
}

void printPrograms(EmitCollective &c) {
  if (!c.ir) throw EmitError("internal: no verified SNAC IR for " + c.name);
  c.latency = printLatencyProgram(flatName(c.name), c.ir->ir().latency);
  if (!c.pullIR) throw EmitError("internal: no world size of " + c.name + "'s policy shows its pull program");
  c.throughput = printThroughputPrograms(flatName(c.name), c.pullIR->ir().throughput,
                                         c.pushIR ? &c.pushIR->ir().throughput : nullptr);
  c.direct.reset();
  for (const auto *v : {&c.pullIR, &c.pushIR})
    if (*v && (*v)->ir().hasDirect()) {
      c.direct = printDirectProgram(flatName(c.name), (*v)->ir().direct);
      c.directWorld = (*v)->ir().n;
      break;
    }
}

} // namespace purlin::codegen
