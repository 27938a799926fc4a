/// @file Instantiate.cpp
/// @brief instantiate(): binds r, loop variables, chunks and CTA slices.
#include <algorithm>
#include <set>

#include "ir/Instantiate.h"
#include "ir/Printer.h"

namespace purlin::ir {
namespace {

// Slices and chunks as the runtime cuts them (protocol.h).
using snac::chunkBegin;
using snac::chunkSize;
using snac::sliceBegin;

struct Env {
  int r = 0, p = -1, k = -1, c = -1;
  int j = -1; ///< direct: the round of the enclosing rounds loop
  int m = 0; ///< index of the loop's rank in its domain (FirstOfChunk)
};

class Expander {
public:
  Expander(Instance &inst, bool collect)
      : I(inst), S(inst.sizes), G(inst.geo), collect_(collect), push_(inst.prog->transfer == Transfer::Push) {}

  std::vector<std::set<int>> staged; ///< staged seq numbers per rank (filled by the collect pass)

  void role(int r, const Role &role, int cta, int ctas, std::vector<COp> &out) {
    cta_ = cta;
    ctas_ = ctas;
    // Copy-engine form: actor `cta` is stream `cta`; it moves whole chunks.
    engine_ = I.prog->engine;
    whole_ = engine_;
    records_.assign(size_t(kMaxEngineChunks) + 2, 0);
    Env e;
    e.r = r;
    body(role.body, e, out);
  }

private:
  Instance &I;
  const Sizes &S;
  const Geometry &G;
  bool collect_;
  bool push_; ///< push transfer: S slots are pslot(c) of per-source regions
  int cta_ = 0, ctas_ = 1;
  int lastCounter_ = -1;
  bool whole_ = false; ///< inside a perCta loop
  int step_ = 0;       ///< iteration counter of the current perCta loop
  bool engine_ = false; ///< copy-engine form: this actor is the stream numbered cta_
  std::vector<uint32_t> records_; ///< copy-engine form: records of each event so far in host order
  bool allReduce() const { return I.ir->kind == Kind::AllReduce; }
  int eventIndex(const Op &o, const Env &e) const {
    return o.event == Event::Fork ? 0 : o.event == Event::Join ? 1 : 2 + std::max(e.c, 0);
  }

  int rank(RankRef ref, const Env &e, int prevPart = -1) const {
    switch (ref) {
    case RankRef::R: return e.r;
    case RankRef::P: return e.p;
    case RankRef::K: return e.k;
    case RankRef::Root: return S.root;
    case RankRef::Prev: return prevPart;
    case RankRef::Next: return (e.r + 1) % S.n;
    case RankRef::None: return -1;
    }
    return -1;
  }
  std::vector<int> ranks(Domain d, const Env &e) const {
    std::vector<int> v;
    if (d == Domain::Ring) {
      for (int m = 0; m + 1 < S.n; ++m) v.push_back((e.r + 1 + m) % S.n);
      return v;
    }
    if (d == Domain::RevRing) {
      for (int m = 0; m + 1 < S.n; ++m) v.push_back((e.r - 1 - m + 2 * S.n) % S.n);
      return v;
    }
    if (d == Domain::RingSelf) {
      for (int m = 0; m < S.n; ++m) v.push_back((e.r + 1 + m) % S.n);
      return v;
    }
    if (d == Domain::SelfRing) {
      for (int m = 0; m < S.n; ++m) v.push_back((e.r + m) % S.n);
      return v;
    }
    for (int q = 0; q < S.n; ++q)
      if (d == Domain::All || (d == Domain::Others && q != e.r) || (d == Domain::Root && q == S.root) ||
          (d == Domain::NonRoot && q != S.root))
        v.push_back(q);
    return v;
  }
  bool runsOn(RunsOn on, int r) const {
    return on == RunsOn::All || (on == RunsOn::Root) == (r == S.root);
  }
  void bind(Env &e, RankRef v, int q) const {
    if (v == RankRef::P) e.p = q;
    else if (v == RankRef::K) e.k = q;
  }
  /// Stage sequence number, in producer `owner`'s sequence, of chunk c of
  /// partition `part` (docs/snac-protocol.md): chunk-major, j = c*parts + m
  /// with partition k = (owner+1+m) mod n; packed input: j = c.
  int seqOf(int owner, RankRef part, const Env &e) const {
    if (push_) return e.c; // push: each (source, destination) region has its own sequence c
    int q = rank(part, e);
    if (q < 0) return e.c;
    // The runtime's staging order (protocol.h), one definition for both.
    return snac::stageSequence(e.c, G.parts, snac::stagePosition(S.n, false, owner, q));
  }
  int prevUse(int owner, int j) const {
    auto &st = staged[owner];
    for (int q = j - G.slots; q >= 0; q -= G.slots)
      if (st.count(q)) return q;
    return -1;
  }
  int nextUse(int owner, int j) const {
    auto &st = staged[owner];
    for (int q = j + G.slots; q < G.parts * G.cpp; q += G.slots)
      if (st.count(q)) return q;
    return -1;
  }

  Mem mem(const Access &a, const Env &e) const {
    Mem m;
    m.buf = a.buf;
    m.owner = rank(a.owner, e);
    auto lenOf = [&](const std::vector<std::vector<uint64_t>> &v, int o, RankRef part, uint64_t &off) {
      if (part == RankRef::None) {
        off = 0;
        uint64_t t = 0;
        for (auto b : v[o]) t += b;
        return t;
      }
      int q = rank(part, e);
      off = 0;
      for (int i = 0; i < q; ++i) off += v[o][i];
      return v[o][q];
    };
    uint64_t off = 0, len = 0;
    switch (a.buf) {
    case Buf::X: len = lenOf(S.in, m.owner, a.part, off); break;
    case Buf::O: len = lenOf(S.out, m.owner, a.part, off); break;
    case Buf::S: {
      uint64_t dummy;
      if (a.region != RankRef::None) {
        int src = rank(a.region, e);
        m.region = src;
        m.off = uint64_t(regionIdx(m.owner, src)) * G.srcRegion + uint64_t(e.c % G.slots) * G.chunk;
        m.len = chunkSize(lenOf(S.in, src, a.part, dummy), G.chunk, e.c);
        return m;
      }
      len = chunkSize(lenOf(S.in, m.owner, a.part, dummy), G.chunk, e.c);
      off = uint64_t(seqOf(m.owner, a.part, e) % G.slots) * G.chunk;
      m.off = off, m.len = len;
      return m;
    }
    case Buf::Y:
      if (a.region != RankRef::None) {
        int src = rank(a.region, e);
        m.region = src;
        m.off = G.region + uint64_t(regionIdx(m.owner, src)) * G.srcRegion + uint64_t(e.c % G.ySlots) * G.chunk;
        m.len = chunkSize(S.y[src], G.chunk, e.c);
        return m;
      }
      m.off = G.region + uint64_t(e.c % G.ySlots) * G.chunk;
      m.len = chunkSize(S.y[m.owner], G.chunk, e.c);
      return m;
    case Buf::PK: {
      int src = rank(a.part, e);
      uint64_t dummy;
      m.off = uint64_t(src) * G.packetRegion;
      m.len = lenOf(S.in, src, a.shapePart, dummy);
      return m;
    }
    }
    if (a.chunked) {
      off += chunkBegin(len, G.chunk, e.c);
      len = chunkSize(len, G.chunk, e.c);
    }
    if (a.engineChunk) {
      off += engineChunkBegin(allReduce(), len, e.c, G);
      len = engineChunkLen(allReduce(), len, e.c, G);
    }
    m.off = off;
    m.len = len;
    return m;
  }
  /// Index of source `src`'s region in `owner`'s half (push): its ring
  /// distance minus one, (src - owner - 1) mod n, as the runtime maps it.
  int regionIdx(int owner, int src) const { return snac::sourceRegion(S.n, src, owner); }

  Mem slice(Mem m) const {
    if (whole_) return m; // perCta loop: one CTA moves the whole chunk
    uint64_t b = sliceBegin(m.len, ctas_, cta_), en = sliceBegin(m.len, ctas_, cta_ + 1);
    m.off += b;
    m.len = en - b;
    return m;
  }
  /// This CTA's slice of the access's partition (direct program).
  Mem ctaSlice(const Access &a, const Env &e) const {
    Mem m = mem(a, e);
    uint64_t b = sliceBegin(m.len, ctas_, cta_), en = sliceBegin(m.len, ctas_, cta_ + 1);
    m.off += b;
    m.len = en - b;
    return m;
  }
  /// Rounds of this CTA's slice of `a`.
  int roundsOf(const Access &a, const Env &e) const { return int(directRounds(ctaSlice(a, e).len, G)); }
  /// The bytes an operand names for this CTA: a rounded access is round j
  /// of the CTA's slice; any other is sliced as usual.
  Mem place(const Access &a, const Env &e) const {
    if (!a.rounded) return slice(mem(a, e));
    Mem m = ctaSlice(a, e);
    uint64_t rb = directRoundBytes(m.len, G);
    uint64_t b = std::min(m.len, rb * uint64_t(std::max(e.j, 0)));
    m.off += b;
    m.len = std::min(rb, m.len - b);
    return m;
  }
  /// Direct: the rounds loop runs to the largest round count of its InRound ops.
  int maxRounds(const std::vector<Stmt> &body, Env e) const {
    int most = 0;
    forEachOp(body, [&](const Op &o) {
      if (o.cond != Cond::InRound) return;
      std::vector<int> each = o.var != RankRef::None && o.kind != OpKind::Reduce ? ranks(o.domain, e)
                                                                                  : std::vector<int>{-1};
      for (int q : each) {
        Env qe = e;
        if (q >= 0) bind(qe, o.var, q);
        most = std::max(most, roundsOf(o.roundOf, qe));
      }
    });
    return most;
  }

  /// Slot facts (space, slot, round) of a sync op for slot owner `owner`.
  void slotOf(const Op &o, const Env &e, int owner, COp &c, int &seq) const {
    c.space = o.slotSpace;
    c.slotOwner = owner;
    seq = -1;
    if (o.slotSpace == SlotSpace::S) {
      seq = seqOf(owner, o.slotPart, e);
      c.slot = seq % G.slots;
      c.round = uint32_t(seq / G.slots);
    } else if (o.slotSpace == SlotSpace::Y) {
      c.slot = e.c % G.ySlots;
      c.round = uint32_t(e.c / G.ySlots);
    } else if (o.slotSpace == SlotSpace::Cta) { // direct: the CTA index; round j (or the last)
      c.slot = engine_ ? 0 : cta_; // copy-engine form: one-CTA kernels, index 0
      c.round = uint32_t(o.round == RoundOf::Last ? std::max(roundsOf(o.roundOf, e) - 1, 0) : std::max(e.j, 0));
    } else {
      c.slot = 0;
      c.round = 0;
    }
  }

  /// Evaluates the op's slot condition; sets prevPart for RankRef::Prev.
  bool cond(const Op &o, const Env &e, int owner, int &prevPart, uint32_t &prevRound) const {
    prevPart = -1;
    prevRound = 0;
    if (o.cond == Cond::Always) return true;
    if (o.cond == Cond::FirstOfChunk) return e.m == 0;
    if (o.cond == Cond::InRound) return e.j < roundsOf(o.roundOf, e);
    if (o.cond == Cond::HasRounds) return roundsOf(o.roundOf, e) > 0;
    if (o.cond == Cond::NonEmpty) return mem(o.roundOf, e).len > 0;
    if (collect_) return false;
    if (o.slotSpace == SlotSpace::Y) {
      if (o.cond == Cond::HasPrev) {
        prevRound = uint32_t(e.c / G.ySlots) - 1;
        return e.c >= G.ySlots;
      }
      return e.c + G.ySlots < G.cpp;
    }
    if (push_) { // per-source sequence c: the slot's uses are c, c+slots, ...
      if (o.cond == Cond::HasPrev) {
        prevRound = uint32_t(e.c / G.slots) - 1;
        return e.c >= G.slots;
      }
      return e.c + G.slots < G.cpp;
    }
    int j = seqOf(owner, o.slotPart, e);
    if (o.cond == Cond::HasNext) return nextUse(owner, j) >= 0;
    int pj = prevUse(owner, j);
    if (pj < 0) return false;
    prevPart = o.slotPart == RankRef::None ? owner : snac::stageDestination(S.n, owner, pj % G.parts);
    prevRound = uint32_t(pj / G.slots);
    return true;
  }

  /// The concrete instances of a sync op (one per forEach rank).
  void sync(const Op &o, Env e, std::vector<COp> &out) {
    std::vector<int> each;
    if (o.var != RankRef::None) each = ranks(o.domain, e);
    else each.push_back(-1);
    for (int q : each) {
      if (q >= 0) bind(e, o.var, q);
      int slotOwner = o.slotOwner == RankRef::None ? -1 : rank(o.slotOwner, e);
      int prevPart;
      uint32_t prevRound;
      if (!cond(o, e, slotOwner, prevPart, prevRound)) continue;
      COp c;
      c.sym = &o;
      c.kind = o.kind;
      c.last = o.last;
      int seq;
      slotOf(o, e, slotOwner, c, seq);
      c.region = o.slotRegion == RankRef::None ? -1 : rank(o.slotRegion, e);
      if (o.kind == OpKind::Notify) {
        c.arrayOwner = c.peer = rank(o.target, e);
        if (o.var != RankRef::None && o.target == o.var) c.arrayOwner = c.peer = q;
      } else {
        c.arrayOwner = e.r;
        c.peer = rank(o.sigSrc, e, prevPart);
        if (o.round == RoundOf::Prev) c.round = prevRound;
      }
      if (o.round == RoundOf::Zero || o.round == RoundOf::One) c.round = 0;
      c.one = o.round == RoundOf::One;
      int src = o.kind == OpKind::Notify ? e.r : c.peer;
      if (o.sig == Sig::EDGE) { // a graph edge: the wait pairs with its event's latest record in host order
        int ev = eventIndex(o, e);
        uint32_t serial = o.kind == OpKind::Notify ? ++records_[size_t(ev)] : records_[size_t(ev)];
        c.arrayOwner = c.peer = e.r;
        c.index = kEdgeBase + uint32_t(ev) * kEdgeStride + serial;
        out.push_back(c);
        continue;
      }
      c.index = o.slotSpace == SlotSpace::Chunk ? sigBase(o.sig) + uint32_t(std::max(e.c, 0))
                : o.sig == Sig::DONE ? sigBase(Sig::DONE) + uint32_t(src)
                : o.slotSpace == SlotSpace::Cta
                    ? sigBase(o.sig) + uint32_t(src) * kDirectSlotsPerSource + uint32_t(c.slot)
                    : sigBase(o.sig) + uint32_t(src) * kSlotsPerSource + uint32_t(c.slot);
      c.perCta = o.slotSpace == SlotSpace::Cta; // every CTA has its own direct signals
      out.push_back(c);
    }
  }

  bool active(const Op &o, const Env &e) {
    if (!runsOn(o.onlyOn, e.r)) return false;
    std::vector<COp> tmp;
    sync(o, e, tmp);
    return !tmp.empty();
  }

  void body(const std::vector<Stmt> &b, const Env &e, std::vector<COp> &out) {
    for (size_t i = 0; i < b.size(); ++i) {
      const Stmt &s = b[i];
      if (s.isLoop) {
        loop(s, e, out);
        continue;
      }
      const Op &o = s.op;
      if (!runsOn(o.onlyOn, e.r)) continue;
      if (engine_ && int(o.stream) != cta_) {
        // Another stream's op: only its event records count (host order).
        if (o.sig == Sig::EDGE && o.kind == OpKind::Notify) {
          std::vector<COp> other;
          sync(o, e, other);
        }
        continue;
      }
      if (o.kind == OpKind::Reset) {
        COp c;
        c.sym = &o;
        c.kind = o.kind;
        c.sig = o.sig;
        c.arrayOwner = c.peer = e.r;
        c.index = sigBase(o.sig);
        out.push_back(c);
        continue;
      }
      if (o.kind == OpKind::Arrive) {
        // Skipped when it guards last-arriver ops none of which runs in this
        // iteration (an Arrive guarding nothing still counts).
        bool any = false, guards = false;
        for (size_t j = i + 1; j < b.size() && !b[j].isLoop && b[j].op.last; ++j) guards = true, any |= active(b[j].op, e);
        if (guards && !any) {
          while (i + 1 < b.size() && !b[i + 1].isLoop && b[i + 1].op.last) ++i;
          continue;
        }
        COp c;
        c.sym = &o;
        c.kind = o.kind;
        int seq;
        slotOf(o, e, rank(o.slotOwner, e), c, seq);
        int cr = o.counterRank == RankRef::None ? 0 : rank(o.counterRank, e);
        c.counter = o.counterBase + o.counterStride * cr + (o.slotSpace == SlotSpace::None ? 0 : c.slot);
        c.arrivals = ctas_;
        lastCounter_ = c.counter;
        out.push_back(c);
        continue;
      }
      if (o.kind == OpKind::Notify || o.kind == OpKind::Wait) {
        size_t from = out.size();
        sync(o, e, out);
        if (o.last)
          for (size_t j = from; j < out.size(); ++j) out[j].lastCounter = lastCounter_;
        continue;
      }
      if (o.cond == Cond::FirstOfChunk && e.m != 0) continue;
      if (o.cond == Cond::NotSelf && e.p == e.r) continue;
      if (o.cond == Cond::HasRounds && roundsOf(o.roundOf, e) == 0) continue;
      data(o, e, out);
    }
  }

  void data(const Op &o, Env e, std::vector<COp> &out) {
    std::vector<int> each;
    if (o.var != RankRef::None && o.kind != OpKind::Reduce) each = ranks(o.domain, e);
    else each.push_back(-1);
    for (int q : each) {
      if (q >= 0) bind(e, o.var, q);
      if (o.cond == Cond::InRound && e.j >= roundsOf(o.roundOf, e)) continue;
      if (o.cond == Cond::NonEmpty && mem(o.roundOf, e).len == 0) continue;
      COp c;
      c.sym = &o;
      c.kind = o.kind;
      c.perCta = o.dst.rounded || I.prog->regime == Regime::Direct; // direct: each CTA's own slice and signals
      if (o.kind == OpKind::PacketPoll) {
        Mem whole = mem(o.src, e);
        c.emptyFlow = whole.len == 0 && cta_ == 0;
        c.srcs.push_back(slice(whole));
        c.peer = c.srcs[0].owner == e.r ? rank(o.src.part, e) : c.srcs[0].owner;
        out.push_back(c);
        continue;
      }
      Mem whole = mem(o.dst, e);
      c.emptyFlow = o.kind == OpKind::PacketPut && whole.len == 0 && cta_ == 0;
      c.dst = place(o.dst, e);
      if (o.kind == OpKind::Reduce && o.step) {
        // One step of a running reduction over the enclosing loop's rank:
        // the first rank of the loop (m == 0) sets dst, later ones combine.
        if (e.m > 0) c.srcs.push_back(c.dst);
        c.srcs.push_back(place(o.hasSrcSelf && e.p == e.r ? o.srcSelf : o.src, e));
      } else if (o.kind == OpKind::Reduce) {
        for (int p : ranks(o.domain, e)) {
          Env pe = e;
          bind(pe, o.var, p);
          c.srcs.push_back(place(o.hasSrcSelf && p == e.r ? o.srcSelf : o.src, pe));
        }
      } else {
        c.srcs.push_back(place(o.src, e));
      }
      for (auto &m : c.srcs)
        if (m.len != c.dst.len)
          throw IRError{"internal: operand sizes differ in " + opText(o) + " (" + std::to_string(m.len) +
                        " vs " + std::to_string(c.dst.len) + ")"};
      if (o.kind == OpKind::PacketPut) c.peer = c.dst.owner;
      for (Mem *m : {&c.dst}) {
        if (m->buf == Buf::S) staged[m->owner].insert(seqOf(m->owner, o.dst.part, e));
      }
      if (c.dst.buf == Buf::S || c.dst.buf == Buf::Y) {
        c.slotOwner = c.dst.owner;
        c.region = c.dst.region;
        c.space = c.dst.buf == Buf::S ? SlotSpace::S : SlotSpace::Y;
        c.slot = c.dst.buf == Buf::S ? seqOf(c.dst.owner, o.dst.part, e) % G.slots : e.c % G.ySlots;
        c.writeRound = uint32_t(c.dst.buf == Buf::S ? seqOf(c.dst.owner, o.dst.part, e) / G.slots : e.c / G.ySlots);
      }
      for (size_t i = 0; i < c.srcs.size(); ++i) {
        const Mem &m = c.srcs[i];
        if (m.buf == Buf::S) {
          c.readSlot.push_back(seqOf(m.owner, o.src.part, e) % G.slots);
          c.readRound.push_back(uint32_t(seqOf(m.owner, o.src.part, e) / G.slots));
        } else if (m.buf == Buf::Y) {
          c.readSlot.push_back(e.c % G.ySlots);
          c.readRound.push_back(uint32_t(e.c / G.ySlots));
        } else {
          c.readSlot.push_back(-1);
          c.readRound.push_back(0);
        }
      }
      out.push_back(c);
    }
  }

  void loop(const Stmt &s, const Env &e, std::vector<COp> &out) {
    if (!s.kernel.empty()) { // a kernel node: its ops in order, on its stream
      body(s.body, e, out);
      return;
    }
    if (s.engineChunks) { // c over the engine chunks of the partition
      int chunks = engineChunkCount(allReduce(), mem(s.chunksOf, e).len, G);
      for (int c = 0; c < chunks; ++c) {
        Env ce = e;
        ce.c = c;
        body(s.body, ce, out);
      }
      return;
    }
    if (s.rounds) { // direct: j over the rounds of this CTA's slices
      int most = maxRounds(s.body, e);
      for (int j = 0; j < most; ++j) {
        Env je = e;
        je.j = j;
        body(s.body, je, out);
      }
      return;
    }
    std::vector<int> rs = s.var == RankRef::None ? std::vector<int>{-1} : ranks(s.domain, e);
    int nc = s.chunks ? G.cpp : 1;
    if (s.perCta) step_ = 0;
    auto iter = [&](int q, int c) {
      Env ie = e;
      if (q >= 0) bind(ie, s.var, q);
      ie.m = 0;
      for (size_t i = 0; i < rs.size(); ++i)
        if (rs[i] == q) ie.m = int(i);
      if (s.chunks) ie.c = c;
      if (!s.perCta) {
        body(s.body, ie, out);
        return;
      }
      int j = step_++;
      if (j % ctas_ != cta_) return; // iteration j belongs to CTA j mod ctas
      size_t from = out.size();
      bool was = whole_;
      whole_ = true;
      body(s.body, ie, out);
      whole_ = was;
      for (size_t i = from; i < out.size(); ++i) out[i].perCta = true;
    };
    if (s.chunkMajor) {
      for (int c = 0; c < nc; ++c)
        for (int q : rs) iter(q, c);
    } else {
      for (int q : rs)
        for (int c = 0; c < nc; ++c) iter(q, c);
    }
  }
};

} // namespace

Instance instantiate(const CollectiveIR &ir, const Program &prog, const Sizes &s, const Geometry &g, int maxCtas) {
  Instance inst;
  inst.ir = &ir;
  inst.prog = &prog;
  inst.n = s.n;
  inst.sizes = s;
  inst.geo = g;
  inst.ranks.assign(s.n, {});
  if (s.empty) return inst; // nothing is launched
  maxCtas = std::max(1, maxCtas);
  std::vector<std::set<int>> staged(s.n);
  for (int pass = 0; pass < 2; ++pass) {
    Expander ex(inst, pass == 0);
    ex.staged = staged;
    if (pass == 0) ex.staged.assign(s.n, {});
    for (int r = 0; r < s.n; ++r) {
      inst.ranks[r].roles.clear();
      for (auto &role : prog.roles) {
        bool on = role.runsOn == RunsOn::All || (role.runsOn == RunsOn::Root) == (r == s.root);
        if (!on) continue;
        RoleInstance ri;
        ri.sym = &role;
        // A push role's workers: ctas x lanes (each an independent thread of
        // the model). The copy-engine form: its two streams.
        int ctas = std::max(1, std::min(role.ctas > 0 ? role.ctas * std::max(1, role.lanes) : 1, maxCtas));
        if (prog.engine) ctas = 2;
        ri.ctas.resize(ctas);
        for (int i = 0; i < ctas; ++i) ex.role(r, role, i, ctas, ri.ctas[i].ops);
        inst.ranks[r].roles.push_back(std::move(ri));
      }
    }
    staged = ex.staged;
  }
  if (prog.engine) // every op of a stream is that stream's alone (no CTA slices)
    for (auto &rk : inst.ranks)
      for (auto &ro : rk.roles)
        for (auto &c : ro.ctas)
          for (auto &op : c.ops) op.perCta = true;
  // DONE counters: every CTA of this rank that arrives on it.
  for (auto &rk : inst.ranks) {
    int done = 0;
    for (auto &ro : rk.roles)
      for (auto &c : ro.ctas)
        for (auto &op : c.ops) done += op.kind == OpKind::Arrive && op.counter == kDoneCounter;
    for (auto &ro : rk.roles)
      for (auto &c : ro.ctas)
        for (auto &op : c.ops)
          if (op.kind == OpKind::Arrive && op.counter == kDoneCounter) op.arrivals = done;
  }
  return inst;
}

uint64_t engineChunkLen(bool allReduce, uint64_t len, int c, const Geometry &g) {
  uint64_t done = 0;
  for (int k = 0; k < c; ++k) done += snac::engineChunkBytes(allReduce, len, done, k, g.engineMinChunk);
  return snac::engineChunkBytes(allReduce, len, done, c, g.engineMinChunk);
}

uint64_t engineChunkBegin(bool allReduce, uint64_t len, int c, const Geometry &g) {
  uint64_t done = 0;
  for (int k = 0; k < c; ++k) done += snac::engineChunkBytes(allReduce, len, done, k, g.engineMinChunk);
  return done;
}

int engineChunkCount(bool allReduce, uint64_t len, const Geometry &g) {
  return snac::engineChunks(allReduce, len, g.engineMinChunk);
}

bool engineApplies(const CollectiveIR &ir, const Sizes &s) {
  if (!reducesKind(ir.kind)) return true;
  for (int r = 0; r < s.n; ++r)
    for (auto len : s.in[size_t(r)])
      if (len != s.in[0][0]) return false;
  return true;
}

uint64_t directRoundBytes(uint64_t sliceLen, const Geometry &g) {
  uint64_t r = std::clamp(sliceLen / kDirectRoundDivisor, g.directRoundMin, g.directRoundMax);
  return (r + 15) & ~uint64_t(15);
}

uint64_t directRounds(uint64_t sliceLen, const Geometry &g) {
  uint64_t r = directRoundBytes(sliceLen, g);
  return (sliceLen + r - 1) / r;
}

std::string describe(const COp &op, const std::string &role, int rank) {
  return "%" + std::to_string(op.sym ? op.sym->id : -1) + " '" + (op.sym ? opText(*op.sym) : "?") +
         "' (role " + role + " of rank " + std::to_string(rank) + ")";
}

} // namespace purlin::ir
