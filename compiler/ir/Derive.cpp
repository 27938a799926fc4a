/// @file Derive.cpp
/// @brief derive(): the SNAC rules of the paper, one function per program
/// shape. Input layout decides who is notified (packed: every consumer;
/// scattered: the partition's owner); output layout and consume op decide
/// how consumers pull (packed+reduce: reduce over all sources; scattered /
/// transposed + copy: copy each source into its partition); Root restricts
/// producers or consumers; compose adds G's gather role reading F's Y.
#include "ir/Derive.h"
#include "ir/DeriveDirect.h"
#include "ir/DerivePush.h"

namespace purlin::ir {
namespace {

Access acc(Buf b, RankRef owner, RankRef part = RankRef::None, bool chunked = false) {
  Access a;
  a.buf = b;
  a.owner = owner;
  a.part = part;
  a.chunked = chunked;
  return a;
}
/// Slot of the stage sequence seq(part, c) in owner's staging.
Access stagingSlot(RankRef owner, RankRef part) { return acc(Buf::S, owner, part, true); }
Access ySlot(RankRef owner) { return acc(Buf::Y, owner, RankRef::None, true); }
Access packets(RankRef owner, RankRef src, RankRef shapePart) {
  Access a = acc(Buf::PK, owner, src);
  a.shapePart = shapePart;
  return a;
}


/// Stage role: copy each contributed chunk into staging, last arriver
/// notifies. The rank's own partition is never staged: copy collectives
/// copy it input -> output at the start of their consume role (Scatter's
/// root here, after staging, since its consume role runs on the others).
Role stageRole(Kind k) {
  Role role;
  role.name = "stage";
  role.ctasFrom = "throughput.stageCtas";
  std::vector<Stmt> body;
  auto R = RankRef::R;
  if (hasPackedInput(k)) {
    RunsOn on = k == Kind::Gather ? RunsOn::NonRoot : RunsOn::All;
    body.push_back(Stmt::of(Op::copy(stagingSlot(R, RankRef::None), acc(Buf::X, R, RankRef::None, true)).on(on)));
    body.push_back(Stmt::of(Op::arrive(kStageCounterBase, 0, SlotSpace::S, RankRef::None).on(on)));
    Op n = Op::notify(Sig::STAGED, SlotSpace::S, RankRef::None, RankRef::K).byLast().on(on);
    if (k == Kind::Gather) n.target = RankRef::Root, n.slotOwner = R, n.why("input packed, consumer root: notify the root");
    else n.each(RankRef::K, Domain::Others).why("input packed: notify every consumer");
    body.push_back(Stmt::of(n));
    role.body.push_back(Stmt::loop(RankRef::None, Domain::All, true, false, std::move(body)));
    return role; // the own contribution is copied by the consume role
  }
  role.runsOn = isRootProducer(k) ? RunsOn::Root : RunsOn::All;
  body.push_back(Stmt::of(Op::copy(stagingSlot(R, RankRef::K), acc(Buf::X, R, RankRef::K, true))));
  body.push_back(Stmt::of(Op::arrive(kStageCounterBase, 0, SlotSpace::S, RankRef::K)));
  body.push_back(Stmt::of(Op::notify(Sig::STAGED, SlotSpace::S, RankRef::K, RankRef::K)
                              .byLast()
                              .why("input scattered: notify partition k's owner only")));
  // Chunk-major over k = r+1, ..., r-1: chunk c of every partition before
  // chunk c+1, so every consumer progresses at once (a partition-major
  // order deadlocks against chunk-major gathers once slots are reused).
  role.body.push_back(Stmt::loop(RankRef::K, Domain::Ring, true, true, std::move(body)));
  if (k == Kind::Scatter)
    role.body.push_back(Stmt::of(Op::copy(acc(Buf::O, R), acc(Buf::X, R, R)).why("root's own partition, local")));
  return role;
}

Op stagedWait(RankRef src, RankRef part) { return Op::wait(Sig::STAGED, SlotSpace::S, part, src, RoundOf::Cur); }

/// Consumer role of a leaf or of a compose's F.
Role consumeRole(Kind k) {
  Role role;
  role.ctasFrom = "throughput.consumeCtas";
  std::vector<Stmt> body;
  if (reduces(k)) {
    role.name = "reduce";
    body.push_back(Stmt::of(stagedWait(RankRef::P, RankRef::R).each(RankRef::P, Domain::Others)));
    Access dst = isCompose(k) ? ySlot(RankRef::R) : acc(Buf::O, RankRef::R, RankRef::None, true);
    Op red = Op::reduce(dst, stagingSlot(RankRef::P, RankRef::R), RankRef::P, Domain::All)
                 .why("own contribution from X_r; ascending rank order, fp32 accumulation");
    red.srcSelf = acc(Buf::X, RankRef::R, RankRef::R, true);
    red.hasSrcSelf = true;
    body.push_back(Stmt::of(red));
    if (isCompose(k)) {
      // Indexed by the slot that rank r+1 stages chunk c of partition r in
      // (the runtime's counter; insertSlotReuseGuards uses it for a leaf
      // reduction too): the counter's next use is a chunk staged in that
      // slot again, which waits for this use's CONSUMED, sent after the reset.
      body.push_back(Stmt::of(Op::arrive(kConsumeCounterBase, 0, SlotSpace::S, RankRef::R)));
      body.back().op.slotOwner = RankRef::Next;
      Op n = Op::notify(Sig::REDUCED, SlotSpace::Y, RankRef::None, RankRef::K).byLast();
      if (k == Kind::Reduce) n.target = RankRef::Root, n.why("last reducer: G's consumer is the root");
      else n.each(RankRef::K, Domain::All).why("last reducer publishes Y_r[c] to every rank");
      body.push_back(Stmt::of(n));
    }
    role.body.push_back(Stmt::loop(RankRef::None, Domain::All, true, false, std::move(body)));
    return role;
  }
  role.name = "consume";
  if (isRootProducer(k)) {
    // Only the root produced; it copies its own partition from its input.
    Access dst = k == Kind::Broadcast ? ySlot(RankRef::R) : acc(Buf::O, RankRef::R, RankRef::None, true);
    if (k == Kind::Scatter) role.runsOn = RunsOn::NonRoot;
    else
      body.push_back(Stmt::of(Op::copy(dst, acc(Buf::X, RankRef::R, RankRef::R, true)).on(RunsOn::Root).why("own partition, local")));
    body.push_back(Stmt::of(stagedWait(RankRef::Root, RankRef::R).on(RunsOn::NonRoot)));
    body.push_back(Stmt::of(Op::copy(dst, stagingSlot(RankRef::Root, RankRef::R)).on(RunsOn::NonRoot)));
    if (k == Kind::Broadcast) {
      body.push_back(Stmt::of(Op::arrive(kConsumeCounterBase, kMaxSlots, SlotSpace::Y, RankRef::None)));
      body.back().op.counterRank = RankRef::R;
      body.push_back(Stmt::of(Op::notify(Sig::REDUCED, SlotSpace::Y, RankRef::None, RankRef::K)
                                  .each(RankRef::K, Domain::All)
                                  .byLast()
                                  .why("F's result Y_r[c] ready for every rank's gather")));
    }
    role.body.push_back(Stmt::loop(RankRef::None, Domain::All, true, false, std::move(body)));
    return role;
  }
  // AllGather / Gather (packed input) and AllToAll (scattered input): first
  // the own contribution input -> output (local work while the first
  // chunks are staged), then copy each source's chunk into its output
  // partition, sources r-1, r-2, ... (mod n) for each chunk.
  bool packed = hasPackedInput(k);
  RankRef part = packed ? RankRef::None : RankRef::R;
  if (k == Kind::Gather) role.runsOn = RunsOn::Root;
  role.body.push_back(Stmt::of(Op::copy(acc(Buf::O, RankRef::R, RankRef::R), acc(Buf::X, RankRef::R, part))
                                   .why("own contribution, local, before the pulls")));
  body.push_back(Stmt::of(stagedWait(RankRef::P, part)));
  body.push_back(Stmt::of(Op::copy(acc(Buf::O, RankRef::R, RankRef::P, true), stagingSlot(RankRef::P, part))));
  role.body.push_back(Stmt::loop(RankRef::P, Domain::RevRing, true, true, std::move(body)));
  return role;
}

/// G's role of a compose: copy every rank's Y chunk into output partition k.
Role gatherRole(Kind k) {
  Role role;
  role.name = "gather";
  role.ctasFrom = "throughput.gatherCtas";
  role.runsOn = k == Kind::Reduce ? RunsOn::Root : RunsOn::All;
  std::vector<Stmt> body;
  body.push_back(Stmt::of(Op::wait(Sig::REDUCED, SlotSpace::Y, RankRef::None, RankRef::K, RoundOf::Cur)));
  body.push_back(Stmt::of(Op::copy(acc(Buf::O, RankRef::R, RankRef::K, true), ySlot(RankRef::K)).why("F's result read in place")));
  // Partitions r, r+1, ..., r-1 (mod n): the own one first.
  role.body.push_back(Stmt::loop(RankRef::K, Domain::SelfRing, true, true, std::move(body)));
  return role;
}

Program throughput(Kind k) {
  Program p;
  p.regime = Regime::Throughput;
  p.roles.push_back(stageRole(k));
  p.roles.push_back(consumeRole(k));
  if (isCompose(k)) p.roles.push_back(gatherRole(k));
  return p;
}

/// Latency program: push packets to consumers, poll, copy or reduce. The
/// role's body is one packet group's work (Role::perWarpGroup). Peer orders
/// are the runtime's: pushes go to r+1, r+2, ... (mod n); copy collectives
/// poll r-1, r-2, ... (the source whose push reaches r first in its order);
/// reductions walk 0..n-1 in ascending order, polling every p != r and
/// accumulating as they go (reduce.step), so the result's rank order is
/// fixed and each packet is combined as soon as it is seen.
Program latency(Kind k) {
  Program prog;
  prog.regime = Regime::Latency;
  Role role;
  role.name = "latency";
  role.ctasFrom = "latency.ctas";
  role.perWarpGroup = true;
  auto &b = role.body;
  auto R = RankRef::R, P = RankRef::P, K = RankRef::K, Root = RankRef::Root, None = RankRef::None;
  switch (k) {
  case Kind::AllGather:
  case Kind::AllGatherV:
  case Kind::AllToAll:
  case Kind::AllToAllV: {
    bool packed = k == Kind::AllGather || k == Kind::AllGatherV;
    RankRef part = packed ? None : K;
    b.push_back(Stmt::of(Op::put(packets(K, R, part), acc(Buf::X, R, part)).each(K, Domain::Ring)));
    b.push_back(Stmt::of(Op::copy(acc(Buf::O, R, R), acc(Buf::X, R, packed ? None : R)).why("own contribution, local")));
    std::vector<Stmt> body;
    body.push_back(Stmt::of(Op::poll(packets(R, P, packed ? None : R))));
    body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, P), packets(R, P, packed ? None : R))));
    b.push_back(Stmt::loop(P, Domain::RevRing, false, false, std::move(body)));
    break;
  }
  case Kind::Gather: {
    b.push_back(Stmt::of(Op::put(packets(Root, R, None), acc(Buf::X, R)).on(RunsOn::NonRoot)));
    b.push_back(Stmt::of(Op::copy(acc(Buf::O, R, R), acc(Buf::X, R)).on(RunsOn::Root).why("own contribution, local")));
    std::vector<Stmt> body;
    body.push_back(Stmt::of(Op::poll(packets(R, P, None)).on(RunsOn::Root)));
    body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, P), packets(R, P, None)).on(RunsOn::Root)));
    b.push_back(Stmt::loop(P, Domain::RevRing, false, false, std::move(body)));
    break;
  }
  case Kind::Scatter:
  case Kind::Broadcast: {
    RankRef part = k == Kind::Scatter ? K : None;
    RankRef own = k == Kind::Scatter ? R : None;
    b.push_back(Stmt::of(Op::put(packets(K, R, part), acc(Buf::X, R, part)).each(K, Domain::Ring).on(RunsOn::Root)));
    b.push_back(Stmt::of(Op::copy(acc(Buf::O, R), acc(Buf::X, R, own)).on(RunsOn::Root).why("root's own data, local")));
    b.push_back(Stmt::of(Op::poll(packets(R, Root, own)).on(RunsOn::NonRoot)));
    b.push_back(Stmt::of(Op::copy(acc(Buf::O, R), packets(R, Root, own)).on(RunsOn::NonRoot)));
    break;
  }
  case Kind::ReduceScatter:
  case Kind::ReduceScatterV:
  case Kind::AllReduce:
  case Kind::Reduce: {
    bool rs = k == Kind::ReduceScatter || k == Kind::ReduceScatterV;
    RankRef part = rs ? K : None;
    RankRef own = rs ? R : None;
    RunsOn consumer = k == Kind::Reduce ? RunsOn::Root : RunsOn::All;
    if (k == Kind::Reduce)
      b.push_back(Stmt::of(Op::put(packets(Root, R, None), acc(Buf::X, R)).on(RunsOn::NonRoot)));
    else
      b.push_back(Stmt::of(Op::put(packets(K, R, part), acc(Buf::X, R, part)).each(K, Domain::Ring)));
    std::vector<Stmt> body;
    body.push_back(Stmt::of(Op::poll(packets(R, P, own)).when(Cond::NotSelf).on(consumer)));
    Op red = Op::reduce(acc(Buf::O, R), packets(R, P, own), P, Domain::All).stepwise().on(consumer);
    red.srcSelf = acc(Buf::X, R, own);
    red.hasSrcSelf = true;
    red.why("p == r reads X_r directly; ascending rank order, fp32 accumulation");
    body.push_back(Stmt::of(red));
    b.push_back(Stmt::loop(P, Domain::All, false, false, std::move(body)));
    break;
  }
  default:
    break;
  }
  prog.roles.push_back(std::move(role));
  return prog;
}

std::string dispatchOf(Kind k) {
  switch (k) {
  case Kind::AllReduce: case Kind::Broadcast: case Kind::Reduce: return "count*E";
  case Kind::AllGatherV: case Kind::ReduceScatterV: return "sum(counts)*E";
  case Kind::AllToAllV: return "n*maxCount*E";
  default: return "n*count*E";
  }
}

/// Buffers and signals of the push throughput program.
void declarePush(CollectiveIR &ir, Program &p) {
  p.buffers.push_back({Buf::S, "staging[e&1] of each rank: one region per source s != r (what s pushes to r), `slots` slots of `chunk` bytes each; pslot(c) = c mod slots, pround(c) = c div slots; written remotely by s, read locally"});
  if (ir.kind == Kind::AllReduce)
    p.buffers.push_back({Buf::Y, "Y[e&1] of each rank (after the S regions): one region per source k != r holding k's reduced partition, `ySlots` slots; yslot = c mod ySlots, yround = c div ySlots; written remotely by k, read locally"});
  p.signals.push_back({Sig::STAGED, "every rank (stage role, after the chunk's remote writes and fence.acq_rel.sys)", "the destination k (its region r)", "sig(e, pround(c))"});
  if (ir.kind == Kind::AllReduce)
    p.signals.push_back({Sig::REDUCED, "partition owner (reduce role, after the forward's remote writes and fence.acq_rel.sys)", "every other rank (gather role)", "sig(e, yround(c))"});
  p.signals.push_back({Sig::CONSUMED, "the region's owner (after its read), when the slot is used again", "the region's source (stage role)", "sig(e, pround)"});
  if (ir.kind == Kind::AllReduce)
    p.signals.push_back({Sig::GATHERED, "gather role (after its read), when the Y slot is used again", "the Y region's source (reduce role)", "sig(e, yround)"});
}

void declare(CollectiveIR &ir, Program &p) {
  Kind k = ir.kind;
  auto lay = [](Layout l) -> std::string { return dslName(l); };
  p.buffers.push_back({Buf::X, "input, " + lay(ir.in) + ", user memory of each rank (local reads only)"});
  p.buffers.push_back({Buf::O, "output, " + lay(ir.out) + ", user memory of each rank (local writes only)"});
  bool rooted = isRootedKind(k);
  if (p.regime == Regime::Latency) {
    p.buffers.push_back({Buf::PK, "packets[e&1] of each rank: region per source rank, full/empty packet groups (496 payload bytes and a header per 512)"});
    p.signals.push_back({Sig::DONE, rooted ? "readers" : "-", rooted ? "producers" : "-", "sig(e,0)"});
    if (!rooted) p.signals.pop_back();
    return;
  }
  if (p.transfer == Transfer::Push) {
    declarePush(ir, p);
    return;
  }
  p.buffers.push_back({Buf::S, "staging[e&1] of each rank: `slots` slots of `chunk` bytes; seq(k,c) = c*(n-1) + (k-r-1 mod n), own partition not staged (packed input: seq(c) = c), slot = seq mod slots, round = seq div slots"});
  if (isCompose(k)) p.buffers.push_back({Buf::Y, "intermediate Y[e&1] of each rank (staging half + region): `ySlots` slots; yslot = c mod ySlots, round = c div ySlots"});
  std::string prod = isRootProducer(k) ? "root" : (k == Kind::Gather ? "ranks != root" : "all ranks");
  std::string cons = hasPackedInput(k) ? (k == Kind::Gather ? "root" : "all ranks") : "owner k of partition k";
  p.signals.push_back({Sig::STAGED, prod + " (stage role, last arriver)", cons, "sig(e, round(seq))"});
  if (isCompose(k)) p.signals.push_back({Sig::REDUCED, "partition owner (F's last consumer CTA)", k == Kind::Reduce ? "root (gather role)" : "all ranks (gather role)", "sig(e, yround(c))"});
  p.signals.push_back({Sig::CONSUMED, "consumers of a slot (last arriver), when the slot is used again", "the slot's owner (stage role)", "sig(e, round)"});
  if (isCompose(k)) p.signals.push_back({Sig::GATHERED, "gather readers of a Y slot, when used again", "Y's owner (F's consumer role)", "sig(e, yround)"});
  if (rooted) p.signals.push_back({Sig::DONE, "readers (last reading CTA)", "producers whose memory they read", "sig(e,0)"});
}

} // namespace

CollectiveIR derive(const Collective &c, int n, Transfer transfer) {
  if (n < kMinWorld || n > kMaxWorld)
    throw IRError{"world size " + std::to_string(n) + " out of range (2..8)"};
  CollectiveIR ir;
  ir.name = c.name;
  ir.kind = classify(c);
  if (ir.kind == Kind::Unknown)
    throw IRError{"'" + c.name + "': no SNAC derivation for this (op, input layout, output layout, root)" +
                  std::string(c.isCompose ? " composition" : "") +
                  "; supported: the eleven collectives of docs/snac-ir.md"};
  ir.op = c.op;
  ir.in = c.in;
  ir.out = c.out;
  ir.root = c.root;
  ir.compose = c.isCompose;
  if (c.isCompose) {
    ir.op = c.children[0]->op;
    ir.in = c.children[0]->in;
    ir.out = c.children[1]->out;
    ir.root = c.children[0]->root != Root::None ? c.children[0]->root : c.children[1]->root;
  }
  ir.policyName = c.policy;
  ir.n = n;
  ir.dispatchBytes = dispatchOf(ir.kind);
  ir.latency = latency(ir.kind);
  // Push is a preference: collectives without a push derivation pull.
  transfer = boundTransfer(ir.kind, transfer);
  ir.throughput = transfer == Transfer::Push ? throughputPush(ir.kind) : throughput(ir.kind);
  declare(ir, ir.latency);
  declare(ir, ir.throughput);
  // The direct program (captured calls): where the runtime has one; the
  // policy may still turn it off (bindPolicy).
  if (directDerivable(ir.kind, n)) ir.direct = directProgram(ir.kind, n), ir.engine = engineProgram(ir.kind, n);
  else ir.directWhyNot = directNotDerivable(ir.kind, n);
  numberOps(ir);
  return ir;
}

} // namespace purlin::ir
