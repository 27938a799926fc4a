/// @file Verifier.cpp
/// @brief verifyInstance(): pairing, acquire-before-read, slot reuse,
/// cross-call causal chain and locality rules (docs/snac-ir.md).
#include "ir/Verifier.h"

#include "ir/Lowering.h"
#include "ir/Simulator.h"

#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace purlin::ir {

std::string Report::text() const {
  std::ostringstream os;
  for (auto &f : errors) os << "error: [" << f.rule << "] " << f.message << "\n";
  return os.str();
}

void Report::add(std::string rule, std::string msg, std::vector<int> ops) {
  errors.push_back({std::move(rule), std::move(msg), std::move(ops)});
}

namespace {

struct Site {
  const COp *op;
  const std::string *role;
  int rank;
  int cta;
  size_t pos;
};

std::string who(const Site &s) { return describe(*s.op, *s.role, s.rank); }
int idOf(const Site &s) { return s.op->sym ? s.op->sym->id : -1; }

/// Every op of every CTA of every rank. `firstCtaOnly`: each op once — the
/// ops every CTA runs (sliced chunks, counted once) from CTA 0, and the ops
/// of perCta iterations from the one CTA that runs them.
std::vector<Site> sites(const Instance &inst, bool firstCtaOnly) {
  std::vector<Site> v;
  for (int r = 0; r < inst.n; ++r)
    for (auto &ro : inst.ranks[r].roles)
      for (size_t c = 0; c < ro.ctas.size(); ++c)
        for (size_t i = 0; i < ro.ctas[c].ops.size(); ++i)
          if (!firstCtaOnly || c == 0 || ro.ctas[c].ops[i].perCta)
            v.push_back({&ro.ctas[c].ops[i], &ro.sym->name, r, int(c), i});
  return v;
}

using SiteMap = std::map<std::pair<uint32_t, uint32_t>, std::vector<Site>>;

/// Direct signals (one index per source and CTA, several rounds): a wait
/// proceeds at `value >= expected`, so one wait on round j covers the
/// notifies of rounds <= j on its index. Every wait needs a notify of its
/// round or later on the same index (else it deadlocks), and every notify
/// a wait of its round or later (else nobody acquires what it releases).
void directPairing(const std::tuple<int, int, int> &key, SiteMap &N, SiteMap &W, Report &rep) {
  // Named variables, not a structured binding: clang 14 (the sanitizer
  // build) cannot capture structured bindings in a lambda.
  const int sig = std::get<0>(key), src = std::get<1>(key), dst = std::get<2>(key);
  auto head = [&](uint32_t index, uint32_t round) {
    std::ostringstream m;
    m << "signal " << toString(Sig(sig)) << " from rank " << src << " to rank " << dst << " (index " << index
      << ", value sig(e," << round << ")): ";
    return m.str();
  };
  for (auto &[v, sites] : W) {
    bool ok = false;
    for (auto &kv : N) ok = ok || (kv.first.first == v.first && kv.first.second >= v.second);
    if (ok) continue;
    std::string other;
    std::vector<int> ids = {idOf(sites[0])};
    if (!N.empty()) other = " (other notifies: " + who(N.begin()->second[0]) + ")", ids.push_back(idOf(N.begin()->second[0]));
    rep.add("pairing", head(v.first, v.second) + "no notify of this round or a later one" + other + "; wait side: " +
                           who(sites[0]) + " -> wait without notify (deadlock)",
            ids);
    return;
  }
  for (auto &[v, sites] : N) {
    bool ok = false;
    for (auto &kv : W) ok = ok || (kv.first.first == v.first && kv.first.second >= v.second);
    if (ok) continue;
    std::string other;
    std::vector<int> ids = {idOf(sites[0])};
    if (!W.empty()) other = " (other waits: " + who(W.begin()->second[0]) + ")", ids.push_back(idOf(W.begin()->second[0]));
    rep.add("pairing", head(v.first, v.second) + "notify side: " + who(sites[0]) +
                           "; no wait of this round or a later one" + other + " -> notify without wait",
            ids);
    return;
  }
}

void pairing(const Instance &inst, Report &rep) {
  // (sig, src, dst) -> multiset of (index, round) -> sites
  using Key = std::tuple<int, int, int>;
  std::map<Key, std::map<std::pair<uint32_t, uint32_t>, std::vector<Site>>> notes, waits;
  // A last-arriver notify on a counter shared by several roles (DONE) runs once.
  std::set<std::tuple<int, int, uint32_t, uint32_t, int>> shared;
  for (auto &s : sites(inst, true)) {
    if (s.op->kind == OpKind::Notify && s.op->lastCounter == kDoneCounter &&
        !shared.insert({s.rank, s.op->arrayOwner, s.op->index, s.op->round, s.op->lastCounter}).second)
      continue;
    if (s.op->kind == OpKind::Notify)
      notes[{int(s.op->sym->sig), s.rank, s.op->arrayOwner}][{s.op->index, s.op->round}].push_back(s);
    else if (s.op->kind == OpKind::Wait)
      waits[{int(s.op->sym->sig), s.op->peer, s.rank}][{s.op->index, s.op->round}].push_back(s);
  }
  std::set<Key> keys;
  for (auto &kv : notes) keys.insert(kv.first);
  for (auto &kv : waits) keys.insert(kv.first);
  for (auto &key : keys) {
    auto &N = notes[key];
    auto &W = waits[key];
    Sig ks = Sig(std::get<0>(key));
    if (ks == Sig::ARRIVED || ks == Sig::PUT || ks == Sig::BACK) {
      directPairing(key, N, W, rep);
      continue;
    }
    size_t nn = 0, nw = 0;
    for (auto &kv : N) nn += kv.second.size();
    for (auto &kv : W) nw += kv.second.size();
    std::set<std::pair<uint32_t, uint32_t>> vals;
    for (auto &kv : N) vals.insert(kv.first);
    for (auto &kv : W) vals.insert(kv.first);
    for (auto &v : vals) {
      size_t a = N.count(v) ? N[v].size() : 0, b = W.count(v) ? W[v].size() : 0;
      if (a == b) continue;
      auto [sig, src, dst] = key;
      std::ostringstream m;
      m << "signal " << toString(Sig(sig)) << " from rank " << src << " to rank " << dst << " (index " << v.first
        << ", value sig(e," << v.second << ")): " << nn << " notifies vs " << nw << " waits; ";
      std::vector<int> ids;
      m << "notify side: ";
      if (a) m << who(N[v][0]), ids.push_back(idOf(N[v][0]));
      else if (!N.empty()) m << "none with this value (other notifies: " << who(N.begin()->second[0]) << ")", ids.push_back(idOf(N.begin()->second[0]));
      else m << "none";
      m << "; wait side: ";
      if (b) m << who(W[v][0]), ids.push_back(idOf(W[v][0]));
      else if (!W.empty()) m << "none with this value (other waits: " << who(W.begin()->second[0]) << ")", ids.push_back(idOf(W.begin()->second[0]));
      else m << "none";
      m << (a > b ? " -> notify without wait" : " -> wait without notify (deadlock)");
      rep.add("pairing", m.str(), ids);
      break; // one finding per (signal, src, dst)
    }
  }
}

/// A counter shared by several roles (DONE): its last arriver may be a CTA
/// of any of them, so each must carry the same last-arriver notifies.
void sharedCounters(const Instance &inst, Report &rep) {
  for (int r = 0; r < inst.n; ++r) {
    std::vector<std::pair<const RoleInstance *, std::set<std::pair<int, uint32_t>>>> roles;
    const COp *example = nullptr;
    for (auto &ro : inst.ranks[r].roles) {
      if (ro.ctas.empty()) continue;
      bool arrives = false;
      std::set<std::pair<int, uint32_t>> notes;
      for (auto &op : ro.ctas[0].ops) {
        if (op.kind == OpKind::Arrive && op.counter == kDoneCounter) arrives = true;
        if (op.kind == OpKind::Notify && op.lastCounter == kDoneCounter) notes.insert({op.arrayOwner, op.index}), example = &op;
      }
      if (arrives) roles.push_back({&ro, notes});
    }
    for (size_t i = 1; i < roles.size(); ++i) {
      if (roles[i].second == roles[0].second) continue;
      const RoleInstance *lacking = roles[i].second.size() < roles[0].second.size() ? roles[i].first : roles[0].first;
      const RoleInstance *having = lacking == roles[0].first ? roles[i].first : roles[0].first;
      rep.add("pairing",
              "rank " + std::to_string(r) + ": the last arriver of DONE counter " + std::to_string(kDoneCounter) +
                  " may be a CTA of role " + lacking->sym->name + ", which lacks the DONE notify that role " +
                  having->sym->name + " has" + (example ? " (" + describe(*example, having->sym->name, r) + ")" : ""),
              {example && example->sym ? example->sym->id : -1});
      return;
    }
  }
}

/// For each S/Y read: an earlier acquire in the same CTA on the owner's
/// release of that slot use, and in the owner's program a release after the
/// write. For PK reads: an earlier poll of the same packets.
void acquireBeforeRead(const Instance &inst, Report &rep) {
  // Writer-side facts: a slot use is (memory owner, push region or -1,
  // space, slot, round); released holds (writer, use..., reader) when the
  // writer's role notifies the reader after writing that use. A release of
  // remote writes (push) by one of several CTAs needs fence.acq_rel.sys
  // first: the other CTAs' writes are only ordered at gpu scope.
  using Use = std::tuple<int, int, int, int, uint32_t>;
  std::set<std::tuple<int, Use, int>> released;
  for (int r = 0; r < inst.n; ++r)
    for (auto &ro : inst.ranks[r].roles)
      for (auto &cta : ro.ctas) {
      // A notify covers every CTA's writes when it is the last arriver's (or
      // the role has one CTA); in a perCta iteration, the CTA's own writes
      // of the whole chunk.
      std::map<Use, bool> written; // -> written into another rank's memory
      for (auto &op : cta.ops) {
        if ((op.kind == OpKind::Copy || op.kind == OpKind::Reduce) && op.space != SlotSpace::None)
          written[{op.slotOwner, op.region, int(op.space), op.slot, op.writeRound}] |= op.slotOwner != r;
        if (op.kind != OpKind::Notify || (op.sym->sig != Sig::STAGED && op.sym->sig != Sig::REDUCED)) continue;
        Use u{op.slotOwner, op.region, int(op.space), op.slot, op.round};
        auto w = written.find(u);
        if (w == written.end() || !(op.last || ro.ctas.size() == 1 || op.perCta)) continue;
        if (w->second && ro.ctas.size() > 1 && !op.perCta && !op.sym->fence) {
          rep.add("fence",
                  who({&op, &ro.sym->name, r, 0, 0}) + " releases remote writes of " + std::to_string(ro.ctas.size()) +
                      " CTAs to rank " + std::to_string(op.arrayOwner) +
                      " without fence.acq_rel.sys (the other CTAs' writes are only ordered at gpu scope)",
                  {op.sym->id});
          return;
        }
        released.insert({r, u, op.arrayOwner});
      }
      }
  for (int r = 0; r < inst.n; ++r)
    for (auto &ro : inst.ranks[r].roles)
      for (auto &cta : ro.ctas) {
        std::set<std::tuple<int, int, int, uint32_t>> acquired; // (peer, sig, index-slot, round)
        std::set<std::tuple<int, uint64_t, uint64_t>> polled;
        for (auto &op : cta.ops) {
          if (op.kind == OpKind::Wait) {
            for (uint32_t q = 0; q <= op.round; ++q) acquired.insert({op.peer, int(op.sym->sig), op.slot, q});
          }
          if (op.kind == OpKind::PacketPoll) polled.insert({op.srcs[0].owner, op.srcs[0].off, op.srcs[0].len});
          if (op.kind != OpKind::Copy && op.kind != OpKind::Reduce) continue;
          for (size_t i = 0; i < op.srcs.size(); ++i) {
            const Mem &m = op.srcs[i];
            if (m.len == 0) continue;
            if (m.buf == Buf::S || m.buf == Buf::Y) {
              Sig need = m.buf == Buf::S ? Sig::STAGED : Sig::REDUCED;
              int sp = int(m.buf == Buf::S ? SlotSpace::S : SlotSpace::Y);
              uint32_t rd = op.readRound[i];
              int writer = m.region >= 0 ? m.region : m.owner; // push: the region's source wrote it
              if (!acquired.count({writer, int(need), op.readSlot[i], rd})) {
                rep.add("acquire",
                        who({&op, &ro.sym->name, r, 0, 0}) + " reads " + toString(m.buf) + " of rank " +
                            std::to_string(m.owner) + " (slot " + std::to_string(op.readSlot[i]) + ", round " +
                            std::to_string(rd) + (m.region >= 0 ? ", region of rank " + std::to_string(m.region) : "") +
                            ") without an earlier wait.acquire on " + toString(need) + " from rank " +
                            std::to_string(writer),
                        {op.sym->id});
                return;
              }
              if (!released.count({writer, Use{m.owner, m.region, sp, op.readSlot[i], rd}, r})) {
                rep.add("acquire",
                        who({&op, &ro.sym->name, r, 0, 0}) + " reads " + toString(m.buf) + " of rank " +
                            std::to_string(m.owner) + " whose writer (rank " + std::to_string(writer) +
                            ") never releases that slot use to rank " +
                            std::to_string(r) + " after writing it",
                        {op.sym->id});
                return;
              }
            } else if (m.buf == Buf::PK) {
              bool ok = false;
              for (auto &[o, off, len] : polled) ok |= o == m.owner && off <= m.off && m.off + m.len <= off + len;
              if (!ok) {
                rep.add("acquire",
                        who({&op, &ro.sym->name, r, 0, 0}) + " reads packets without polling their flags first",
                        {op.sym->id});
                return;
              }
            }
          }
        }
      }
}

/// Within a call: a write of slot use round > 0 waits for every reader of
/// the slot's previous use (CONSUMED / GATHERED).
void slotReuse(const Instance &inst, Report &rep) {
  // readers[(owner, region, space, slot, round)] = set of reader ranks
  std::map<std::tuple<int, int, int, int, uint32_t>, std::set<int>> readers;
  for (auto &s : sites(inst, false)) {
    if (s.op->kind != OpKind::Copy && s.op->kind != OpKind::Reduce) continue;
    for (size_t i = 0; i < s.op->srcs.size(); ++i) {
      const Mem &m = s.op->srcs[i];
      if (m.buf == Buf::S || m.buf == Buf::Y)
        readers[{m.owner, m.region, int(m.buf == Buf::S ? SlotSpace::S : SlotSpace::Y), s.op->readSlot[i],
                 s.op->readRound[i]}]
            .insert(s.rank);
    }
  }
  for (int r = 0; r < inst.n; ++r)
    for (auto &ro : inst.ranks[r].roles)
      for (auto &cta : ro.ctas) {
        std::set<std::tuple<int, int, int, uint32_t>> freed; // (reader, sig, slot, round)
        std::map<std::pair<int, int>, uint32_t> lastWrite;    // (space, slot) -> round of latest write here
        for (auto &op : cta.ops) {
          if (op.kind == OpKind::Wait && (op.sym->sig == Sig::CONSUMED || op.sym->sig == Sig::GATHERED))
            for (uint32_t q = 0; q <= op.round; ++q) freed.insert({op.peer, int(op.sym->sig), op.slot, q});
          if ((op.kind != OpKind::Copy && op.kind != OpKind::Reduce) || op.space == SlotSpace::None) continue;
          Sig need = op.space == SlotSpace::S ? Sig::CONSUMED : Sig::GATHERED;
          // The previous use of this slot: the highest earlier round that someone read.
          for (int64_t pr = int64_t(op.writeRound) - 1; pr >= 0; --pr) {
            auto it = readers.find({op.slotOwner, op.region, int(op.space), op.slot, uint32_t(pr)});
            if (it == readers.end()) continue;
            for (int q : it->second) {
              if (freed.count({q, int(need), op.slot, uint32_t(pr)})) continue;
              rep.add("slot-reuse",
                      who({&op, &ro.sym->name, r, 0, 0}) + " overwrites " + (op.space == SlotSpace::S ? "staging" : "Y") +
                          " slot " + std::to_string(op.slot) +
                          (op.slotOwner != r ? " of rank " + std::to_string(op.slotOwner) : std::string()) +
                          " (round " + std::to_string(op.writeRound) +
                          ") before waiting for " + toString(need) + " from rank " + std::to_string(q) +
                          ", which read round " + std::to_string(pr),
                      {op.sym->id});
              return;
            }
            break;
          }
        }
      }
}

/// Across calls: whoever's memory B reads (or writes into) must, in the same
/// call, wait on something B sends, so call e+2's rewrite of half e&1
/// follows B's call e (docs/snac-protocol.md, "Reuse of halves").
void crossCall(const Instance &inst, Report &rep) {
  std::set<std::pair<int, int>> hazards; // (A = rewriter, B = reader of that half)
  std::map<std::pair<int, int>, const Site *> example;
  auto all = sites(inst, false);
  for (auto &s : all) {
    if (s.op->kind == OpKind::Copy || s.op->kind == OpKind::Reduce)
      for (auto &m : s.op->srcs)
        if ((m.buf == Buf::S || m.buf == Buf::Y) && m.owner != s.rank && !hazards.count({m.owner, s.rank}))
          hazards.insert({m.owner, s.rank}), example[{m.owner, s.rank}] = &s;
    bool remoteWrite = s.op->kind == OpKind::PacketPut ||
                       ((s.op->kind == OpKind::Copy || s.op->kind == OpKind::Reduce) &&
                        (s.op->dst.buf == Buf::S || s.op->dst.buf == Buf::Y));
    if (remoteWrite && s.op->dst.owner != s.rank && !hazards.count({s.rank, s.op->dst.owner}))
      hazards.insert({s.rank, s.op->dst.owner}), example[{s.rank, s.op->dst.owner}] = &s;
  }
  std::set<std::pair<int, int>> hears; // (A, B): A waits on / polls something from B
  for (auto &s : all)
    if (s.op->kind == OpKind::Wait || s.op->kind == OpKind::PacketPoll) hears.insert({s.rank, s.op->peer});
  for (auto &h : hazards) {
    if (hears.count(h)) continue;
    const Site &s = *example[h];
    rep.add("cross-call",
            "rank " + std::to_string(h.first) + " reuses its half in call e+2 while rank " + std::to_string(h.second) +
                " may still access it from call e (" + who(s) + "): rank " + std::to_string(h.first) +
                " waits on nothing rank " + std::to_string(h.second) + " sends in a call (a DONE ack is missing)",
            {idOf(s)});
    return;
  }
}

/// Pull: data ops write only local memory. Push: they write another rank's
/// memory only into that rank's S/Y region of the writer, and read only
/// local memory. User buffers and packets are never accessed remotely.
void locality(const Instance &inst, Report &rep) {
  bool push = inst.prog->transfer == Transfer::Push;
  bool direct = inst.prog->regime == Regime::Direct;
  for (auto &s : sites(inst, false)) {
    auto bad = [&](const char *what) { rep.add("locality", who(s) + ": " + what, {idOf(s)}); };
    if (s.op->kind == OpKind::Copy || s.op->kind == OpKind::Reduce) {
      const Mem &d = s.op->dst;
      if (direct) {
        if (d.owner != s.rank && d.buf != Buf::O) return bad("writes another rank's memory other than its output (direct)");
        for (auto &m : s.op->srcs)
          if (m.owner != s.rank) return bad("reads another rank's memory (the direct program reads locally)");
        continue;
      }
      if (d.owner != s.rank) {
        if (!push) return bad("writes another rank's memory (the throughput program pulls)");
        if ((d.buf != Buf::S && d.buf != Buf::Y) || d.region != s.rank)
          return bad("writes another rank's memory outside that rank's region of the writer (push)");
      }
      for (auto &m : s.op->srcs) {
        if ((m.buf == Buf::X || m.buf == Buf::O || m.buf == Buf::PK) && m.owner != s.rank)
          return bad("reads another rank's user buffer or packets");
        if (push && m.owner != s.rank) return bad("reads another rank's memory (the push program reads locally)");
      }
    }
    if (s.op->kind == OpKind::PacketPut && s.op->srcs[0].owner != s.rank) return bad("puts another rank's data");
  }
}

/// The waits that happen before op `pos` of actor `actor` of a role: the
/// actor's earlier waits and, through each earlier EDGE wait (copy-engine
/// form: a stream waiting on an event of the other stream), everything
/// before the record it pairs with.
void visibleWaits(const RoleInstance &ro, size_t actor, size_t pos, std::vector<const COp *> &out,
                  std::set<std::pair<size_t, size_t>> &seen) {
  if (!seen.insert({actor, pos}).second) return;
  const auto &ops = ro.ctas[actor].ops;
  for (size_t i = 0; i < pos && i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::Wait) continue;
    out.push_back(&ops[i]);
    if (ops[i].sym->sig != Sig::EDGE) continue;
    for (size_t b = 0; b < ro.ctas.size(); ++b)
      for (size_t m = 0; m < ro.ctas[b].ops.size(); ++m) {
        const COp &n = ro.ctas[b].ops[m];
        if (b != actor && n.kind == OpKind::Notify && n.sym->sig == Sig::EDGE && n.index == ops[i].index)
          visibleWaits(ro, b, m, out, seen);
      }
  }
}
std::vector<const COp *> visibleWaits(const RoleInstance &ro, size_t actor, size_t pos) {
  std::vector<const COp *> out;
  std::set<std::pair<size_t, size_t>> seen;
  visibleWaits(ro, actor, pos, out, seen);
  return out;
}

/// Direct program: a data op writing rank q's output (q != r) follows a
/// wait on ARRIVED from q of this call (in the same CTA, or for the
/// copy-engine form before an edge into its stream): q's stream reached the
/// call, so nothing earlier on it still reads or writes that output.
void arrivalBeforeRemoteWrite(const Instance &inst, Report &rep) {
  for (int r = 0; r < inst.n; ++r)
    for (auto &ro : inst.ranks[r].roles)
      for (size_t a = 0; a < ro.ctas.size(); ++a) {
        const auto &cta = ro.ctas[a];
        for (size_t i = 0; i < cta.ops.size(); ++i) {
          const COp &op = cta.ops[i];
          if (op.kind != OpKind::Copy && op.kind != OpKind::Reduce) continue;
          if (op.dst.buf != Buf::O || op.dst.owner == r || op.dst.len == 0) continue;
          bool arrived = false;
          for (const COp *w : visibleWaits(ro, a, i))
            arrived = arrived || (w->sym->sig == Sig::ARRIVED && w->peer == op.dst.owner);
          if (arrived) continue;
          rep.add("arrival",
                  who({&op, &ro.sym->name, r, 0, 0}) + " writes the output of rank " + std::to_string(op.dst.owner) +
                      " before waiting for ARRIVED from rank " + std::to_string(op.dst.owner) +
                      " (its previous call may still use that output)",
                  {op.sym->id});
          return;
        }
      }
}

/// Direct program: bytes another rank writes into r's output are read by r
/// only after a wait that acquires the writer's release covering them (the
/// first notify to r after the write in the writer's CTA), and before r's
/// kernel ends some CTA of r has acquired every such release (the output is
/// complete when the stream moves on).
void outputAcquire(const Instance &inst, Report &rep) {
  struct Release {
    int writer = -1;
    const COp *write = nullptr;
    const std::string *role = nullptr;
    Mem bytes;
    bool released = false;
    int sig = 0;
    uint32_t index = 0, round = 0;
  };
  std::vector<std::vector<Release>> into(size_t(inst.n)); // by output owner
  for (int w = 0; w < inst.n; ++w)
    for (auto &ro : inst.ranks[w].roles)
      for (auto &cta : ro.ctas)
        for (size_t i = 0; i < cta.ops.size(); ++i) {
          const COp &op = cta.ops[i];
          if ((op.kind != OpKind::Copy && op.kind != OpKind::Reduce) || op.dst.buf != Buf::O ||
              op.dst.owner == w || op.dst.len == 0)
            continue;
          Release rel{w, &op, &ro.sym->name, op.dst};
          for (size_t k = i + 1; k < cta.ops.size(); ++k) {
            const COp &n = cta.ops[k];
            if (n.kind != OpKind::Notify || n.arrayOwner != op.dst.owner) continue;
            rel.released = true, rel.sig = int(n.sym->sig), rel.index = n.index, rel.round = n.round;
            break;
          }
          if (!rel.released) {
            rep.add("acquire",
                    who({&op, &ro.sym->name, w, 0, 0}) + " writes the output of rank " +
                        std::to_string(op.dst.owner) + " and never notifies that rank afterwards (no release)",
                    {op.sym->id});
            return;
          }
          into[size_t(op.dst.owner)].push_back(rel);
        }
  auto covers = [](const COp &wt, const Release &rel) {
    return wt.kind == OpKind::Wait && wt.peer == rel.writer && int(wt.sym->sig) == rel.sig &&
           wt.index == rel.index && wt.round >= rel.round;
  };
  for (int r = 0; r < inst.n; ++r) {
    std::vector<bool> acquiredSomewhere(into[size_t(r)].size(), false);
    for (auto &ro : inst.ranks[r].roles)
      for (size_t a = 0; a < ro.ctas.size(); ++a) {
        const auto &cta = ro.ctas[a];
        for (size_t pos = 0; pos < cta.ops.size(); ++pos) {
          const COp &op = cta.ops[pos];
          if (op.kind == OpKind::Wait)
            for (size_t i = 0; i < into[size_t(r)].size(); ++i)
              acquiredSomewhere[i] = acquiredSomewhere[i] || covers(op, into[size_t(r)][i]);
          if (op.kind != OpKind::Copy && op.kind != OpKind::Reduce) continue;
          const std::vector<const COp *> waits = visibleWaits(ro, a, pos);
          for (auto &m : op.srcs) {
            if (m.buf != Buf::O || m.owner != r || m.len == 0) continue;
            for (auto &rel : into[size_t(r)]) {
              if (rel.bytes.off >= m.off + m.len || m.off >= rel.bytes.off + rel.bytes.len) continue;
              bool ok = false;
              for (const COp *wt : waits) ok = ok || covers(*wt, rel);
              if (ok) continue;
              rep.add("acquire",
                      who({&op, &ro.sym->name, r, 0, 0}) + " reads output bytes [" + std::to_string(m.off) + ", " +
                          std::to_string(m.off + m.len) + ") that rank " + std::to_string(rel.writer) +
                          " wrote (" + who({rel.write, rel.role, rel.writer, 0, 0}) + ") without an earlier wait on its " +
                          toString(Sig(rel.sig)) + " >= sig(e," + std::to_string(rel.round) + ")",
                      {op.sym->id, rel.write->sym->id});
              return;
            }
          }
        }
      }
    for (size_t i = 0; i < into[size_t(r)].size(); ++i) {
      if (acquiredSomewhere[i]) continue;
      const Release &rel = into[size_t(r)][i];
      rep.add("completion",
              "rank " + std::to_string(r) + "'s kernel may end before the bytes rank " + std::to_string(rel.writer) +
                  " writes into its output (" + who({rel.write, rel.role, rel.writer, 0, 0}) +
                  ") are acquired: no CTA of rank " + std::to_string(r) + " waits on " + toString(Sig(rel.sig)) +
                  " (index " + std::to_string(rel.index) + ") >= sig(e," + std::to_string(rel.round) + ")",
              {rel.write->sym->id});
      return;
    }
  }
}

} // namespace

Report verifyInstance(const Instance &inst) {
  Report rep;
  locality(inst, rep);
  pairing(inst, rep);
  sharedCounters(inst, rep);
  acquireBeforeRead(inst, rep);
  slotReuse(inst, rep);
  crossCall(inst, rep);
  if (inst.prog->regime == Regime::Direct) {
    arrivalBeforeRemoteWrite(inst, rep);
    outputAcquire(inst, rep);
  }
  return rep;
}

std::vector<SampleCall> sampleCalls(const CollectiveIR &ir, int n) {
  std::vector<SampleCall> v;
  uint32_t E = reducesKind(ir.kind) ? 4 : 1;
  auto add = [&](const std::string &label, uint64_t count) {
    CallArgs a;
    a.count = count;
    a.elemSize = E;
    a.root = n > 2 ? 1 : 0;
    for (int k = 0; k < n; ++k) a.counts.push_back(k % 3 == 1 ? 0 : count + k);
    a.matrix.assign(n, std::vector<uint64_t>(n));
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) a.matrix[p][q] = (p + q) % 4 == 1 ? 0 : count + (p * 7 + q) % 5;
    Sizes s = computeSizes(ir.kind, n, a);
    v.push_back({label, s, simGeometry(ir, s)});
  };
  add("1 element", 1);
  add("count not divisible by n", uint64_t(3 * n + 1));
  add("larger than staging", uint64_t(40 * n + 3));
  // Equal partitions of several engine chunks (the copy-engine form of the
  // reductions runs only those: engineApplies).
  add("even partitions", uint64_t(24 * n));
  return v;
}

Report verify(const CollectiveIR &ir) {
  Report all;
  for (const auto &[message, op] : loweringProblems(ir))
    all.add("lowering", message, op >= 0 ? std::vector<int>{op} : std::vector<int>{});
  for (const Program *p : programsOf(ir))
    for (auto &sc : sampleCalls(ir, ir.n)) {
      if (p->engine && !engineApplies(ir, sc.sizes)) continue;
      Instance inst = instantiate(ir, *p, sc.sizes, sc.geo, 2);
      Report r = verifyInstance(inst);
      for (auto &f : r.errors)
        all.add(f.rule, std::string(programName(*p)) + " program, n=" + std::to_string(ir.n) + ", " + sc.label +
                            ": " + f.message,
                f.ops);
    }
  return all;
}

} // namespace purlin::ir
