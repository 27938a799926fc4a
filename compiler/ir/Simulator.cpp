/// @file Simulator.cpp
/// @brief simulate(): one thread per (rank, role, CTA); each step runs one
/// concrete op atomically. Happens-before is tracked with vector clocks:
/// a Notify stores the notifier's clock with the value, a satisfied Wait
/// joins it, an Arrive is an acq_rel RMW on the counter's clock, and a
/// kernel boundary joins all CTAs of a rank. Every staging/Y byte records
/// its last writer (thread, clock, epoch, whether the writer was another
/// rank) and the reads since that write.
///
/// Remote writes (push) are visible to their reader only through a release
/// at system scope that covers them: a second clock `svc` per thread tracks
/// what is published at system scope. A Notify with fence.acq_rel.sys
/// publishes everything its CTA knows (svc = vc); without a fence only the
/// CTA's own writes (a gpu-scope arrive orders other CTAs' writes at gpu
/// scope only). Waits, arrives and kernel boundaries join both clocks.
#include "ir/Simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <unordered_map>

#include "ir/Printer.h"
#include "ir/Reference.h"

namespace purlin::ir {
namespace {

/// memcpy for ranges that may be empty (an empty vector's data() may be
/// null, which memcpy may not be passed even for 0 bytes: UBSan).
void copyBytes(void *dst, const void *src, std::size_t n) {
  if (n != 0) std::memcpy(dst, src, n);
}

using VC = std::vector<uint32_t>;
void join(VC &a, const VC &b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
}

struct Shadow {
  int wt = -1;   ///< writer thread (-1: never written)
  uint32_t wc = 0;
  uint64_t we = 0; ///< writer's epoch
  bool remote = false; ///< written by another rank (push): needs a fenced release
  std::vector<std::pair<int, uint32_t>> reads;
};

struct SigState {
  uint64_t value = 0;
  VC vc, svc;
};
struct Counter {
  uint32_t value = 0;
  VC vc, svc;
};

struct RankMem {
  Bytes staging[2];
  std::vector<Shadow> shadow[2];
  Bytes payload[2];
  /// Per 8-byte packet word of each half (full/empty packets): `full` = the
  /// call (epoch) whose put filled it, 0 = empty; `written` = the call of its
  /// last put (kept after it is emptied: its payload is what a read sees);
  /// `emptied` = the call whose poll last emptied it.
  std::vector<uint64_t> full[2], written[2], emptied[2];
  std::unordered_map<uint32_t, SigState> signals;
  std::map<int, Counter> counters;
  std::vector<Bytes> in, out; ///< per call
  /// Direct program: the one output buffer the calls share (graph replays
  /// reuse it; peers write into it) with its shadow; out[call] is its
  /// snapshot when the rank's kernel of that call ends.
  Bytes outNow;
  std::vector<Shadow> outShadow;
};

struct Thread {
  int rank = 0;
  const RoleInstance *role = nullptr;
  const CTAProgram *prog = nullptr;
  size_t pc = 0;
  int call = 0;
  bool atEnd = false, finished = false;
  bool isLast = false;
  int pendingReset = -1;
  double weight = 1;
  VC vc;
  VC svc; ///< what this CTA knows is published at system scope
};

class Sim {
public:
  Sim(const CollectiveIR &ir, const Program &prog, const CallArgs &args, const Geometry &geo, const SimOptions &o)
      : ir_(ir), args_(args), opts_(o), rng_(o.seed) {
    (void)prog;
    (void)geo;
  }

  SimResult run(const Instance &inst) {
    SimResult res;
    const int n = inst.n;
    direct_ = inst.prog->regime == Regime::Direct;
    res.launched = !inst.sizes.empty;
    // Inputs and reference outputs for every call.
    std::vector<uint64_t> inBytes = referenceInputBytes(ir_.kind, n, args_);
    for (int r = 0; r < n; ++r)
      if (inBytes[r] != inst.sizes.inTotal(r)) {
        res.report.add("internal", "input size of rank " + std::to_string(r) + " differs between the IR (" +
                                       std::to_string(inst.sizes.inTotal(r)) + ") and the reference (" +
                                       std::to_string(inBytes[r]) + ")",
                       {});
        return res;
      }
    mem_.assign(n, {});
    std::vector<std::vector<Bytes>> expect(opts_.calls);
    std::vector<std::vector<bool>> has(opts_.calls);
    for (int call = 0; call < opts_.calls; ++call) {
      std::vector<Bytes> ins(n);
      for (int r = 0; r < n; ++r) ins[r] = randomInput(inBytes[r]);
      expect[call] = referenceOutputs(ir_.kind, n, args_, ins, has[call]);
      for (int r = 0; r < n; ++r) {
        mem_[r].in.push_back(ins[r]);
        mem_[r].out.push_back(Bytes(inst.sizes.outTotal(r), 0xEE));
      }
    }
    for (int r = 0; r < n; ++r) {
      mem_[r].outNow.assign(inst.sizes.outTotal(r), 0xEE);
      mem_[r].outShadow.assign(inst.sizes.outTotal(r), {});
    }
    if (!inst.sizes.empty) {
      uint64_t half = inst.geo.region * (inst.geo.ySlots ? 2 : 1);
      for (auto &m : mem_)
        for (int h = 0; h < 2; ++h) {
          m.staging[h].assign(half, 0);
          m.shadow[h].assign(half, {});
          m.payload[h].assign(uint64_t(n) * inst.geo.packetRegion, 0);
          for (auto *v : {&m.full[h], &m.written[h], &m.emptied[h]}) v->assign(m.payload[h].size() / 8 + 1, 0);
        }
      if (!execute(inst, res)) return res;
    } else {
      // Nothing is launched; outputs stay as they were, which must be empty.
      for (int r = 0; r < n; ++r) mem_[r].out.assign(opts_.calls, Bytes());
    }
    for (int call = 0; call < opts_.calls; ++call)
      for (int r = 0; r < n; ++r) {
        if (!has[call][r]) continue;
        const Bytes &got = mem_[r].out[call], &want = expect[call][r];
        if (got.size() != want.size()) {
          res.report.add("wrong-result", "call " + std::to_string(call + 1) + ", rank " + std::to_string(r) +
                                             ": output has " + std::to_string(got.size()) + " bytes, expected " +
                                             std::to_string(want.size()),
                         {});
          return res;
        }
        for (size_t i = 0; i < got.size(); ++i)
          if (got[i] != want[i]) {
            res.report.add("wrong-result", "call " + std::to_string(call + 1) + " (epoch " + std::to_string(call + 1) +
                                               "), rank " + std::to_string(r) + ": output byte " + std::to_string(i) +
                                               " is " + std::to_string(got[i]) + ", expected " +
                                               std::to_string(want[i]) + " (independent reference)",
                           {});
            return res;
          }
      }
    return res;
  }

private:
  const CollectiveIR &ir_;
  CallArgs args_;
  SimOptions opts_;
  std::mt19937_64 rng_;
  std::vector<RankMem> mem_;
  std::vector<Thread> th_;
  const Instance *inst_ = nullptr;
  bool direct_ = false; ///< direct program: outputs are shared memory (shadowed, persistent across calls)

  Bytes randomInput(uint64_t len) {
    Bytes b(len);
    if (args_.elemSize == 4) {
      std::uniform_real_distribution<float> d(-8.f, 8.f);
      for (uint64_t i = 0; i + 4 <= len; i += 4) {
        float f = d(rng_);
        std::memcpy(b.data() + i, &f, 4);
      }
    } else {
      for (auto &x : b) x = uint8_t(rng_());
    }
    return b;
  }

  /// The value a Notify writes and a Wait expects: sig(e, round), or 1 for
  /// a copy-engine flag (a stream memory operation's literal).
  static uint64_t expected(const COp &op, uint64_t e) { return op.one ? 1 : sigValue(e, op.round); }

  std::string where(const Thread &t, const COp &op) {
    return describe(op, t.role->sym->name, t.rank) + " cta " + std::to_string(t.prog - t.role->ctas.data()) +
           ", call " + std::to_string(t.call + 1);
  }

  bool ready(const Thread &t) {
    if (t.pendingReset >= 0) return true;
    const COp &op = t.prog->ops[t.pc];
    if (op.last && !t.isLast) return true;
    uint64_t e = uint64_t(t.call) + 1;
    if (op.kind == OpKind::Wait) {
      auto it = mem_[t.rank].signals.find(op.index);
      return it != mem_[t.rank].signals.end() && it->second.value >= expected(op, e);
    }
    if (op.kind == OpKind::PacketPoll) {
      // Ready once every word of the slice is full, as in the runtime (a
      // word polled twice in one call would wait forever there, so it does
      // here too: slices are 16-byte aligned, no two share a word).
      const RankMem &rm = mem_[op.srcs[0].owner];
      const int h = int(e & 1);
      bool ok = true;
      forPacketWords(op, op.srcs[0], [&](uint64_t w) { ok = ok && rm.full[h][w] != 0; });
      return ok;
    }
    return true;
  }

  /// The 8-byte packet words of `m`: every word one of its bytes is in
  /// (none for an empty slice); a zero-byte flow still carries one marker
  /// word (the region's first).
  template <class F> static void forPacketWords(const COp &op, const Mem &m, F f) {
    if (m.len)
      for (uint64_t w = m.off / 8; w <= (m.off + m.len - 1) / 8; ++w) f(w);
    else if (op.emptyFlow)
      f(m.off / 8);
  }

  bool read(Thread &t, int ti, const COp &op, const Mem &m, Bytes &out, SimResult &res) {
    uint64_t e = uint64_t(t.call) + 1;
    int h = int(e & 1);
    RankMem &rm = mem_[m.owner];
    out.resize(m.len);
    switch (m.buf) {
    case Buf::X: copyBytes(out.data(), rm.in[t.call].data() + m.off, m.len); return true;
    case Buf::O:
      if (direct_) return shadowRead(t, ti, op, m, rm.outNow, rm.outShadow, out, res);
      copyBytes(out.data(), rm.out[t.call].data() + m.off, m.len);
      return true;
    case Buf::PK:
      for (uint64_t i = 0; i < m.len; ++i) {
        uint64_t b = m.off + i;
        if (rm.written[h][b / 8] != e || rm.emptied[h][b / 8] != e) {
          res.report.add("race", where(t, op) + ": reads packet payload at byte " + std::to_string(b) +
                                     " last put in call " + std::to_string(rm.written[h][b / 8]) +
                                     " and last polled in call " + std::to_string(rm.emptied[h][b / 8]) +
                                     ", not both in this call " + std::to_string(e) + " (not polled, or overwritten)",
                         {op.sym->id});
          return false;
        }
        out[i] = rm.payload[h][b];
      }
      return true;
    case Buf::S: case Buf::Y: return shadowRead(t, ti, op, m, rm.staging[h], rm.shadow[h], out, res);
    }
    return true;
  }

  /// A read of shared memory (S/Y; the direct program's outputs): every
  /// byte must have been written in this call by a write this thread's
  /// clock covers (at system scope for another rank's write).
  bool shadowRead(Thread &t, int ti, const COp &op, const Mem &m, const Bytes &data, std::vector<Shadow> &shadow,
                  Bytes &out, SimResult &res) {
    uint64_t e = uint64_t(t.call) + 1;
    {
      for (uint64_t i = 0; i < m.len; ++i) {
        Shadow &sh = shadow[m.off + i];
        std::string what;
        if (sh.wt < 0) what = "was never written";
        else if (sh.we != e) what = "holds data of call " + std::to_string(sh.we) + ", not of this call";
        else if (sh.wc > t.vc[size_t(sh.wt)])
          what = "was written by rank " + std::to_string(th_[size_t(sh.wt)].rank) + " (role " +
                 th_[size_t(sh.wt)].role->sym->name + ") without a release this read acquired";
        else if (sh.remote && sh.wc > t.svc[size_t(sh.wt)])
          what = "was written remotely by rank " + std::to_string(th_[size_t(sh.wt)].rank) + " (role " +
                 th_[size_t(sh.wt)].role->sym->name + ", another CTA than the releaser) and released without "
                 "fence.acq_rel.sys";
        if (!what.empty()) {
          res.report.add("race", where(t, op) + ": read-before-release: byte " + std::to_string(m.off + i) + " of " +
                                     toString(m.buf) + " of rank " + std::to_string(m.owner) + " " + what,
                         {op.sym->id});
          return false;
        }
        sh.reads.push_back({ti, t.vc[size_t(ti)]});
        out[i] = data[m.off + i];
      }
      return true;
    }
  }

  bool write(Thread &t, int ti, const COp &op, const Mem &m, const Bytes &data, SimResult &res) {
    uint64_t e = uint64_t(t.call) + 1;
    int h = int(e & 1);
    RankMem &rm = mem_[m.owner];
    switch (m.buf) {
    case Buf::X: case Buf::O:
      if (direct_ && m.buf == Buf::O) return shadowWrite(t, ti, op, m, rm.outNow, rm.outShadow, data, res);
      copyBytes(rm.out[t.call].data() + m.off, data.data(), m.len);
      return true;
    case Buf::PK: {
      // A put over a word still full (from an earlier call, or put twice in
      // this one) destroys payload its reader has not polled yet, or leaves
      // a full word behind once the reader has emptied the first.
      bool ok = true;
      forPacketWords(op, m, [&](uint64_t w) {
        if (ok && rm.full[h][w] != 0) {
          res.report.add("race", where(t, op) + ": puts packet word " + std::to_string(w) +
                                     " still full with call " + std::to_string(rm.full[h][w]) +
                                     "'s payload (not yet polled)",
                         {op.sym->id});
          ok = false;
        }
      });
      if (!ok) return false;
      for (uint64_t i = 0; i < m.len; ++i) rm.payload[h][m.off + i] = data[i];
      forPacketWords(op, m, [&](uint64_t w) { rm.full[h][w] = e, rm.written[h][w] = e; });
      return true;
    }
    case Buf::S: case Buf::Y: return shadowWrite(t, ti, op, m, rm.staging[h], rm.shadow[h], data, res);
    }
    return true;
  }

  /// A write of shared memory: every earlier read and write of these bytes
  /// by another thread must happen before it.
  bool shadowWrite(Thread &t, int ti, const COp &op, const Mem &m, Bytes &mem, std::vector<Shadow> &shadow,
                   const Bytes &data, SimResult &res) {
    uint64_t e = uint64_t(t.call) + 1;
    {
      for (uint64_t i = 0; i < m.len; ++i) {
        Shadow &sh = shadow[m.off + i];
        for (auto &[rt, rc] : sh.reads)
          if (rt != ti && rc > t.vc[size_t(rt)]) {
            res.report.add("race", where(t, op) + ": write-after-read: overwrites byte " + std::to_string(m.off + i) +
                                       " of " + toString(m.buf) + " that rank " + std::to_string(th_[size_t(rt)].rank) +
                                       " (role " + th_[size_t(rt)].role->sym->name +
                                       ") read without that read being released to this writer",
                           {op.sym->id});
            return false;
          }
        if (sh.wt >= 0 && sh.wt != ti && sh.wc > t.vc[size_t(sh.wt)]) {
          res.report.add("race", where(t, op) + ": write-write race on byte " + std::to_string(m.off + i) + " of " +
                                     toString(m.buf),
                         {op.sym->id});
          return false;
        }
        sh.wt = ti;
        sh.wc = t.vc[size_t(ti)];
        sh.we = e;
        sh.remote = t.rank != m.owner;
        sh.reads.clear();
        mem[m.off + i] = data[i];
      }
      return true;
    }
  }

  /// Direct program, rank r's kernel of call `call` ended (every CTA done;
  /// `vc`/`svc` the joined clocks): every byte of its output was written in
  /// this call by a write that happens before the end (for another rank's
  /// write: released at system scope). The output is then read by whatever
  /// follows on r's stream (the snapshot): a later write of it must happen
  /// after this end, i.e. after r's CTAs of the next call arrived.
  bool endOfCall(int r, int call, const VC &vc, const VC &svc, SimResult &res) {
    RankMem &rm = mem_[r];
    uint64_t e = uint64_t(call) + 1;
    int first = -1;
    for (size_t i = 0; i < th_.size() && first < 0; ++i)
      if (th_[i].rank == r) first = int(i);
    for (uint64_t b = 0; b < rm.outNow.size(); ++b) {
      Shadow &sh = rm.outShadow[b];
      std::string what;
      if (sh.wt < 0 || sh.we != e)
        what = "was not written in this call" + (sh.wt < 0 ? std::string() : " (it holds data of call " + std::to_string(sh.we) + ")");
      else if (sh.wc > vc[size_t(sh.wt)])
        what = "was written by rank " + std::to_string(th_[size_t(sh.wt)].rank) + " (role " +
               th_[size_t(sh.wt)].role->sym->name + ") without a release any CTA of rank " + std::to_string(r) +
               " acquired";
      else if (sh.remote && sh.wc > svc[size_t(sh.wt)])
        what = "was written remotely by rank " + std::to_string(th_[size_t(sh.wt)].rank) +
               " and released without fence.acq_rel.sys";
      if (!what.empty()) {
        std::vector<int> ids;
        if (sh.wt >= 0) {
          const Thread &w = th_[size_t(sh.wt)];
          if (w.pc > 0 && w.pc <= w.prog->ops.size()) ids.push_back(w.prog->ops[w.pc - 1].sym->id);
        }
        res.report.add("race", "rank " + std::to_string(r) + ", call " + std::to_string(call + 1) +
                                   ": its kernel ended but output byte " + std::to_string(b) + " " + what,
                       ids);
        return false;
      }
      sh.reads.push_back({first, vc[size_t(first)]});
    }
    rm.out[size_t(call)] = rm.outNow;
    return true;
  }

  bool step(int ti, SimResult &res) {
    Thread &t = th_[size_t(ti)];
    t.vc[size_t(ti)]++;
    RankMem &rm = mem_[t.rank];
    if (t.pendingReset >= 0) {
      Counter &c = rm.counters[t.pendingReset];
      c.value = 0;
      c.vc = t.vc;
      c.svc = t.svc;
      t.pendingReset = -1;
      return true;
    }
    const COp &op = t.prog->ops[t.pc++];
    uint64_t e = uint64_t(t.call) + 1;
    if (op.last && !t.isLast) return true;
    switch (op.kind) {
    case OpKind::Copy: case OpKind::PacketPut: {
      Bytes b;
      if (!read(t, ti, op, op.srcs[0], b, res)) return false;
      return write(t, ti, op, op.dst, b, res);
    }
    case OpKind::Reduce: {
      std::vector<Bytes> srcs(op.srcs.size());
      for (size_t i = 0; i < op.srcs.size(); ++i)
        if (!read(t, ti, op, op.srcs[i], srcs[i], res)) return false;
      Bytes out(op.dst.len);
      for (uint64_t i = 0; i + 4 <= op.dst.len; i += 4) {
        float acc;
        std::memcpy(&acc, srcs[0].data() + i, 4);
        for (size_t p = 1; p < srcs.size(); ++p) {
          float v;
          std::memcpy(&v, srcs[p].data() + i, 4);
          acc += v;
        }
        std::memcpy(out.data() + i, &acc, 4);
      }
      return write(t, ti, op, op.dst, out, res);
    }
    case OpKind::Notify: {
      SigState &s = mem_[op.arrayOwner].signals[op.index];
      s.value = expected(op, e);
      s.vc = t.vc;
      s.svc = op.sym->fence ? t.vc : t.svc;
      s.svc[size_t(ti)] = t.vc[size_t(ti)]; // st.release.sys covers the CTA's own writes
      return true;
    }
    case OpKind::Reset: { // copy-engine flags of this rank back to 0
      for (uint32_t i = 0; i < uint32_t(kMaxEngineChunks); ++i) {
        auto it = rm.signals.find(op.index + i);
        if (it != rm.signals.end()) it->second.value = 0;
      }
      return true;
    }
    case OpKind::Wait: {
      SigState &s = rm.signals[op.index];
      join(t.vc, s.vc);
      if (!s.svc.empty()) join(t.svc, s.svc);
      return true;
    }
    case OpKind::PacketPoll: {
      // Every word of the slice is full (ready()): it must be this call's;
      // the poll empties it.
      const Mem &m = op.srcs[0];
      RankMem &pm = mem_[m.owner];
      const int h = int(e & 1);
      bool ok = true;
      forPacketWords(op, m, [&](uint64_t w) {
        if (ok && pm.full[h][w] != e) {
          res.report.add("race", where(t, op) + ": polls packet word " + std::to_string(w) + " full with call " +
                                     std::to_string(pm.full[h][w]) + "'s payload as this call's",
                         {op.sym->id});
          ok = false;
        }
        pm.full[h][w] = 0;
        pm.emptied[h][w] = e;
      });
      return ok;
    }
    case OpKind::Arrive: {
      Counter &c = rm.counters[op.counter];
      if (c.vc.empty()) c.vc.assign(t.vc.size(), 0), c.svc.assign(t.vc.size(), 0);
      join(t.vc, c.vc);
      join(c.vc, t.vc);
      join(t.svc, c.svc);
      join(c.svc, t.svc);
      uint32_t old = c.value++;
      if (old >= uint32_t(op.arrivals)) {
        res.report.add("counter", where(t, op) + ": counter " + std::to_string(op.counter) + " reached " +
                                      std::to_string(old + 1) + " arrivals of " + std::to_string(op.arrivals) +
                                      " (two uses of one counter overlap)",
                       {op.sym->id});
        return false;
      }
      t.isLast = old + 1 == uint32_t(op.arrivals);
      if (t.isLast) t.pendingReset = op.counter;
      return true;
    }
    }
    return true;
  }

  std::string blockedText(const Thread &t) {
    const COp &op = t.prog->ops[t.pc];
    uint64_t e = uint64_t(t.call) + 1;
    std::string s = where(t, op) + " waits";
    if (op.kind == OpKind::Wait) {
      auto it = mem_[t.rank].signals.find(op.index);
      uint64_t obs = it == mem_[t.rank].signals.end() ? 0 : it->second.value;
      s += " on " + std::string(toString(op.sym->sig)) + " index " + std::to_string(op.index) + " from rank " +
           std::to_string(op.peer) + ": expected >= " + std::to_string(expected(op, e)) +
           (op.one ? std::string(" (a copy-engine flag)")
                   : " (sig(" + std::to_string(e) + "," + std::to_string(op.round) + "))") +
           ", observed " + std::to_string(obs);
    } else {
      s += " for full packets from rank " + std::to_string(op.peer) + " (call " + std::to_string(e) + ")";
    }
    return s;
  }

  /// At rank r's kernel end of call e: every packet word a peer filled for
  /// this call was polled, hence emptied, by r (the runtime relies on every
  /// word being empty when its half is next used).
  bool packetsEmptied(int r, uint64_t e, SimResult &res) {
    const std::vector<uint64_t> &full = mem_[size_t(r)].full[e & 1];
    for (size_t w = 0; w < full.size(); ++w)
      if (full[w] == e) {
        res.report.add("race", "rank " + std::to_string(r) + " ended call " + std::to_string(e) + " with packet word " +
                                   std::to_string(w) + " still full (put, never polled)",
                       {});
        return false;
      }
    return true;
  }

  bool execute(const Instance &inst, SimResult &res) {
    inst_ = &inst;
    th_.clear();
    for (int r = 0; r < inst.n; ++r)
      for (auto &ro : inst.ranks[r].roles)
        for (auto &c : ro.ctas) {
          Thread t;
          t.rank = r;
          t.role = &ro;
          t.prog = &c;
          th_.push_back(t);
        }
    const size_t T = th_.size();
    int late = opts_.lateRank ? int(rng_() % uint64_t(inst.n)) : -1;
    uint64_t lateUntil = opts_.lateRank ? rng_() % 4000 : 0;
    for (auto &t : th_) {
      t.vc.assign(T, 0);
      t.svc.assign(T, 0);
      t.weight = std::pow(2.0, double(rng_() % 7));
      if (t.rank == late) t.weight = 0.05;
    }
    std::vector<int> cand;
    for (uint64_t stepNo = 0;; ++stepNo) {
      if (stepNo > opts_.maxSteps) {
        // Some CTA could still proceed (a deadlock is reported below, when
        // none can): the run is too long for the budget, not stuck.
        res.report.add("step-budget",
                       "step budget exhausted (not a deadlock): " + std::to_string(opts_.maxSteps) + " steps", {});
        return false;
      }
      if (stepNo % 997 == 0)
        for (auto &t : th_)
          if (t.rank != late) t.weight = std::pow(2.0, double(rng_() % 7));
      // Kernel ends: every CTA of a rank done with call k -> call k+1 starts.
      for (int r = 0; r < inst.n; ++r) {
        bool all = true, any = false;
        for (auto &t : th_)
          if (t.rank == r) any = true, all &= t.atEnd && !t.finished;
        if (!any || !all) continue;
        VC j(T, 0), sj(T, 0);
        int call = -1;
        for (auto &t : th_)
          if (t.rank == r) join(j, t.vc), join(sj, t.svc), call = t.call;
        if (direct_ && !endOfCall(r, call, j, sj, res)) return false;
        if (!packetsEmptied(r, uint64_t(call) + 1, res)) return false;
        for (auto &t : th_) {
          if (t.rank != r) continue;
          t.vc = j;
          t.svc = j; // the kernel's end publishes all its writes (stream order)
          t.atEnd = false;
          t.isLast = false;
          if (++t.call == opts_.calls) t.finished = true, t.atEnd = true;
          t.pc = 0;
        }
      }
      cand.clear();
      bool allDone = true;
      bool onlyLate = true;
      for (size_t i = 0; i < T; ++i) {
        Thread &t = th_[i];
        if (t.finished) continue;
        allDone = false;
        if (t.atEnd) continue;
        if (t.pc == t.prog->ops.size() && t.pendingReset < 0) {
          t.atEnd = true;
          continue;
        }
        if (ready(t)) {
          cand.push_back(int(i));
          if (t.rank != late) onlyLate = false;
        }
      }
      if (allDone) {
        res.steps = stepNo;
        return true;
      }
      if (cand.empty()) {
        bool boundary = false; // every CTA of some rank ended its kernel: the next call starts
        for (int r = 0; r < inst.n; ++r) {
          bool all = true;
          for (auto &t : th_)
            if (t.rank == r) all &= t.atEnd && !t.finished;
          boundary |= all;
        }
        if (boundary) continue;
        std::string msg = "no CTA can proceed:";
        std::vector<int> ids;
        for (auto &t : th_)
          if (!t.finished && !t.atEnd) {
            msg += "\n    " + blockedText(t);
            ids.push_back(t.prog->ops[t.pc].sym->id);
          }
        res.report.add("deadlock", msg, ids);
        return false;
      }
      double total = 0;
      for (int i : cand)
        if (!(stepNo < lateUntil && th_[size_t(i)].rank == late && !onlyLate)) total += th_[size_t(i)].weight;
      double x = std::uniform_real_distribution<double>(0, total)(rng_);
      int pick = cand.back();
      for (int i : cand) {
        if (stepNo < lateUntil && th_[size_t(i)].rank == late && !onlyLate) continue;
        x -= th_[size_t(i)].weight;
        if (x <= 0) {
          pick = i;
          break;
        }
      }
      if (!step(pick, res)) return false;
    }
  }
};

} // namespace

SimResult simulate(const CollectiveIR &ir, const Program &prog, const CallArgs &args, const Geometry &geo,
                   const SimOptions &opts) {
  Sizes s = computeSizes(ir.kind, ir.n, args);
  const uint64_t limit = kMaxSimulateRankBytes;
  for (int r = 0; r < s.n; ++r)
    if (s.inTotal(r) > limit || s.outTotal(r) > limit)
      throw IRError{"the simulator models small calls: rank " + std::to_string(r) + " would move " +
                    std::to_string(std::max(s.inTotal(r), s.outTotal(r))) + " bytes (limit " +
                    std::to_string(limit) + ")"};
  Instance inst = instantiate(ir, prog, s, geo, opts.maxCtas);
  Sim sim(ir, prog, args, geo, opts);
  return sim.run(inst);
}

CallArgs argsForBytes(Kind k, int n, uint64_t bytes, uint64_t seed) {
  CallArgs a;
  a.elemSize = reducesKind(k) ? 4 : 1;
  uint64_t elems = bytes / a.elemSize;
  bool perTotal = isCompose(k);
  a.count = perTotal ? elems : (elems == 0 ? 0 : std::max<uint64_t>(1, elems / uint64_t(n)));
  a.root = int(seed % uint64_t(n));
  uint64_t base = elems / uint64_t(n);
  for (int q = 0; q < n; ++q)
    a.counts.push_back(elems == 0 ? 0 : (q % 3 == 1 ? 0 : base + (uint64_t(q) * 5 + seed) % 3 + (q == 0)));
  a.matrix.assign(n, std::vector<uint64_t>(n, 0));
  for (int p = 0; p < n; ++p)
    for (int q = 0; q < n; ++q)
      a.matrix[p][q] = elems == 0 ? 0 : ((p + q) % 4 == 1 ? 0 : base + (uint64_t(p) * 7 + q + seed) % 4);
  return a;
}

Geometry simGeometry(const CollectiveIR &ir, const Sizes &s) {
  bool comp = isCompose(ir.kind);
  bool packedIn = hasPackedInput(ir.kind);
  Geometry g;
  if (ir.throughput.transfer == Transfer::Push) { // 2 slots per source region (and per Y region)
    g = computeGeometry(ir, s, 16, (comp ? 2 : 1) * uint64_t(s.n - 1) * 2 * 16);
  } else {
    uint64_t slots = std::max(3, packedIn ? 3 : s.n); // slots >= partitions staged per chunk, + 1
    g = computeGeometry(ir, s, 16, (comp ? 2 : 1) * slots * 16);
  }
  // Direct program: rounds of 16..32 bytes, so small slices have several.
  g.directRoundMin = 16;
  g.directRoundMax = 32;
  // Copy-engine form: engine chunks of 16 bytes and more, so small
  // partitions have several.
  g.engineMinChunk = 16;
  return g;
}

} // namespace purlin::ir
