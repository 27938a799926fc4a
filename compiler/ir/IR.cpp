/// @file IR.cpp
/// @brief Names and op constructors of the SNAC IR (the kinds and their
/// classification: purlin/Collectives.h).
#include "ir/IR.h"

#include <map>
#include <utility>

namespace purlin::ir {

const char *toString(RankRef r) {
  switch (r) {
  case RankRef::None: return "-";
  case RankRef::R: return "r";
  case RankRef::P: return "p";
  case RankRef::K: return "k";
  case RankRef::Root: return "root";
  case RankRef::Prev: return "part(prev)";
  case RankRef::Next: return "r+1";
  }
  return "?";
}

const char *toString(Domain d) {
  switch (d) {
  case Domain::All: return "0..n-1";
  case Domain::Others: return "others(r)";
  case Domain::Root: return "{root}";
  case Domain::NonRoot: return "others(root)";
  case Domain::Ring: return "r+1..r-1 (mod n)";
  case Domain::RevRing: return "r-1..r+1 (mod n)";
  case Domain::RingSelf: return "r+1..r (mod n)";
  case Domain::SelfRing: return "r..r-1 (mod n)";
  }
  return "?";
}

const char *toString(Buf b) {
  switch (b) {
  case Buf::X: return "X";
  case Buf::O: return "O";
  case Buf::S: return "S";
  case Buf::Y: return "Y";
  case Buf::PK: return "PK";
  }
  return "?";
}

const char *toString(Sig s) {
  switch (s) {
  case Sig::STAGED: return "STAGED";
  case Sig::REDUCED: return "REDUCED";
  case Sig::CONSUMED: return "CONSUMED";
  case Sig::GATHERED: return "GATHERED";
  case Sig::DONE: return "DONE";
  case Sig::ARRIVED: return "ARRIVED";
  case Sig::PUT: return "PUT";
  case Sig::BACK: return "BACK";
  case Sig::E_PUT: return "E_PUT";
  case Sig::E_BACK: return "E_BACK";
  case Sig::EDGE: return "EDGE";
  }
  return "?";
}

uint32_t sigBase(Sig s) {
  switch (s) {
  case Sig::STAGED: return snac::kStagedBase;
  case Sig::REDUCED: return snac::kReducedBase;
  case Sig::CONSUMED: return snac::kConsumedBase;
  case Sig::GATHERED: return snac::kGatheredBase;
  case Sig::DONE: return snac::kDoneBase;
  case Sig::ARRIVED: return snac::kArrivedBase;
  case Sig::PUT: return snac::kPutBase;
  case Sig::BACK: return snac::kBackBase;
  case Sig::E_PUT: return snac::kEnginePutBase;
  case Sig::E_BACK: return snac::kEngineBackBase;
  case Sig::EDGE: return kEdgeBase;
  }
  return 0;
}

const char *toString(Cond c) {
  switch (c) {
  case Cond::Always: return "";
  case Cond::HasPrev: return "if prev(slot) exists";
  case Cond::HasNext: return "if next(slot) exists";
  case Cond::FirstOfChunk: return "if m == 0";
  case Cond::InRound: return "if j < rounds";
  case Cond::HasRounds: return "if rounds > 0";
  case Cond::NotSelf: return "if p != r";
  case Cond::NonEmpty: return "if not empty";
  }
  return "?";
}

const char *toString(OpKind k) {
  switch (k) {
  case OpKind::Copy: return "copy";
  case OpKind::Reduce: return "reduce";
  case OpKind::Arrive: return "arrive.acq_rel";
  case OpKind::Notify: return "notify.release";
  case OpKind::Wait: return "wait.acquire";
  case OpKind::PacketPut: return "packet.put";
  case OpKind::PacketPoll: return "packet.poll";
  case OpKind::Reset: return "reset";
  }
  return "?";
}

const char *toString(RunsOn r) {
  switch (r) {
  case RunsOn::All: return "all ranks";
  case RunsOn::Root: return "root";
  case RunsOn::NonRoot: return "ranks != root";
  }
  return "?";
}

const char *toString(Stream s) { return s == Stream::Stream ? "stream" : "branch"; }

const char *toString(Event e) { return e == Event::Fork ? "fork" : e == Event::Join ? "join" : "chunk[c]"; }

const char *toString(Regime r) {
  return r == Regime::Latency ? "latency" : r == Regime::Throughput ? "throughput" : "direct";
}

const char *programName(const Program &p) { return p.engine ? "direct (copy engine)" : toString(p.regime); }

Op Op::copy(Access d, Access s) {
  Op o;
  o.kind = OpKind::Copy;
  o.dst = d;
  o.src = s;
  return o;
}

Op Op::reduce(Access d, Access s, RankRef v, Domain dom) {
  Op o;
  o.kind = OpKind::Reduce;
  o.dst = d;
  o.src = s;
  o.var = v;
  o.domain = dom;
  return o;
}

Op Op::notify(Sig s, SlotSpace sp, RankRef slotPart, RankRef target) {
  Op o;
  o.kind = OpKind::Notify;
  o.sig = s;
  o.slotSpace = sp;
  o.slotPart = slotPart;
  o.target = target;
  o.sigSrc = RankRef::R;
  o.round = s == Sig::DONE ? RoundOf::Zero : RoundOf::Cur;
  // Data announced (STAGED/REDUCED) sit in the notifier's memory; freed
  // slots (CONSUMED/GATHERED) are the receiver's.
  o.slotOwner = (s == Sig::STAGED || s == Sig::REDUCED) ? RankRef::R : target;
  return o;
}

Op Op::wait(Sig s, SlotSpace sp, RankRef slotPart, RankRef src, RoundOf round) {
  Op o;
  o.kind = OpKind::Wait;
  o.sig = s;
  o.slotSpace = sp;
  o.slotPart = slotPart;
  o.sigSrc = src;
  o.round = round;
  o.slotOwner = (s == Sig::STAGED || s == Sig::REDUCED) ? src : RankRef::R;
  return o;
}

Op Op::arrive(int base, int stride, SlotSpace sp, RankRef slotPart) {
  Op o;
  o.kind = OpKind::Arrive;
  o.counterBase = base;
  o.counterStride = stride;
  o.slotSpace = sp;
  o.slotPart = slotPart;
  return o;
}

Op Op::put(Access d, Access s) {
  Op o;
  o.kind = OpKind::PacketPut;
  o.dst = d;
  o.src = s;
  return o;
}

Op Op::poll(Access s) {
  Op o;
  o.kind = OpKind::PacketPoll;
  o.src = s;
  return o;
}

Op Op::reset(Sig s) {
  Op o;
  o.kind = OpKind::Reset;
  o.sig = s;
  return o;
}

Stmt Stmt::kernelNode(std::string name, Stream on, bool wide, std::vector<Stmt> body) {
  Stmt s;
  s.isLoop = true;
  s.kernel = std::move(name);
  s.stream = on;
  s.wide = wide;
  forEachOp(body, [&](Op &o) { o.stream = on; });
  s.body = std::move(body);
  return s;
}

Stmt Stmt::loop(RankRef v, Domain d, bool chunks, bool chunkMajor, std::vector<Stmt> body) {
  Stmt s;
  s.isLoop = true;
  s.var = v;
  s.domain = d;
  s.chunks = chunks;
  s.chunkMajor = chunkMajor;
  s.body = std::move(body);
  return s;
}

int pushSlotCap(const Program &p) {
  bool counters = false;
  for (auto &r : p.roles)
    forEachOp(r.body, [&](const Op &o) { counters |= o.kind == OpKind::Arrive && o.counterStride == kPushSlotStride; });
  return counters ? kPushSlotStride : kMaxSlots;
}

std::vector<const Program *> programsOf(const CollectiveIR &ir) {
  std::vector<const Program *> v = {&ir.latency, &ir.throughput};
  if (ir.hasDirect()) v.push_back(&ir.direct);
  if (ir.hasEngine()) v.push_back(&ir.engine);
  return v;
}
std::vector<Program *> programsOf(CollectiveIR &ir) {
  std::vector<Program *> v = {&ir.latency, &ir.throughput};
  if (ir.hasDirect()) v.push_back(&ir.direct);
  if (ir.hasEngine()) v.push_back(&ir.engine);
  return v;
}

void numberOps(CollectiveIR &ir) {
  // The lowering decisions name ops by id (Op::reusesLoadOf, fusedInto):
  // they follow their ops to the new ids. Ids are unique within the
  // collective, so a program's old id maps to one op.
  std::map<std::pair<const Program *, int>, int> renamed;
  int next = 0;
  for (Program *p : programsOf(ir))
    for (auto &role : p->roles)
      forEachOp(role.body, [&](Op &o) {
        renamed[{p, o.id}] = next;
        o.id = next++;
      });
  for (Program *p : programsOf(ir))
    for (auto &role : p->roles)
      forEachOp(role.body, [&](Op &o) {
        for (int *ref : {&o.reusesLoadOf, &o.fusedInto})
          if (*ref >= 0) {
            const auto it = renamed.find({p, *ref});
            *ref = it == renamed.end() ? -1 : it->second;
          }
      });
}

} // namespace purlin::ir
