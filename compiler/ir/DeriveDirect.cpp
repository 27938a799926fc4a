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

} // namespace

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
