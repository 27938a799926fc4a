/// @file EmitDirect.cpp
/// @brief printDirectProgram(): the direct program's kernel form, printed
/// op by op from the SNAC IR (see EmitDirect.h).
///
/// Printed shapes (docs/codegen.md "Direct program"): CTA c of C owns
/// slice c (sliceBegin/sliceSize over C) of every partition and signals
/// with index c; its waits are CTA-collective (thread 0 polls, a barrier
/// shares the verdict), its notifies follow a CTA barrier (fence.acq_rel.sys
/// where the IR has it, then a release per peer). Data moves through the
/// Atom's workspace-free operations (docs/atom.md): one source to many
/// destinations (Atom::copyToMany) for AllGather, interleaved pairs
/// (Atom::copyPairs) for AllToAll, a two-source reduction (Atom::reducePair,
/// the pair's loop inlined in a kernel for one pair) for the two-rank
/// reductions (the measured shapes, bench/NOTES.md E9; the runtime's
/// hand-written program is at commit cfcd7a0).
#include "codegen/EmitDirect.h"

#include <sstream>

#include "codegen/Cite.h"
#include "codegen/EmitInstances.h"
#include "codegen/Spelling.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::Access;
using ir::Buf;
using ir::Cond;
using ir::Domain;
using ir::Op;
using ir::OpKind;
using ir::RankRef;
using ir::RoundOf;
using ir::Sig;
using ir::SlotSpace;
using ir::Stmt;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw EmitError("direct program: " + ir::opLine(op) + ": " + why);
}
void expect(bool ok, const Op &op, const std::string &why) {
  if (!ok) unsupported(op, why);
}

bool is(const Access &a, Buf b, RankRef owner, RankRef part, bool rounded) {
  return a.buf == b && a.owner == owner && a.part == part && a.rounded == rounded && !a.chunked;
}

/// A notify of `sig` with index `sig`[r][cta] to every peer.
void checkNotify(const Op &op, Sig sig, bool fence, RoundOf round) {
  expect(op.kind == OpKind::Notify && op.sig == sig && op.slotSpace == SlotSpace::Cta, op,
         std::string("expected a notify of ") + ir::toString(sig) + "[r][cta]");
  expect(op.var == RankRef::K && op.target == RankRef::K && op.domain == Domain::Others, op,
         "a direct notify goes to every peer k in others(r)");
  expect(op.fence == fence, op, fence ? "a notify after data writes fences first" : "the arrive notify has no data to publish");
  expect(op.round == round && !op.last && op.onlyOn == ir::RunsOn::All, op, "unexpected round or rank condition");
}
/// A wait on `sig`[p][cta] from every peer.
void checkWait(const Op &op, Sig sig, RoundOf round) {
  expect(op.kind == OpKind::Wait && op.sig == sig && op.slotSpace == SlotSpace::Cta, op,
         std::string("expected a wait on ") + ir::toString(sig) + "[p][cta]");
  expect(op.var == RankRef::P && op.sigSrc == RankRef::P && op.domain == Domain::Others, op,
         "a direct wait hears every peer p in others(r)");
  expect(op.round == round && op.onlyOn == ir::RunsOn::All, op, "unexpected round or rank condition");
}
/// The op runs for round j only when j < rounds(X_r[part]).
void checkInRound(const Op &op, RankRef part) {
  expect(op.cond == Cond::InRound && is(op.roundOf, Buf::X, RankRef::R, part, false), op,
         std::string("expected `if j < rounds(X_r[") + ir::toString(part) + "])`");
}

/// The role's ops by shape.
struct Shape {
  const Op *arrive = nullptr, *arrived = nullptr;   ///< notify / wait ARRIVED
  // Copy form.
  const Op *copy = nullptr, *put = nullptr, *putWait = nullptr;
  // Two-rank reduction form (a rounds loop).
  const Op *push = nullptr, *pushPut = nullptr, *ownWait = nullptr, *reduce = nullptr;
  const Op *back = nullptr, *backPut = nullptr, *backWait = nullptr;  ///< AllReduce
  std::vector<const Op *> order;
};

Shape recognise(const ir::Role &role) {
  Shape sh;
  const auto &b = role.body;
  auto op = [&](std::size_t i) -> const Op & {
    if (i >= b.size() || b[i].isLoop) throw EmitError("direct program: role " + role.name + ": statement " +
                                                       std::to_string(i) + " is not an op of a known shape");
    return b[i].op;
  };
  if (b.size() < 3) throw EmitError("direct program: the role arrives, then moves data");
  checkNotify(op(0), Sig::ARRIVED, false, RoundOf::Zero);
  checkWait(op(1), Sig::ARRIVED, RoundOf::Zero);
  sh.arrive = &op(0), sh.arrived = &op(1);
  sh.order = {sh.arrive, sh.arrived};
  if (!b[2].isLoop) {
    // Copy form: one copy of the slice to every destination, then PUT.
    expect(b.size() == 5, op(2), "the copy form is copy, PUT, wait PUT");
    const Op &c = op(2);
    expect(c.kind == OpKind::Copy && c.var == RankRef::K && c.domain == Domain::RingSelf && c.cond == Cond::Always, c,
           "the copy writes every rank's output, k in r+1..r (mod n)");
    expect(is(c.dst, Buf::O, RankRef::K, RankRef::R, false), c, "the copy writes block r of O_k");
    expect(is(c.src, Buf::X, RankRef::R, RankRef::None, false) || is(c.src, Buf::X, RankRef::R, RankRef::K, false), c,
           "the copy reads X_r (AllGather) or X_r[k] (AllToAll)");
    checkNotify(op(3), Sig::PUT, true, RoundOf::Zero);
    checkWait(op(4), Sig::PUT, RoundOf::Zero);
    sh.copy = &c, sh.put = &op(3), sh.putWait = &op(4);
    sh.order.insert(sh.order.end(), {sh.copy, sh.put, sh.putWait});
    return sh;
  }
  // Two-rank reduction form.
  const Stmt &loop = b[2];
  auto bad = [&](const std::string &why) -> EmitError {
    return EmitError("direct program: the rounds loop " + why);
  };
  if (!loop.rounds || loop.var != RankRef::None || loop.chunks) throw bad("runs over the rounds of the CTA's slices");
  const auto &lb = loop.body;
  for (const Stmt &s : lb)
    if (s.isLoop) throw bad("holds ops only");
  if (lb.size() != 4 && lb.size() != 6) throw bad("pushes, publishes, waits and reduces (then writes back)");
  const bool ar = lb.size() == 6;
  const Op &push = lb[0].op, &pushPut = lb[1].op, &ownWait = lb[2].op, &red = lb[3].op;
  expect(push.kind == OpKind::Copy && push.var == RankRef::K && push.domain == Domain::Others, push,
         "round j of partition k goes to every peer k");
  expect(is(push.src, Buf::X, RankRef::R, RankRef::K, true) &&
             (is(push.dst, Buf::O, RankRef::K, RankRef::None, true) || is(push.dst, Buf::O, RankRef::K, RankRef::K, true)),
         push, "the push writes X_r[k][round j] into O_k (its partition k)");
  checkInRound(push, RankRef::K);
  checkNotify(pushPut, Sig::PUT, true, RoundOf::Cur);
  checkInRound(pushPut, RankRef::K);
  checkWait(ownWait, Sig::PUT, RoundOf::Cur);
  checkInRound(ownWait, RankRef::R);
  const RankRef ownPart = push.dst.part == RankRef::K ? RankRef::R : RankRef::None;
  expect(red.kind == OpKind::Reduce && !red.step && red.var == RankRef::P && red.domain == Domain::All &&
             red.hasSrcSelf && is(red.dst, Buf::O, RankRef::R, ownPart, true) &&
             is(red.src, Buf::O, RankRef::R, ownPart, true) && is(red.srcSelf, Buf::X, RankRef::R, RankRef::R, true),
         red, "the reduction combines X_r[r] with what landed in O_r, in place");
  checkInRound(red, RankRef::R);
  sh.push = &push, sh.pushPut = &pushPut, sh.ownWait = &ownWait, sh.reduce = &red;
  sh.order.insert(sh.order.end(), {sh.push, sh.pushPut, sh.ownWait, sh.reduce});
  if (ar) {
    const Op &back = lb[4].op, &backPut = lb[5].op;
    expect(back.kind == OpKind::Copy && back.var == RankRef::K && back.domain == Domain::Others &&
               is(back.dst, Buf::O, RankRef::K, RankRef::R, true) && is(back.src, Buf::O, RankRef::R, RankRef::R, true),
           back, "the write-back copies the reduced round into every peer's output");
    checkInRound(back, RankRef::R);
    // The printed write-back is the reduction's second store, as the IR records it.
    expect(back.fusedInto == red.id, back, "the write-back is not fused into the reduction (the pass fuseWriteBack)");
    checkNotify(backPut, Sig::BACK, true, RoundOf::Cur);
    checkInRound(backPut, RankRef::R);
    sh.back = &back, sh.backPut = &backPut;
    sh.order.insert(sh.order.end(), {sh.back, sh.backPut});
  }
  if (ar != (b.size() == 4)) throw EmitError("direct program: a write-back ends with a wait for the peer's last BACK");
  if (ar) {
    const Op &w = op(3);
    checkWait(w, Sig::BACK, RoundOf::Last);
    expect(w.cond == Cond::HasRounds && is(w.roundOf, Buf::X, RankRef::R, RankRef::P, false), w,
           "the last BACK is awaited when partition p has rounds");
    sh.backWait = &w;
    sh.order.push_back(sh.backWait);
  } else if (b.size() != 3) {
    throw EmitError("direct program: nothing follows the rounds loop of a ReduceScatter");
  }
  return sh;
}

class Printer {
public:
  Printer(const std::string &id, const Shape &sh) : id_(id), sh_(sh) {}

  DirectCode print() {
    DirectCode code;
    code.kernel = id_ + "_directKernel";
    code.reduces = sh_.reduce != nullptr;
    for (const Op *op : sh_.order) code.ops.push_back(op->id);
    o_ << "/// Role direct (CTA c of C: slice c of every partition, signals with index c; IR ops ";
    for (std::size_t i = 0; i < sh_.order.size(); ++i) o_ << (i ? ", %" : "%") << sh_.order[i]->id;
    o_ << ").\n";
    o_ << "template <int Pair>\n"
       << "__device__ void " << id_ << "_direct(const DeviceComm& dc, const Plan& pl, const DirectPeers& peers,\n"
       << "    const std::byte* in, std::byte* out, uint64_t e) {\n"
       << "  const int r = pl.rank, c = int(blockIdx.x), C = int(gridDim.x);\n"
       << "  [[maybe_unused]] const int n = pl.n;\n"
       << "  (void)out;\n"
       << "  const atom::Slice s{threadIdx.x, blockDim.x};\n";
    if (code.reduces) o_ << "  " << kPairReductionStatement << "\n";
    arrive();
    if (sh_.copy) copyForm();
    else reduceForm();
    o_ << "}\n\n";
    kernel();
    code.text = o_.str();
    return code;
  }

private:
  const std::string &id_;
  const Shape &sh_;
  std::ostringstream o_;

  static const char *indexFn(Sig s) {
    return s == Sig::ARRIVED ? "arrivedIndex" : s == Sig::PUT ? "putIndex" : "backIndex";
  }

  /// A CTA's notify to every peer (after a CTA barrier when it publishes data).
  void notify(const Op &op, const std::string &pad, const std::string &value, const std::string &peerLoop) {
    o_ << cite(op, pad);
    if (op.fence) o_ << pad << "__syncthreads();  // this CTA's writes of the round are done\n";
    o_ << pad << "if (threadIdx.x == 0) {\n";
    if (op.fence) o_ << pad << "  arch::fenceAcqRelSys();  // publish them at system scope\n";
    o_ << pad << "  " << peerLoop << " arch::stReleaseSys(dc.signals[k] + " << indexFn(op.sig) << "(r, c), " << value
       << ");\n"
       << pad << "}\n";
  }
  /// A CTA-collective wait on every peer; `onFail` runs in every thread when a checked wait gave up.
  void wait(const Op &op, const std::string &pad, const std::string &value, const std::string &onFail) {
    o_ << cite(op, pad) << pad << "{\n"
       << pad << "  int ok = 1;\n"
       << pad << "  if (threadIdx.x == 0)\n"
       << pad << "    for (int p = 0; p < n && ok; ++p) if (p != r) ok = waitSignal(dc, " << indexFn(op.sig) << "(p, c), "
       << value << ");\n"
       << pad << "  if (!__syncthreads_and(ok)) " << onFail << "\n"
       << pad << "}\n";
  }

  /// The arrive pair in one block of thread 0 (notify every peer, then wait
  /// for every peer), one barrier after: the hand-written shape (cfcd7a0).
  void arrive() {
    const Op &n = *sh_.arrive, &w = *sh_.arrived;
    o_ << "  const uint64_t v0 = signalValue(e, 0);\n"
       << "  {\n"
       << "    int ok = 1;\n"
       << "    if (threadIdx.x == 0) {\n"
       << cite(n, "      ")
       << "      for (int k = 0; k < n; ++k) if (k != r) arch::stReleaseSys(dc.signals[k] + " << indexFn(n.sig)
       << "(r, c), v0);\n"
       << cite(w, "      ")
       << "      for (int p = 0; p < n && ok; ++p) if (p != r) ok = waitSignal(dc, " << indexFn(w.sig) << "(p, c), v0);\n"
       << "    }\n"
       << "    if (!__syncthreads_and(ok)) return;  // a checked wait gave up\n"
       << "  }\n";
  }

  void copyForm() {
    const Op &c = *sh_.copy;
    o_ << cite(c, "  ");
    if (c.src.part == RankRef::None) {
      // One source, every destination: the input slice is read once.
      o_ << "  {\n"
         << "    const std::size_t b = sliceBegin(pl.txLen[0], C, c), len = sliceSize(pl.txLen[0], C, c);\n"
         << "    atom::Dests d{};\n"
         << "    d.n = 0;\n"
         << "    for (int m = 0; m < n; ++m) {  // k in r+1..r (mod n): peers first, own output last\n"
         << "      const int k = (r + 1 + m) % n;\n"
         << "      std::byte* dst = peers.out[k] + pl.rxOff[r] + b;\n"
         << "      if (dst != in + b) d.p[d.n++] = dst;  // in place: the own block holds the input\n"
         << "    }\n"
         << "    if (d.n > 0) " << atomTypeName(id_) << "::copyToMany(d, in + b, len, s);\n"
         << "  }\n";
    } else {
      // One source per destination, all destinations interleaved (every
      // block has the same length: one slice range for all).
      o_ << "  {\n"
         << "    const std::size_t b = sliceBegin(pl.txLen[0], C, c), len = sliceSize(pl.txLen[0], C, c);\n"
         << "    atom::CopyPairs pr{};\n"
         << "    pr.n = n;\n"
         << "    for (int m = 0; m < n; ++m) {  // k in r+1..r (mod n)\n"
         << "      const int k = (r + 1 + m) % n;\n"
         << "      pr.dst[m] = peers.out[k] + pl.rxOff[r] + b;\n"
         << "      pr.src[m] = in + pl.txOff[k] + b;\n"
         << "    }\n"
         << "    " << atomTypeName(id_) << "::copyPairs(pr, len, s);\n"
         << "  }\n";
    }
    notify(*sh_.put, "  ", "v0", "for (int k = 0; k < n; ++k) if (k != r)");
    wait(*sh_.putWait, "  ", "v0", "return;  // a checked wait gave up");
  }

  void reduceForm() {
    const bool back = sh_.back != nullptr;
    o_ << "  // Two ranks (the IR's direct reduction is derived for n == 2 only): others(r) = {q}.\n"
       << "  const int q = 1 - r;\n"
       << "  // This CTA's slice of partition q (pushed into q's output) and of partition r\n"
       << "  // (q's contribution lands in the own output; reduced there in place).\n"
       << "  const std::size_t qb = sliceBegin(pl.txLen[q], C, c), qlen = sliceSize(pl.txLen[q], C, c);\n"
       << "  const std::size_t qround = directRoundBytes(qlen), qrounds = directRounds(qlen);\n"
       << "  const std::size_t rb = sliceBegin(pl.txLen[r], C, c), rlen = sliceSize(pl.txLen[r], C, c);\n"
       << "  const std::size_t rround = directRoundBytes(rlen), rrounds = directRounds(rlen);\n"
       << "  const std::byte* const pushSrc = in + pl.txOff[q] + qb;\n"
       << "  std::byte* const pushDst = peers.out[q] + pl.rxOff[q] + qb;\n"
       << "  const std::byte* const mine = in + pl.txOff[r] + rb;\n"
       << "  std::byte* const landed = out + pl.rxOff[r] + rb;\n";
    if (back) o_ << "  std::byte* const backDst = peers.out[q] + pl.rxOff[r] + rb;\n";
    o_ << "  const std::size_t rounds = qrounds > rrounds ? qrounds : rrounds;\n"
       << "  for (std::size_t j = 0; j < rounds; ++j) {  // j in 0..max rounds-1\n"
       << "    const uint64_t v = signalValue(e, uint32_t(j));\n"
       << "    if (j < qrounds) {  // j < rounds(X_r[k])\n";
    o_ << cite(*sh_.push, "      ")
       << "      {\n"
       << "        const std::size_t o = j * qround, len = (qlen - o) < qround ? (qlen - o) : qround;\n"
       << "        atom::Dests d{};\n"
       << "        d.n = 1;\n"
       << "        d.p[0] = pushDst + o;\n"
       << "        " << atomTypeName(id_) << "::copyToMany(d, pushSrc + o, len, s);\n"
       << "      }\n";
    notify(*sh_.pushPut, "      ", "v", "for (int k = 0; k < n; ++k) if (k != r)");
    o_ << "    }\n"
       << "    if (j < rrounds) {  // j < rounds(X_r[r])\n";
    wait(*sh_.ownWait, "      ", "v", "return;  // a checked wait gave up");
    o_ << cite(*sh_.reduce, "      ");
    if (back)
      o_ << cite(*sh_.back, "      ")
         << "      // (%" << sh_.back->id << " is fused into %" << sh_.reduce->id
         << "'s stores: each reduced vector is stored locally and into q's output)\n";
    o_ << "      {\n"
       << "        const std::size_t o = j * rround, len = (rlen - o) < rround ? (rlen - o) : rround;\n"
       << "        // Ascending rank order: rank 0's contribution first.\n"
       << "        const std::byte* a = r == 0 ? mine + o : landed + o;\n"
       << "        const std::byte* b = r == 0 ? landed + o : mine + o;\n"
       << "        atom::AtomFor<" << atomTypeName(id_) << ", Pair>::template reducePair<" << reductionsName(id_)
       << ">(red, landed + o, " << (back ? "backDst + o" : "nullptr")
       << ", a, b, len, s);  // one dispatch for the round (Pair: the pair's loop inlined)\n"
       << "      }\n";
    if (back) notify(*sh_.backPut, "      ", "v", "for (int k = 0; k < n; ++k) if (k != r)");
    o_ << "    }\n"
       << "  }\n";
    if (back) {
      o_ << "  if (qrounds > 0) {  // rounds(X_r[p]) > 0: q reduced partition q in qrounds rounds\n"
         << "    const uint64_t last = signalValue(e, uint32_t(qrounds - 1));\n";
      wait(*sh_.backWait, "    ", "last", "return;  // a checked wait gave up");
      o_ << "  }\n";
    }
  }

  void kernel() {
    o_ << "/// The direct kernel: grid = plan.directCtas (<= kMaxEpochSlots), block =\n"
       << "/// plan.directThreads (<= kDirectMaxThreads), no dynamic shared memory; `peers`\n"
       << "/// from Communicator::registerDirect (the call is captured). Pair: kAnyPair, or\n"
       << "/// the one (dtype, op) pair it is specialized for (a reduction's).\n"
       << "template <int Pair = kAnyPair>\n"
       << "__global__ void __launch_bounds__(kDirectMaxThreads) " << id_
       << "_directKernel(DeviceComm dc, Plan pl, DirectPeers peers,\n"
       << "    const std::byte* in, std::byte* out) {\n"
       << "  const uint64_t e = ctaBeginCall(dc);\n"
       << "  " << id_ << "_direct<Pair>(dc, pl, peers, in, out, e);\n"
       << "  ctaEndCall(dc, e);\n"
       << "}\n";
  }
};

} // namespace

DirectCode printDirectProgram(const std::string &id, const ir::Program &prog) {
  if (prog.regime != ir::Regime::Direct || prog.roles.size() != 1 || prog.roles[0].runsOn != ir::RunsOn::All ||
      prog.roles[0].perWarpGroup)
    throw EmitError("direct program: one role of CTAs on every rank is required");
  Shape sh = recognise(prog.roles[0]);
  return Printer(id, sh).print();
}

} // namespace purlin::codegen
