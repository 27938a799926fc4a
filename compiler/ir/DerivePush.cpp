/// @file DerivePush.cpp
/// @brief The push throughput program (docs/snac-protocol.md, "Throughput
/// program, push transfer") for AllGather, ReduceScatter, AllReduce and
/// AllToAll, and its slot-reuse guards. Producers write each chunk into the
/// destination's staging region of their own rank (a remote write), fence
/// and notify; consumers read only their own staging.
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
/// Slot pslot(c) of `owner`'s S region of source `src`, carrying X_src[part] chunk c.
Access region(Buf b, RankRef owner, RankRef src, RankRef part) {
  Access a = acc(b, owner, part, true);
  a.region = src;
  return a;
}
/// A sync op about a slot of `owner`'s region of source `src`.
Op &about(Op &o, RankRef owner, RankRef src) {
  o.slotOwner = owner;
  o.slotRegion = src;
  return o;
}

bool packedIn(Kind k) { return k == Kind::AllGather; }

/// stage: for c, for k in ring: copy chunk c of what k needs into k's region r.
Role stage(Kind k, bool perCta) {
  auto R = RankRef::R, K = RankRef::K;
  Role role;
  role.name = "stage";
  role.ctasFrom = "throughput.stageCtas";
  RankRef part = packedIn(k) ? RankRef::None : K;
  std::vector<Stmt> body;
  body.push_back(Stmt::of(Op::copy(region(Buf::S, K, R, part), acc(Buf::X, R, part, true))
                              .why("remote write into rank k's region r")));
  if (!perCta) {
    Op a = Op::arrive(kStageCounterBase, kPushSlotStride, SlotSpace::S, RankRef::None);
    a.counterRank = K;
    about(a, K, R);
    body.push_back(Stmt::of(a));
  }
  Op n = Op::notify(Sig::STAGED, SlotSpace::S, RankRef::None, K).why("each destination gets its own copy");
  if (!perCta) n.byLast();
  n.fence = true;
  about(n, K, R);
  body.push_back(Stmt::of(n));
  role.body.push_back(Stmt::loop(K, Domain::Ring, true, true, std::move(body)));
  role.body.back().perCta = perCta;
  return role;
}

Op stagedWait(RankRef src) {
  Op w = Op::wait(Sig::STAGED, SlotSpace::S, RankRef::None, src, RoundOf::Cur);
  return about(w, RankRef::R, src);
}

/// consume (copy): own partition local, then every source's chunks from the
/// own staging regions into their output partitions.
Role consume(Kind k, bool perCta) {
  auto R = RankRef::R, P = RankRef::P;
  Role role;
  role.name = "consume";
  role.ctasFrom = "throughput.consumeCtas";
  bool packed = packedIn(k);
  std::vector<Stmt> body;
  if (perCta) // chunk c of the own contribution, by the worker of the chunk's first step
    body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, R, true), acc(Buf::X, R, packed ? RankRef::None : R, true))
                                .when(Cond::FirstOfChunk)
                                .why("own contribution, local")));
  else
    role.body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, R), acc(Buf::X, R, packed ? RankRef::None : R))
                                     .why("own contribution, local")));
  body.push_back(Stmt::of(stagedWait(P)));
  body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, P, true), region(Buf::S, R, P, packed ? RankRef::None : R))
                              .why("local read of region p")));
  role.body.push_back(Stmt::loop(P, Domain::RevRing, true, true, std::move(body)));
  role.body.back().perCta = perCta;
  return role;
}

/// reduce (ReduceScatter, AllReduce's F): reduce the own partition from the
/// own input and the own staging regions; AllReduce forwards the result into
/// every peer's Y region r.
Role reduce(Kind k, bool perCta) {
  auto R = RankRef::R, P = RankRef::P, K = RankRef::K;
  bool ar = k == Kind::AllReduce;
  Role role;
  role.name = "reduce";
  role.ctasFrom = "throughput.consumeCtas";
  std::vector<Stmt> body;
  body.push_back(Stmt::of(stagedWait(P).each(P, Domain::Others)));
  Access dst = ar ? acc(Buf::O, R, R, true) : acc(Buf::O, R, RankRef::None, true);
  Op red = Op::reduce(dst, region(Buf::S, R, P, R), P, Domain::All)
               .why(ar ? "into the final place of Y_r[c]; ascending rank order, fp32 accumulation"
                       : "own contribution from X_r; ascending rank order, fp32 accumulation");
  red.srcSelf = acc(Buf::X, R, R, true);
  red.hasSrcSelf = true;
  body.push_back(Stmt::of(red));
  if (ar)
    body.push_back(Stmt::of(Op::copy(region(Buf::Y, K, R, RankRef::None), acc(Buf::O, R, R, true))
                                .each(K, Domain::Others)
                                .why("forward: remote write into rank k's Y region r")));
  // Indexed by the Y slot for AllReduce (the next use follows the GATHERED
  // wait of that slot), by the S slot otherwise (it follows the STAGED of
  // the slot's next use, sent after CONSUMED).
  if (!perCta) {
    Op a = Op::arrive(kConsumeCounterBase, kMaxSlots, ar ? SlotSpace::Y : SlotSpace::S, RankRef::None);
    a.counterRank = R;
    about(a, R, ar ? RankRef::None : R);
    body.push_back(Stmt::of(a));
  }
  if (ar) {
    Op n = Op::notify(Sig::REDUCED, SlotSpace::Y, RankRef::None, K).each(K, Domain::Others)
               .why(perCta ? "the chunk's CTA publishes Y_r[c] in every peer's region r"
                           : "last reducer publishes Y_r[c] in every peer's region r");
    if (!perCta) n.byLast();
    n.fence = true;
    about(n, K, R);
    body.push_back(Stmt::of(n));
  }
  role.body.push_back(Stmt::loop(RankRef::None, Domain::All, true, false, std::move(body)));
  role.body.back().perCta = perCta;
  return role;
}

/// gather (AllReduce's G): every peer's reduced partition from the own Y regions.
Role gather(bool perCta) {
  auto R = RankRef::R, K = RankRef::K;
  Role role;
  role.name = "gather";
  role.ctasFrom = "throughput.gatherCtas";
  std::vector<Stmt> body;
  Op w = Op::wait(Sig::REDUCED, SlotSpace::Y, RankRef::None, K, RoundOf::Cur);
  body.push_back(Stmt::of(about(w, R, K)));
  body.push_back(Stmt::of(Op::copy(acc(Buf::O, R, K, true), region(Buf::Y, R, K, RankRef::None))
                              .why("local read of Y region k")));
  role.body.push_back(Stmt::loop(K, Domain::RevRing, true, true, std::move(body)));
  role.body.back().perCta = perCta;
  return role;
}

/// Inserts `ins` right after body[at] (or after the first Arrive following
/// it in the same body, when there is one and `afterArrive`).
void insertAfter(std::vector<Stmt> &body, size_t at, std::vector<Stmt> ins, bool afterArrive) {
  size_t pos = at + 1;
  if (afterArrive)
    for (size_t j = at + 1; j < body.size(); ++j)
      if (!body[j].isLoop && body[j].op.kind == OpKind::Arrive) {
        pos = j + 1;
        break;
      }
  body.insert(body.begin() + long(pos), ins.begin(), ins.end());
}

/// Reads of own S/Y regions free the slot to its source when it is reused
/// (in a perCta loop the reading CTA notifies directly, without an arrive).
void freeAfterLocalReads(std::vector<Stmt> &body, bool perCta) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      freeAfterLocalReads(body[i].body, perCta || body[i].perCta);
      continue;
    }
    const Op rd = body[i].op;
    if ((rd.kind != OpKind::Copy && rd.kind != OpKind::Reduce) || rd.src.region == RankRef::None) continue;
    bool y = rd.src.buf == Buf::Y;
    RankRef src = rd.src.region;
    Op n = Op::notify(y ? Sig::GATHERED : Sig::CONSUMED, y ? SlotSpace::Y : SlotSpace::S, RankRef::None, src)
               .when(Cond::HasNext)
               .why(y ? "Y slot used again: free it" : "slot used again: free it");
    if (!perCta) n.byLast();
    n.fence = perCta; // the worker's notify: lane barrier, fence.acq_rel.sys, st.release.sys
    about(n, RankRef::R, src);
    if (rd.kind == OpKind::Reduce) n.each(rd.var, Domain::Others);
    bool hasArrive = false;
    for (size_t j = i + 1; j < body.size(); ++j) hasArrive |= !body[j].isLoop && body[j].op.kind == OpKind::Arrive;
    if (perCta) {
      insertAfter(body, i, {Stmt::of(n)}, false); // right after the read, by the reading CTA
    } else if (hasArrive) {
      insertAfter(body, i, {Stmt::of(n)}, true);
    } else {
      Op a = y ? Op::arrive(kGatherCounterBase, kMaxYSlots, SlotSpace::Y, RankRef::None)
               : Op::arrive(kConsumeCounterBase, kMaxSlots, SlotSpace::S, RankRef::None);
      a.counterRank = src;
      about(a, RankRef::R, src);
      insertAfter(body, i, {Stmt::of(a), Stmt::of(n)}, false);
    }
    ++i;
  }
}

/// Remote writes of round > 0 first wait until the destination freed the
/// slot's previous use (CONSUMED for S, GATHERED for Y).
void guardRemoteWrites(std::vector<Stmt> &body) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].isLoop) {
      guardRemoteWrites(body[i].body);
      continue;
    }
    const Op wr = body[i].op;
    if (wr.kind != OpKind::Copy || wr.dst.region == RankRef::None) continue;
    bool y = wr.dst.buf == Buf::Y;
    RankRef dst = wr.dst.owner;
    Op w = Op::wait(y ? Sig::GATHERED : Sig::CONSUMED, y ? SlotSpace::Y : SlotSpace::S, RankRef::None, dst,
                    RoundOf::Prev)
               .when(Cond::HasPrev)
               .why(y ? "Y slot reuse: rank k gathered its previous use" : "slot reuse: rank k consumed its previous use");
    about(w, dst, RankRef::R);
    if (wr.var != RankRef::None) w.each(wr.var, wr.domain);
    body.insert(body.begin() + long(i), Stmt::of(w));
    ++i;
  }
}

} // namespace

bool pushDerivable(Kind k) {
  return k == Kind::AllGather || k == Kind::ReduceScatter || k == Kind::AllReduce || k == Kind::AllToAll;
}

Transfer boundTransfer(Kind k, Transfer policyTransfer) {
  return policyTransfer == Transfer::Push && pushDerivable(k) ? Transfer::Push : Transfer::Pull;
}

Program throughputPush(Kind k, PushCtas ctas) {
  if (!pushDerivable(k))
    throw IRError{std::string("internal: no push derivation for ") + toString(k)};
  Program p;
  p.regime = Regime::Throughput;
  p.transfer = Transfer::Push;
  bool per = ctas == PushCtas::PerChunk;
  p.roles.push_back(stage(k, per));
  if (k == Kind::AllGather || k == Kind::AllToAll) p.roles.push_back(consume(k, per));
  else p.roles.push_back(reduce(k, per));
  if (k == Kind::AllReduce) p.roles.push_back(gather(per));
  return p;
}

void insertPushSlotReuseGuards(Program &p) {
  for (auto &role : p.roles) {
    guardRemoteWrites(role.body);
    freeAfterLocalReads(role.body, false);
  }
}

} // namespace purlin::ir
