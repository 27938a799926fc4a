/// @file DeriveDirect.cpp
/// @brief directProgram(): the direct program's ops, one role of CTAs that
/// each own slice c of every transfer and signal with index c (the CTA
/// dimension of the IR: a role's CTAs, SlotSpace::Cta).
#include "ir/DeriveDirect.h"

namespace purlin::ir {
namespace {

Access acc(Buf b, RankRef owner, RankRef part = RankRef::None, bool rounded = false) {
  Access a;
  a.buf = b;
  a.owner = owner;
  a.part = part;
  a.rounded = rounded;
  return a;
}

/// A direct signal: index base + src*128 + c (the executing CTA's index).
Op directNotify(Sig s, RankRef target) {
  Op o = Op::notify(s, SlotSpace::Cta, RankRef::None, target).each(target, Domain::Others);
  o.slotOwner = RankRef::None;
  return o;
}
Op directWait(Sig s, RankRef src, RoundOf round) {
  Op o = Op::wait(s, SlotSpace::Cta, RankRef::None, src, round).each(src, Domain::Others);
  o.slotOwner = RankRef::None;
  return o;
}
Op &inRound(Op &o, Access roundOf, Cond c = Cond::InRound) {
  o.cond = c;
  o.roundOf = roundOf;
  return o;
}

bool reducing(Kind k) { return k == Kind::ReduceScatter || k == Kind::AllReduce; }

/// Arrive: announce this CTA's start to every peer and wait for theirs.
void arrive(std::vector<Stmt> &body) {
  Op n = directNotify(Sig::ARRIVED, RankRef::K);
  n.round = RoundOf::Zero;
  n.why("CTA c of this rank started the call: its output may be written");
  body.push_back(Stmt::of(n));
  body.push_back(Stmt::of(directWait(Sig::ARRIVED, RankRef::P, RoundOf::Zero)
                              .why("peer's CTA c started: nothing earlier on its stream uses its output")));
}

/// AllGather / AllToAll: one pass of sliced copies, one PUT.
void copies(Kind k, std::vector<Stmt> &body) {
  auto R = RankRef::R, K = RankRef::K;
  Access src = k == Kind::AllGather ? acc(Buf::X, R) : acc(Buf::X, R, K);
  body.push_back(Stmt::of(Op::copy(acc(Buf::O, K, R), src)
                              .each(K, Domain::RingSelf)
                              .why(k == Kind::AllGather ? "slice c of the input into block r of every output "
                                                          "(remote writes; own block last, local)"
                                                        : "slice c of block k into block r of k's output "
                                                          "(remote writes; own block last, local)")));
  Op put = directNotify(Sig::PUT, K);
  put.fence = true;
  put.round = RoundOf::Zero;
  put.why("after a barrier: this CTA's writes published at system scope");
  body.push_back(Stmt::of(put));
  body.push_back(Stmt::of(directWait(Sig::PUT, RankRef::P, RoundOf::Zero)
                              .why("slice c of block p of the own output is complete")));
}

/// ReduceScatter / AllReduce on two ranks: rounds of PUT, reduce in place, BACK.
void reducePair(Kind k, std::vector<Stmt> &body) {
  auto R = RankRef::R, K = RankRef::K, P = RankRef::P;
  const bool ar = k == Kind::AllReduce;
  // Partition k of this rank's input goes to k's output (AllReduce: at
  // partition k; ReduceScatter: k's whole output).
  Access sent = acc(Buf::X, R, K);
  Access own = acc(Buf::X, R, R);
  std::vector<Stmt> loop;
  Op push = Op::copy(acc(Buf::O, K, ar ? K : RankRef::None, true), acc(Buf::X, R, K, true)).each(K, Domain::Others);
  loop.push_back(Stmt::of(inRound(push, sent).why("round j of the slice of partition k: remote write")));
  Op put = directNotify(Sig::PUT, K);
  put.fence = true;
  loop.push_back(Stmt::of(inRound(put, sent).why("after a barrier: round j published at system scope")));
  Op w = directWait(Sig::PUT, P, RoundOf::Cur);
  loop.push_back(Stmt::of(inRound(w, own).why("round j of p's contribution landed in the own output")));
  Access landed = acc(Buf::O, R, ar ? R : RankRef::None, true);
  Op red = Op::reduce(landed, landed, P, Domain::All);
  red.srcSelf = acc(Buf::X, R, R, true);
  red.hasSrcSelf = true;
  loop.push_back(Stmt::of(inRound(red, own).why("in place; ascending rank order, fp32 accumulation")));
  if (ar) {
    Op back = Op::copy(acc(Buf::O, K, R, true), acc(Buf::O, R, R, true)).each(K, Domain::Others);
    loop.push_back(Stmt::of(inRound(back, own).why("the reduced round into k's output (remote write)")));
    Op bn = directNotify(Sig::BACK, K);
    bn.fence = true;
    loop.push_back(Stmt::of(inRound(bn, own).why("after a barrier: the reduced round published")));
  }
  Stmt rounds = Stmt::loop(RankRef::None, Domain::All, false, false, std::move(loop));
  rounds.rounds = true;
  body.push_back(std::move(rounds));
  if (ar) {
    Op bw = directWait(Sig::BACK, P, RoundOf::Last);
    body.push_back(Stmt::of(inRound(bw, acc(Buf::X, R, P), Cond::HasRounds)
                                .why("every reduced round of partition p is in the own output")));
  }
}

// ---- Copy-engine form ------------------------------------------------------

Access chunkOf(Buf b, RankRef owner, RankRef part) {
  Access a = acc(b, owner, part);
  a.engineChunk = true;
  return a;
}
Op edge(OpKind k, Event ev, Stream on) {
  Op o = k == OpKind::Notify ? Op::notify(Sig::EDGE, SlotSpace::None, RankRef::None, RankRef::R)
                             : Op::wait(Sig::EDGE, SlotSpace::None, RankRef::None, RankRef::R, RoundOf::Zero);
  o.event = ev;
  o.round = RoundOf::Zero;
  o.slotOwner = RankRef::None;
  o.fence = k == OpKind::Notify; // stream order: everything before it on its stream has completed
  return o.onStream(on);
}
Op &nonEmpty(Op &o, Access a) {
  o.cond = Cond::NonEmpty;
  o.roundOf = a;
  return o;
}
/// A stream memory operation writing 1 into flag `s`[c] of rank k (n == 2: the peer).
Op flag(Sig s) {
  Op o = Op::notify(s, SlotSpace::Chunk, RankRef::None, RankRef::K).each(RankRef::K, Domain::Others);
  o.round = RoundOf::One;
  o.slotOwner = RankRef::None;
  o.fence = true; // stream order: the copy before it on the branch has completed
  return o.onStream(Stream::Branch);
}
Op flagWait(Sig s) {
  Op o = Op::wait(s, SlotSpace::Chunk, RankRef::None, RankRef::P, RoundOf::One).each(RankRef::P, Domain::Others);
  o.slotOwner = RankRef::None;
  return o;
}
Stmt engineLoop(Access chunksOf, std::vector<Stmt> body) {
  Stmt s = Stmt::loop(RankRef::None, Domain::All, false, false, std::move(body));
  s.engineChunks = true;
  s.chunksOf = chunksOf;
  return s;
}

/// Ops outside kernel nodes are the host's (graph nodes and edges).
void markHost(std::vector<Stmt> &body) {
  for (auto &s : body) {
    if (!s.isLoop) s.op.host = true;
    else if (s.kernel.empty()) markHost(s.body);
  }
}

/// The arrive kernel: ARRIVED(r, 0) to every peer, wait for theirs; the
/// call's epoch is read, not advanced.
Stmt engineArrive() {
  std::vector<Stmt> k;
  Op n = directNotify(Sig::ARRIVED, RankRef::K);
  n.round = RoundOf::Zero;
  k.push_back(Stmt::of(n.why("this rank's stream reached the call: its output may be written")));
  k.push_back(Stmt::of(directWait(Sig::ARRIVED, RankRef::P, RoundOf::Zero)
                           .why("peer's stream reached the call: nothing earlier on it uses its output")));
  return Stmt::kernelNode("arrive", Stream::Stream, false, std::move(k));
}

/// The finish kernel: `body`, then the call ends (the epoch advances).
Stmt engineFinish(std::vector<Stmt> body) {
  Stmt finish = Stmt::kernelNode("finish", Stream::Stream, false, std::move(body));
  finish.endsCall = true;
  return finish;
}

/// AllGather / AllToAll: the own block on the branch, the peers' blocks by
/// the copy engines on the stream, then PUT to every peer and wait for theirs.
void engineCopies(Kind k, std::vector<Stmt> &host) {
  auto R = RankRef::R, K = RankRef::K;
  const bool ag = k == Kind::AllGather;
  Access own = ag ? acc(Buf::X, R) : acc(Buf::X, R, R);
  host.push_back(engineArrive());
  Op fork = edge(OpKind::Notify, Event::Fork, Stream::Stream);
  host.push_back(Stmt::of(nonEmpty(fork, own).why("the branch starts after the arrive kernel")));
  Op forked = edge(OpKind::Wait, Event::Fork, Stream::Branch);
  host.push_back(Stmt::of(nonEmpty(forked, own)));
  Op local = Op::copy(acc(Buf::O, R, R), own).onStream(Stream::Branch);
  host.push_back(Stmt::of(nonEmpty(local, own).why("own block, local (skipped when in place)")));
  Op join = edge(OpKind::Notify, Event::Join, Stream::Branch);
  host.push_back(Stmt::of(nonEmpty(join, own)));
  Access sent = ag ? acc(Buf::X, R) : acc(Buf::X, R, K);
  Op peer = Op::copy(acc(Buf::O, K, R), sent).each(K, Domain::Ring).onStream(Stream::Stream);
  host.push_back(Stmt::of(nonEmpty(peer, sent).why(ag ? "the input into block r of every peer's output (copy engine)"
                                                      : "block k of the input into block r of k's output (copy engine)")));
  Op joined = edge(OpKind::Wait, Event::Join, Stream::Stream);
  host.push_back(Stmt::of(nonEmpty(joined, own)));
  std::vector<Stmt> fin;
  Op put = directNotify(Sig::PUT, K);
  put.fence = true;
  put.round = RoundOf::Zero;
  fin.push_back(Stmt::of(put.why("the copies before it on the stream have completed")));
  fin.push_back(Stmt::of(directWait(Sig::PUT, RankRef::P, RoundOf::Zero)
                             .why("block p of the own output is complete")));
  host.push_back(engineFinish(std::move(fin)));
}

/// ReduceScatter / AllReduce (n == 2, peer k): per engine chunk c the
/// branch copies chunk c of partition k into k's output and flags E_PUT(c)
/// there; the stream reduces chunk c of the own partition once it landed;
/// AllReduce copies each reduced chunk back (E_BACK).
void engineReduce(Kind k, std::vector<Stmt> &host) {
  auto R = RankRef::R, K = RankRef::K, P = RankRef::P;
  const bool ar = k == Kind::AllReduce;
  Access mine = acc(Buf::X, R, R);
  host.push_back(engineArrive());
  host.push_back(Stmt::of(edge(OpKind::Notify, Event::Fork, Stream::Stream).why("the branch starts after the arrive kernel")));
  host.push_back(Stmt::of(edge(OpKind::Wait, Event::Fork, Stream::Branch)));
  std::vector<Stmt> chunks;
  chunks.push_back(Stmt::of(Op::copy(chunkOf(Buf::O, K, ar ? K : RankRef::None), chunkOf(Buf::X, R, K))
                                .each(K, Domain::Others)
                                .onStream(Stream::Branch)
                                .why("chunk c of partition k into k's output (copy engine)")));
  chunks.push_back(Stmt::of(flag(Sig::E_PUT).why("after the copy (stream order)")));
  chunks.push_back(Stmt::of(edge(OpKind::Notify, Event::Fork, Stream::Branch).why("the own push of chunk c is done")));
  chunks.push_back(Stmt::of(edge(OpKind::Wait, Event::Fork, Stream::Stream)
                                .why("so both ranks' pushes of chunk c precede their reductions of it")));
  std::vector<Stmt> red;
  red.push_back(Stmt::of(flagWait(Sig::E_PUT).why("chunk c of p's contribution landed in the own output")));
  Access landed = chunkOf(Buf::O, R, ar ? R : RankRef::None);
  Op sum = Op::reduce(landed, landed, P, Domain::All);
  sum.srcSelf = chunkOf(Buf::X, R, R);
  sum.hasSrcSelf = true;
  red.push_back(Stmt::of(sum.why("in place, each CTA its slice; ascending rank order, fp32 accumulation")));
  chunks.push_back(Stmt::kernelNode("reduce", Stream::Stream, true, std::move(red)));
  if (ar) chunks.push_back(Stmt::of(edge(OpKind::Notify, Event::Chunk, Stream::Stream).why("chunk c is reduced")));
  host.push_back(engineLoop(mine, std::move(chunks)));
  if (ar) {
    std::vector<Stmt> back;
    back.push_back(Stmt::of(edge(OpKind::Wait, Event::Chunk, Stream::Branch)));
    back.push_back(Stmt::of(Op::copy(chunkOf(Buf::O, K, R), chunkOf(Buf::O, R, R))
                                .each(K, Domain::Others)
                                .onStream(Stream::Branch)
                                .why("the reduced chunk c into k's output (copy engine)")));
    back.push_back(Stmt::of(flag(Sig::E_BACK).why("after the copy (stream order)")));
    host.push_back(engineLoop(mine, std::move(back)));
  }
  host.push_back(Stmt::of(edge(OpKind::Notify, Event::Join, Stream::Branch)));
  host.push_back(Stmt::of(edge(OpKind::Wait, Event::Join, Stream::Stream)));
  std::vector<Stmt> fin;
  if (ar) {
    std::vector<Stmt> w;
    w.push_back(Stmt::of(flagWait(Sig::E_BACK).why("chunk c of p's reduced partition is in the own output")));
    fin.push_back(engineLoop(mine, std::move(w)));
  }
  fin.push_back(Stmt::of(Op::reset(Sig::E_PUT).why("every E_PUT of this call was observed (the reduce kernels)")));
  fin.push_back(Stmt::of(Op::reset(Sig::E_BACK).why(ar ? "every E_BACK of this call was observed (above); the peer "
                                                         "writes the flags again only after this rank's next ARRIVED"
                                                       : "the peer writes the flags again only after this rank's "
                                                         "next ARRIVED")));
  host.push_back(engineFinish(std::move(fin)));
}

} // namespace

Program engineProgram(Kind k, int n) {
  if (!directDerivable(k, n))
    throw IRError{"internal: " + directNotDerivable(k, n)};
  Program p;
  p.regime = Regime::Direct;
  p.transfer = Transfer::Push;
  p.engine = true;
  Role role;
  role.name = "host";
  role.ctasFrom = "direct.ctas";
  if (reducing(k)) engineReduce(k, role.body);
  else engineCopies(k, role.body);
  markHost(role.body);
  p.roles.push_back(std::move(role));
  p.buffers.push_back({Buf::X, "user input of rank r (read locally only)"});
  p.buffers.push_back({Buf::O, "user output of every rank, mapped when the call is captured: written by the "
                               "peers' copy engines after they heard ARRIVED"});
  p.signals.push_back({Sig::ARRIVED, "the arrive kernel of every rank", "every peer's arrive kernel", "sig(e,0)"});
  if (reducing(k)) {
    p.signals.push_back({Sig::E_PUT, "the peer's branch (stream memory operation after its copy of chunk c)",
                         "the reduce kernel of chunk c", "1, reset to 0 by the finish kernel"});
    if (k == Kind::AllReduce)
      p.signals.push_back({Sig::E_BACK, "the peer's branch (after its copy of reduced chunk c)",
                           "the finish kernel", "1, reset to 0 by the finish kernel"});
  } else {
    p.signals.push_back({Sig::PUT, "the finish kernel, after the copies on its stream", "every peer's finish kernel",
                         "sig(e,0)"});
  }
  p.signals.push_back({Sig::EDGE, "an event record on one stream", "a stream wait on the other (host order)",
                       "a graph edge"});
  return p;
}

bool directDerivable(Kind k, int n) {
  if (k == Kind::AllGather || k == Kind::AllToAll) return true;
  return reducing(k) && n == 2;
}

std::string directNotDerivable(Kind k, int n) {
  if (directDerivable(k, n)) return "";
  if (reducing(k))
    return "the direct program reduces on two ranks only (n = " + std::to_string(n) + ")";
  return std::string("no direct program for ") + toString(k) +
         " (AllGather and AllToAll for any n, ReduceScatter and AllReduce for n == 2)";
}

Program directProgram(Kind k, int n) {
  if (!directDerivable(k, n))
    throw IRError{"internal: " + directNotDerivable(k, n)};
  Program p;
  p.regime = Regime::Direct;
  p.transfer = Transfer::Push;
  Role role;
  role.name = "direct";
  role.ctasFrom = "direct.ctas";
  arrive(role.body);
  if (reducing(k)) reducePair(k, role.body);
  else copies(k, role.body);
  p.roles.push_back(std::move(role));
  p.buffers.push_back({Buf::X, "user input of rank r (read locally only)"});
  p.buffers.push_back({Buf::O, "user output of every rank, mapped when the call is captured: written by the "
                               "peers' CTAs after they heard ARRIVED, read only by its owner"});
  p.signals.push_back({Sig::ARRIVED, "every rank's CTA c", "every peer's CTA c", "sig(e,0)"});
  p.signals.push_back({Sig::PUT, "the writer's CTA c after a fence", "the output owner's CTA c",
                       reducing(k) ? "sig(e,j) per round j" : "sig(e,0)"});
  if (k == Kind::AllReduce)
    p.signals.push_back({Sig::BACK, "the reducer's CTA c after a fence", "the peer's CTA c", "sig(e,j) per round j"});
  return p;
}

} // namespace purlin::ir
