/// @file Printer.cpp
/// @brief Text and JSON printers of the SNAC IR.
#include "ir/Printer.h"

#include "ir/CallPlan.h"
#include "ir/DerivePush.h"

#include <sstream>

namespace purlin::ir {
namespace {

std::string layoutName(Layout l) { return dslName(l); }
std::string rootName(Root r) { return dslName(r); }
std::string opName(ConsumeOp o) { return dslName(o); }

std::string seqText(RankRef part) {
  return part == RankRef::None ? "seq(c)" : std::string("seq(") + toString(part) + ",c)";
}

/// Push S slots are per (source, destination) region: pslot(c) = c mod slots.
bool pushSlot(const Op &o) { return o.slotSpace == SlotSpace::S && o.slotRegion != RankRef::None; }

std::string slotText(const Op &o) {
  if (pushSlot(o)) return "[pslot(c)]";
  if (o.slotSpace == SlotSpace::S) return "[slot(" + seqText(o.slotPart) + ")]";
  if (o.slotSpace == SlotSpace::Y) return "[yslot(c)]";
  if (o.slotSpace == SlotSpace::Cta) return "[cta]";
  if (o.slotSpace == SlotSpace::Chunk) return "[c]";
  return "";
}

std::string roundText(const Op &o) {
  std::string sp = o.slotSpace == SlotSpace::Y ? "yround" : pushSlot(o) ? "pround" : "round";
  if (o.slotSpace == SlotSpace::Cta) sp = "j";
  switch (o.round) {
  case RoundOf::Zero: return "sig(e,0)";
  case RoundOf::Cur: return "sig(e," + sp + ")";
  case RoundOf::Prev: return "sig(e," + sp + "(prev))";
  case RoundOf::Last: return "sig(e,rounds(" + accessText(o.roundOf) + ")-1)";
  case RoundOf::One: return "1";
  }
  return "?";
}

std::string eachText(const Op &o) {
  if (o.var == RankRef::None || o.kind == OpKind::Reduce) return "";
  return std::string(" for ") + toString(o.var) + " in " + toString(o.domain);
}

std::string suffix(const Op &o) {
  std::string s;
  if (o.host) s += std::string(" on ") + toString(o.stream);
  if (o.cond == Cond::NonEmpty) s += " if " + accessText(o.roundOf) + " not empty";
  else if (o.cond == Cond::InRound) s += " if j < rounds(" + accessText(o.roundOf) + ")";
  else if (o.cond == Cond::HasRounds) s += " if rounds(" + accessText(o.roundOf) + ") > 0";
  else if (o.cond != Cond::Always) s += std::string(" ") + toString(o.cond);
  if (o.onlyOn == RunsOn::Root) s += " on root";
  if (o.onlyOn == RunsOn::NonRoot) s += " on ranks != root";
  if (o.last) s += " [last arriver]";
  if (!o.note.empty()) s += "  // " + o.note;
  return s;
}

std::string loopHead(const Stmt &s) {
  if (!s.kernel.empty())
    return "kernel " + s.kernel + " on " + toString(s.stream) +
           (s.wide ? " (direct.ctas ctas x " + std::to_string(kEngineReduceThreads) + " threads, each its slice)"
                   : " (1 cta x 32 threads)") +
           (s.endsCall ? "; ends the call" : "");
  if (s.engineChunks) return "for c in engine chunks of " + accessText(s.chunksOf);
  if (s.rounds) return "for j in 0..max rounds-1 (rounds of this CTA's slices)";
  std::string c = "c in 0..cpp-1";
  std::string v = s.var == RankRef::None ? "" : std::string(toString(s.var)) + " in " + toString(s.domain);
  std::string per = s.perCta ? ", step j on worker j mod workers" : "";
  if (!s.chunks) return "for " + v + per;
  if (v.empty()) return "for " + c + per;
  return (s.chunkMajor ? "for " + c + ", " + v : "for " + v + ", " + c) + per;
}

void printBody(std::ostream &os, const std::vector<Stmt> &body, int indent) {
  std::string pad(indent, ' ');
  for (auto &s : body) {
    if (s.isLoop) {
      if (s.twoRankForm)
        os << pad << "// specializeTwoRanks: also a form for n == 2 (the one peer polled, both operands combined "
                     "by one pairwise reduction in rank order)\n";
      os << pad << loopHead(s) << " {\n";
      printBody(os, s.body, indent + 2);
      os << pad << "}\n";
    } else {
      os << pad << opLine(s.op) << "\n";
      if (s.op.reusesLoadOf >= 0)
        os << pad << "  // shareLoads: its own operand is the words %" << s.op.reusesLoadOf << " loaded\n";
      if (s.op.fusedInto >= 0)
        os << pad << "  // fuseWriteBack: done by %" << s.op.fusedInto
           << "'s stores (each reduced vector stored here and to the peer)\n";
    }
  }
}

void printProgram(std::ostream &os, const Program &p) {
  os << "  program " << toString(p.regime);
  if (p.regime == Regime::Throughput) os << " (" << (p.transfer == Transfer::Push ? "push" : "pull") << ")";
  if (p.regime == Regime::Direct)
    os << (p.engine ? ", copy-engine form (captured calls; the call's graph: copy-engine transfers, stream memory "
                      "operations, event edges and kernel nodes, in host enqueue order)"
                    : " (captured calls; no staging)");
  os << " {\n";
  for (auto &b : p.buffers) os << "    buffer " << toString(b.buf) << ": " << b.desc << "\n";
  for (auto &s : p.signals)
    os << "    signal " << toString(s.sig) << " (index " << sigBase(s.sig)
       << (s.sig == Sig::DONE               ? " + src"
           : s.sig == Sig::ARRIVED || s.sig == Sig::PUT || s.sig == Sig::BACK ? " + src*128 + cta"
           : s.sig == Sig::E_PUT || s.sig == Sig::E_BACK                     ? " + c"
           : s.sig == Sig::EDGE                                              ? ", not in the workspace"
                                                                             : " + src*1024 + slot")
       << "): from " << s.producers << "; to "
       << s.consumers << "; value " << s.value << "\n";
  for (auto &r : p.roles) {
    if (p.engine) {
      os << "    role " << r.name << " (the host's enqueue order; each op on stream or branch) {\n";
      printBody(os, r.body, 6);
      os << "    }\n";
      continue;
    }
    os << "    role " << r.name << " (" << r.ctas << " ctas x " << r.threads << " threads, " << r.ctasFrom;
    if (p.transfer == Transfer::Push && p.regime == Regime::Throughput)
      os << "; workers = ctas x " << r.lanes << (r.lanes == 1 ? " lane" : " lanes");
    if (r.runsOn != RunsOn::All) os << ", on " << toString(r.runsOn);
    if (r.perWarpGroup) os << "; per packet group g, on warp g mod warps";
    os << ") {\n";
    printBody(os, r.body, 6);
    os << "    }\n";
  }
  os << "  }\n";
}

nlohmann::json accessJson(const Access &a) {
  nlohmann::json j = {{"buf", toString(a.buf)}, {"owner", toString(a.owner)}, {"part", toString(a.part)},
                      {"chunked", a.chunked}, {"text", accessText(a)}};
  if (a.rounded) j["rounded"] = true;
  if (a.buf == Buf::PK) j["shapePart"] = toString(a.shapePart);
  if (a.region != RankRef::None) j["region"] = toString(a.region);
  return j;
}

nlohmann::json opJson(const Op &o) {
  nlohmann::json j = {{"id", o.id}, {"op", toString(o.kind)}, {"text", opText(o) + suffix(o)}};
  if (const char *m = remoteMode(o)) j["remote"] = m;
  if (o.fence) j["fence"] = "fence.acq_rel.sys";
  if (o.cond != Cond::Always) j["cond"] = toString(o.cond);
  if (o.onlyOn != RunsOn::All) j["on"] = toString(o.onlyOn);
  if (o.last) j["lastArriver"] = true;
  if (o.var != RankRef::None) j["forEach"] = {{"var", toString(o.var)}, {"domain", toString(o.domain)}};
  switch (o.kind) {
  case OpKind::Copy: case OpKind::PacketPut:
    j["dst"] = accessJson(o.dst);
    j["src"] = accessJson(o.src);
    break;
  case OpKind::Reduce:
    j["dst"] = accessJson(o.dst);
    j["src"] = accessJson(o.src);
    if (o.hasSrcSelf) j["srcSelf"] = accessJson(o.srcSelf);
    if (o.step) j["step"] = true;
    break;
  case OpKind::PacketPoll: j["src"] = accessJson(o.src); break;
  case OpKind::Arrive:
    j["counterBase"] = o.counterBase;
    j["counterStride"] = o.counterStride;
    j["counterRank"] = toString(o.counterRank);
    j["arrivals"] = o.arrivals;
    break;
  case OpKind::Notify: case OpKind::Wait:
    j["signal"] = toString(o.sig);
    j["base"] = sigBase(o.sig);
    j["src"] = toString(o.kind == OpKind::Notify ? RankRef::R : o.sigSrc);
    if (o.kind == OpKind::Notify) j["target"] = toString(o.target);
    j["slot"] = o.slotSpace == SlotSpace::S ? "slot(" + seqText(o.slotPart) + ")"
                : o.slotSpace == SlotSpace::Y ? "yslot(c)" : o.slotSpace == SlotSpace::Cta ? "cta" : "-";
    j["value"] = roundText(o);
    break;
  }
  if (!o.note.empty()) j["note"] = o.note;
  if (o.reusesLoadOf >= 0) j["reusesLoadOf"] = o.reusesLoadOf;
  if (o.fusedInto >= 0) j["fusedInto"] = o.fusedInto;
  return j;
}

nlohmann::json bodyJson(const std::vector<Stmt> &body) {
  nlohmann::json a = nlohmann::json::array();
  for (auto &s : body) {
    if (s.isLoop)
      a.push_back({{"loop", {{"var", toString(s.var)}, {"domain", toString(s.domain)}, {"chunks", s.chunks},
                             {"chunkMajor", s.chunkMajor}, {"perCta", s.perCta}, {"rounds", s.rounds},
                             {"engineChunks", s.engineChunks}, {"kernel", s.kernel},
                             {"twoRankForm", s.twoRankForm},
                             {"text", loopHead(s)}}},
                   {"body", bodyJson(s.body)}});
    else
      a.push_back(opJson(s.op));
  }
  return a;
}

} // namespace

std::string accessText(const Access &a) {
  std::string s = std::string(toString(a.buf)) + "_" + toString(a.owner);
  switch (a.buf) {
  case Buf::X: case Buf::O:
    if (a.part != RankRef::None) s += std::string("[") + toString(a.part) + "]";
    if (a.chunked) s += "[c]";
    if (a.rounded) s += "[round j]";
    if (a.engineChunk) s += "[chunk c]";
    return s;
  case Buf::S:
    if (a.region != RankRef::None) return s + "[" + toString(a.region) + "][pslot(c)]";
    return s + "[slot(" + seqText(a.part) + ")]";
  case Buf::Y:
    if (a.region != RankRef::None) return s + "[" + toString(a.region) + "][yslot(c)]";
    return s + "[yslot(c)]";
  case Buf::PK: return s + "[" + toString(a.part) + "]";
  }
  return s;
}

std::string opLine(const Op &o) { return "%" + std::to_string(o.id) + " " + opText(o) + suffix(o); }

const char *remoteMode(const Op &o) {
  if (o.kind != OpKind::Copy && o.kind != OpKind::Reduce) return nullptr;
  auto shared = [](const Access &a) { return a.buf == Buf::S || a.buf == Buf::Y; };
  if (shared(o.dst) && o.dst.owner != RankRef::R) return "remote_write";
  if (o.dst.buf == Buf::O && o.dst.owner != RankRef::R) return "remote_write"; // direct: a peer's output
  if (shared(o.src) && o.src.owner != RankRef::R) return "remote_read";
  return nullptr;
}

std::string opText(const Op &o) {
  std::string s = toString(o.kind);
  if (o.host) { // copy-engine form: a graph node or edge the host enqueues
    if (o.kind == OpKind::Copy) return "copy.engine " + accessText(o.dst) + " <- " + accessText(o.src) + eachText(o);
    if (o.sig == Sig::EDGE)
      return std::string(o.kind == OpKind::Notify ? "record " : "wait ") + toString(o.event);
    if (o.kind == OpKind::Notify)
      return "memop.write " + std::string(toString(o.sig)) + slotText(o) + " -> rank " + toString(o.target) +
             " = " + roundText(o) + eachText(o);
  }
  if (const char *m = remoteMode(o)) s += std::string(".") + m;
  switch (o.kind) {
  case OpKind::Copy: return s + " " + accessText(o.dst) + " <- " + accessText(o.src) + eachText(o);
  case OpKind::Reduce: {
    std::string src = accessText(o.src);
    if (o.hasSrcSelf) src = "(p == r ? " + accessText(o.srcSelf) + " : " + src + ")";
    if (o.step)
      return s + ".step " + accessText(o.dst) + " <- op(" + accessText(o.dst) + ", " + src + ") over " +
             toString(o.var) + " ascending (the first " + toString(o.var) + " sets " + accessText(o.dst) + ")";
    return s + " " + accessText(o.dst) + " <- op(" + src + " for " + toString(o.var) + " in " +
           toString(o.domain) + ")";
  }
  case OpKind::Arrive: {
    std::string idx = std::to_string(o.counterBase);
    if (o.counterStride) idx += " + " + std::to_string(o.counterStride) + "*" + toString(o.counterRank);
    if (pushSlot(o)) idx += " + pslot(c)";
    else if (o.slotSpace == SlotSpace::S)
      idx += " + slot(" + seqText(o.slotPart) + (o.slotOwner == RankRef::R ? "" : std::string(" of ") + toString(o.slotOwner)) + ")";
    if (o.slotSpace == SlotSpace::Y) idx += " + yslot(c)";
    return s + " counter[" + idx + "] of " + std::to_string(o.arrivals) + " ctas";
  }
  case OpKind::Notify: {
    std::string t = toString(o.target);
    return std::string(o.fence ? "fence.acq_rel.sys; " : "") + s + " " + toString(o.sig) + "[r]" + slotText(o) +
           " -> rank " + t + " = " + roundText(o) + eachText(o);
  }
  case OpKind::Wait:
    if (o.slotSpace == SlotSpace::Chunk) // a copy-engine flag: one per chunk, written by the peer
      return s + " " + toString(o.sig) + slotText(o) + " (from " + toString(o.sigSrc) + ") >= " + roundText(o) +
             eachText(o);
    return s + " " + toString(o.sig) + "[" + toString(o.sigSrc) + "]" + slotText(o) + " >= " + roundText(o) +
           eachText(o);
  case OpKind::PacketPut: return s + " " + accessText(o.dst) + " <- " + accessText(o.src) + " (full)" + eachText(o);
  case OpKind::PacketPoll: return s + " " + accessText(o.src) + " until full, then empty" + eachText(o);
  case OpKind::Reset: return s + " " + toString(o.sig) + "[*] = 0 (own flags)";
  }
  return s;
}

void print(std::ostream &os, const CollectiveIR &ir) {
  os << "collective " << ir.name << " : " << toString(ir.kind) << " (" << opName(ir.op) << ", "
     << layoutName(ir.in) << " -> " << layoutName(ir.out) << ", root " << rootName(ir.root)
     << (ir.compose ? ", compose" : "") << ") {\n";
  const Bound &b = ir.bound;
  os << "  world n = " << ir.n << ", policy " << ir.policyName << "\n";
  if (b.bound) {
    const snac::WorldConsts &k = b.knobs;
    os << "  bound: latency " << k.latencyCtas << " ctas x " << k.latencyThreads << " threads, crossover "
       << k.latencyMaxBytes << " B; throughput stage " << k.stageCtas << ", consume " << k.consumeCtas
       << ", gather " << b.gatherCtas(ir.compose) << " ctas x " << k.threads << " threads; chunk " << k.chunkBytes
       << " B; atom " << b.pipelineStages << " stages x " << b.stageBytes << " B; staging " << b.stagingBytes
       << " B/half, region " << b.regionBytes << " B, slots " << b.slots << ", ySlots " << b.ySlots
       << "; transfer " << (b.transfer == Transfer::Pull ? "pull" : "push");
    if (b.policyTransfer != b.transfer)
      os << " (policy: " << (b.policyTransfer == Transfer::Pull ? "pull" : "push") << "; " << kPushOnlyFor << ")";
    if (b.transfer == Transfer::Push)
      os << ", lanes per cta: stage " << b.stageLanes << ", others " << b.consumeLanes;
    if (b.directOn())
      os << "; direct " << b.directCtas() << " ctas x " << b.directThreads() << " threads from " << b.directMinBytes()
         << " B, copy engines from " << b.directEngineMinBytes() << " B";
    os << "\n";
  }
  // The call plan (CallPlan.h): how every call is planned, for every world
  // size (msgBytes: how the dispatch size is computed).
  if (!ir.plan.empty()) {
    os << "  plan (msgBytes = " << ir.dispatchBytes << ") {\n";
    for (const PlanOp &op : ir.plan) os << "    " << planOpText(ir, op) << "\n";
    os << "  }\n";
  }
  printProgram(os, ir.latency);
  printProgram(os, ir.throughput);
  if (ir.hasDirect()) printProgram(os, ir.direct);
  if (ir.hasEngine()) printProgram(os, ir.engine);
  if (!ir.hasDirect() && !ir.directWhyNot.empty()) os << "  // no direct program: " << ir.directWhyNot << "\n";
  os << "}\n";
}

std::string toText(const CollectiveIR &ir) {
  std::ostringstream os;
  print(os, ir);
  return os.str();
}

nlohmann::json toJson(const CollectiveIR &ir) {
  const Bound &b = ir.bound;
  nlohmann::json j = {
      {"name", ir.name}, {"kind", toString(ir.kind)}, {"op", opName(ir.op)}, {"in", layoutName(ir.in)},
      {"out", layoutName(ir.out)}, {"root", rootName(ir.root)}, {"compose", ir.compose},
      {"policy", ir.policyName}, {"n", ir.n}, {"dispatchBytes", ir.dispatchBytes},
      {"bound", {{"crossoverBytes", b.knobs.latencyMaxBytes}, {"latencyCtas", b.knobs.latencyCtas},
                 {"latencyThreads", b.knobs.latencyThreads}, {"stageCtas", b.knobs.stageCtas},
                 {"consumeCtas", b.knobs.consumeCtas}, {"gatherCtas", b.gatherCtas(ir.compose)},
                 {"threads", b.knobs.threads}, {"chunkBytes", b.knobs.chunkBytes}, {"pipelineStages", b.pipelineStages},
                 {"stageBytes", b.stageBytes}, {"stagingBytes", b.stagingBytes},
                 {"regionBytes", b.regionBytes}, {"slots", b.slots}, {"ySlots", b.ySlots},
                 {"transfer", b.transfer == Transfer::Pull ? "pull" : "push"},
                 {"policyTransfer", b.policyTransfer == Transfer::Pull ? "pull" : "push"},
                 {"stageLanes", b.stageLanes}, {"consumeLanes", b.consumeLanes},
                 {"direct", b.directOn()}, {"directMinBytes", b.directMinBytes()}, {"directCtas", b.directCtas()},
                 {"directThreads", b.directThreads()}}}};
  if (!ir.directWhyNot.empty()) j["noDirect"] = ir.directWhyNot;
  if (b.policyTransfer != b.transfer) j["bound"]["transferNote"] = kPushOnlyFor;
  j["plan"] = nlohmann::json::array();
  for (const PlanOp &op : ir.plan) j["plan"].push_back({{"id", op.id}, {"text", planOpText(ir, op)}});
  j["programs"] = nlohmann::json::array();
  for (const Program *p : programsOf(ir)) {
    nlohmann::json pj = {{"regime", toString(p->regime)}};
    if (p->engine) pj["form"] = "copy engine";
    if (p->regime == Regime::Throughput) pj["transfer"] = p->transfer == Transfer::Push ? "push" : "pull";
    for (auto &bd : p->buffers) pj["buffers"].push_back({{"name", toString(bd.buf)}, {"desc", bd.desc}});
    for (auto &s : p->signals)
      pj["signals"].push_back({{"name", toString(s.sig)}, {"base", sigBase(s.sig)}, {"from", s.producers},
                               {"to", s.consumers}, {"value", s.value}});
    for (auto &r : p->roles)
      pj["roles"].push_back({{"name", r.name}, {"ctas", r.ctas}, {"threads", r.threads}, {"lanes", r.lanes},
                             {"ctasFrom", r.ctasFrom}, {"runsOn", toString(r.runsOn)},
                             {"perWarpGroup", r.perWarpGroup}, {"body", bodyJson(r.body)}});
    j["programs"].push_back(pj);
  }
  return j;
}

} // namespace purlin::ir
