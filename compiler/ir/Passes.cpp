/// @file Passes.cpp
/// @brief bindPolicy, insertSlotReuseGuards and insertDoneAcks.
#include "ir/Passes.h"
#include "ir/DerivePush.h"
#include "ir/RuntimePlan.h"

#include <algorithm>

namespace purlin::ir {
namespace {

void need(bool ok, const CollectiveIR &ir, const std::string &field, const std::string &what) {
  if (!ok)
    throw IRError{"policy '" + ir.policyName + "', world size " + std::to_string(ir.n) + ": " + field +
                  " " + what};
}


/// Inserts `ins` before (or after) the first statement of `body` matching `pred`,
/// recursing into loops; returns true when inserted.
template <class Pred>
bool insertAt(std::vector<Stmt> &body, Pred pred, const std::vector<Stmt> &ins, bool after) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      if (insertAt(body[i].body, pred, ins, after)) return true;
      continue;
    }
    if (!pred(body[i].op)) continue;
    size_t at = after ? i + 1 : i;
    body.insert(body.begin() + long(at), ins.begin(), ins.end());
    return true;
  }
  return false;
}

/// After each read of a staging/Y slot in `body`, frees the slot when reused.
void freeAfterReads(std::vector<Stmt> &body, Buf space) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      freeAfterReads(body[i].body, space);
      continue;
    }
    const Op rd = body[i].op;
    if ((rd.kind != OpKind::Copy && rd.kind != OpKind::Reduce) || rd.src.buf != space) continue;
    bool y = space == Buf::Y;
    Sig sig = y ? Sig::GATHERED : Sig::CONSUMED;
    RankRef owner = rd.src.owner;
    Op n = Op::notify(sig, y ? SlotSpace::Y : SlotSpace::S, rd.src.part, owner)
               .when(Cond::HasNext)
               .byLast()
               .on(rd.onlyOn)
               .why(y ? "Y slot used again: free it" : "slot used again: free it");
    if (rd.kind == OpKind::Reduce) n.each(rd.var, rd.hasSrcSelf ? Domain::Others : rd.domain);
    size_t at = i + 1;
    if (at < body.size() && !body[at].isLoop && body[at].op.kind == OpKind::Arrive) {
      body.insert(body.begin() + long(at + 1), Stmt::of(n));
    } else {
      Op a = y ? Op::arrive(kGatherCounterBase, kMaxYSlots, SlotSpace::Y, RankRef::None)
               : Op::arrive(kConsumeCounterBase, kMaxSlots, SlotSpace::S, rd.src.part);
      a.slotOwner = owner;
      a.counterRank = owner;
      if (rd.kind == OpKind::Reduce) {
        // A reduction reads every source's slot of chunk c; its one counter
        // per chunk is indexed by the slot rank r+1 stages it in (the
        // runtime's): the next use of that index is a chunk staged in that
        // slot again, which waits for this use's CONSUMED (sent after the reset).
        a = Op::arrive(kConsumeCounterBase, 0, SlotSpace::S, rd.src.part);
        a.slotOwner = RankRef::Next;
      }
      a.onlyOn = rd.onlyOn;
      body.insert(body.begin() + long(at), {Stmt::of(a), Stmt::of(n)});
    }
    i = at + 1;
  }
}

bool readsRemote(const Op &o) {
  if (o.kind == OpKind::PacketPoll) return true;
  if (o.kind == OpKind::Wait && (o.sig == Sig::STAGED || o.sig == Sig::REDUCED)) return true;
  return false;
}

bool roleReads(const Role &r) {
  bool any = false;
  forEachOp(r.body, [&](const Op &o) { any |= readsRemote(o); });
  return any;
}

} // namespace

void bindPolicy(CollectiveIR &ir, const Policy &policy) {
  const WorldPolicy &w = policy.forWorld(ir.n);
  Bound &b = ir.bound;
  b.knobs = worldConsts(w, ir.kind);
  const snac::WorldConsts &k = b.knobs;
  b.policyTransfer = w.throughput.transfer;
  b.transfer = boundTransfer(ir.kind, w.throughput.transfer);
  b.pipelineStages = policy.atom.pipelineStages;
  b.stageBytes = policy.atom.stageBytes;
  b.stagingBytes = policy.stagingBytes;
  std::string wp = "world[" + std::to_string(ir.n) + "]";
  need(k.latencyCtas > 0 && k.latencyThreads > 0, ir, wp + ".latency.ctas/threads", "must be positive");
  need(k.stageCtas > 0, ir, wp + ".throughput.stageCtas", "must be positive");
  need(k.consumeCtas > 0, ir, wp + ".throughput.consumeCtas", "must be positive");
  need(!isCompose(ir.kind) || k.gatherCtas > 0, ir, wp + ".throughput.gatherCtas",
       "must be positive for a composition");
  need(k.threads > 0, ir, wp + ".throughput.threads", "must be positive");
  need(k.chunkBytes >= 16 && k.chunkBytes % 16 == 0, ir, wp + ".throughput.chunkBytes",
       "must be a positive multiple of 16");
  need(b.transfer == ir.throughput.transfer, ir, wp + ".throughput.transfer",
       std::string("is ") + (b.transfer == Transfer::Push ? "push" : "pull") +
           " but the throughput program was derived for the other transfer (derive with the policy's transfer)");
  b.regionBytes = snac::stagingRegionBytes(isCompose(ir.kind), b.stagingBytes);  // the runtime's rule (plan.h)
  need(b.regionBytes >= k.chunkBytes, ir, "stagingBytes",
       "(" + std::to_string(b.stagingBytes) + ") must hold at least one chunk per region");
  snac::stagingSlots(b.regionBytes, k.chunkBytes, isCompose(ir.kind), kMaxSlots, b.slots, b.ySlots);
  if (b.transfer == Transfer::Push) {
    // Slots per source region (n-1 regions of S, and of Y for AllReduce).
    const uint64_t srcRegion = snac::pushSourceRegionBytes(isCompose(ir.kind), ir.n, b.stagingBytes);
    need(srcRegion / k.chunkBytes >= 1, ir, "stagingBytes",
         "(" + std::to_string(b.stagingBytes) + ") must hold at least one chunk per source region (push)");
    snac::stagingSlots(srcRegion, k.chunkBytes, isCompose(ir.kind), pushSlotCap(ir.throughput), b.slots, b.ySlots);
  }
  // Direct numbers: 0 = the runtime's default, as in WorldConsts (runtime plan.h).
  if (b.directOn()) {
    need(b.directCtas() >= 1 && b.directCtas() <= kMaxDirectCtas, ir, wp + ".direct.ctas",
         "must be in [1, " + std::to_string(kMaxDirectCtas) + "] (one signal per CTA index)");
    need(b.directThreads() > 0, ir, wp + ".direct.threads", "must be positive");
  }
  if (!b.directOn() && ir.hasDirect()) {
    ir.direct = Program{};
    ir.engine = Program{};
    ir.directWhyNot = "off in the policy (" + wp + ".direct = false)";
  }
  b.bound = true;

  for (auto &role : ir.latency.roles) role.ctas = k.latencyCtas, role.threads = k.latencyThreads;
  if (b.transfer == Transfer::Push) {
    b.stageLanes = snac::pushLanes(k.lanes, snac::kDefaultLanes, k.threads, b.pipelineStages);
    b.consumeLanes = snac::pushLanes(k.consumeLanes, snac::kDefaultConsumeLanes, k.threads, b.pipelineStages);
  }
  for (auto &role : ir.throughput.roles) {
    role.threads = k.threads;
    role.ctas = role.name == "stage" ? k.stageCtas : role.name == "gather" ? b.gatherCtas(isCompose(ir.kind)) : k.consumeCtas;
    role.lanes = role.name == "stage" ? b.stageLanes : b.consumeLanes;
  }
  for (auto &role : ir.direct.roles) role.ctas = b.directCtas(), role.threads = b.directThreads();
  // The copy-engine form's reduce kernels: direct.ctas CTAs (plan.h planDirect).
  for (auto &role : ir.engine.roles) role.ctas = b.directCtas(), role.threads = kEngineReduceThreads;
  for (Program *p : {&ir.latency, &ir.throughput})
    for (auto &role : p->roles)
      forEachOp(role.body, [&](Op &o) {
        if (o.kind == OpKind::Arrive && o.counterBase != kDoneCounter) o.arrivals = role.ctas;
      });
}

void insertSlotReuseGuards(CollectiveIR &ir) {
  if (ir.throughput.transfer == Transfer::Push) {
    insertPushSlotReuseGuards(ir.throughput);
    for (auto &role : ir.throughput.roles)
      forEachOp(role.body, [&](Op &o) {
        if (o.kind == OpKind::Arrive && o.counterBase != kDoneCounter) o.arrivals = role.ctas;
      });
    numberOps(ir);
    return;
  }
  Kind k = ir.kind;
  bool packedIn = hasPackedInput(k);
  for (auto &role : ir.throughput.roles) {
    if (role.name == "stage") {
      Op w = Op::wait(Sig::CONSUMED, SlotSpace::S, packedIn ? RankRef::None : RankRef::K, RankRef::Prev,
                      RoundOf::Prev)
                 .when(Cond::HasPrev)
                 .why("slot reuse: its previous use was read");
      if (packedIn) {
        if (k == Kind::Gather) w.sigSrc = RankRef::Root;
        else w.sigSrc = RankRef::P, w.each(RankRef::P, Domain::Others);
      }
      forEachOp(role.body, [&](const Op &o) {
        if (o.kind == OpKind::Copy && o.dst.buf == Buf::S) w.onlyOn = o.onlyOn;
      });
      insertAt(role.body, [](const Op &o) { return o.kind == OpKind::Copy && o.dst.buf == Buf::S; },
               {Stmt::of(w)}, false);
      continue;
    }
    freeAfterReads(role.body, Buf::S);
    freeAfterReads(role.body, Buf::Y);
    // Writers of Y wait until every gather reader freed the slot's previous use.
    Op w = Op::wait(Sig::GATHERED, SlotSpace::Y, RankRef::None, RankRef::P, RoundOf::Prev)
               .when(Cond::HasPrev)
               .why("Y slot reuse: its previous use was gathered");
    if (k == Kind::Reduce) w.sigSrc = RankRef::Root;
    else w.each(RankRef::P, Domain::All);
    insertAt(role.body,
             [](const Op &o) { return (o.kind == OpKind::Copy || o.kind == OpKind::Reduce) && o.dst.buf == Buf::Y; },
             {Stmt::of(w)}, false);
  }
  for (auto &role : ir.throughput.roles)
    forEachOp(role.body, [&](Op &o) {
      if (o.kind == OpKind::Arrive && o.counterBase != kDoneCounter) o.arrivals = role.ctas;
    });
  numberOps(ir);
}

void insertDoneAcks(CollectiveIR &ir) {
  if (ir.root == Root::None) return;
  bool producerRoot = ir.root == Root::Producer;
  RunsOn readers = producerRoot ? RunsOn::NonRoot : RunsOn::Root;
  RunsOn producers = producerRoot ? RunsOn::Root : RunsOn::NonRoot;
  for (Program *p : {&ir.latency, &ir.throughput}) {
    int arrivals = 0;
    for (auto &role : p->roles)
      if (roleReads(role)) arrivals += role.ctas;
    for (auto &role : p->roles) {
      if (!roleReads(role)) continue;
      Op a = Op::arrive(kDoneCounter, 0, SlotSpace::None, RankRef::None).on(readers);
      a.arrivals = arrivals;
      a.why("every reading CTA of this rank");
      Op n = Op::notify(Sig::DONE, SlotSpace::None, RankRef::None, producerRoot ? RankRef::Root : RankRef::K)
                 .byLast()
                 .on(readers)
                 .why("after the last read: producers may reuse their half");
      if (!producerRoot) n.each(RankRef::K, Domain::NonRoot);
      n.slotOwner = RankRef::None;
      role.body.push_back(Stmt::of(a));
      role.body.push_back(Stmt::of(n));
    }
    Role &prodRole = p->roles.front(); // stage (throughput) or latency
    Op w = Op::wait(Sig::DONE, SlotSpace::None, RankRef::None, producerRoot ? RankRef::P : RankRef::Root,
                    RoundOf::Zero)
               .on(producers)
               .why("readers are done before the kernel ends");
    if (producerRoot) w.each(RankRef::P, Domain::NonRoot);
    w.slotOwner = RankRef::None;
    prodRole.body.push_back(Stmt::of(w));
  }
  numberOps(ir);
}

} // namespace purlin::ir
