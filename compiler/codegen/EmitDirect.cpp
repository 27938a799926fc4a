/// @file EmitDirect.cpp
/// @brief printDirectProgram(): the direct program's kernel form, printed
/// statement by statement from its kernel IR (direct CTAs, KernelIR.h;
/// ir::lowerDirectCtas lowers the SNAC IR to it). See EmitDirect.h.
///
/// Printed shapes (docs/codegen.md "Direct program"): CTA c of C owns
/// slice c (sliceBegin/sliceSize over C) of every partition and signals
/// with index c; its waits are CTA-collective (thread 0 polls, a barrier
/// shares the verdict), its notifies follow a CTA barrier (fence.acq_rel.sys
/// where the IR has it, then a release per peer). Data moves through the
/// Atom's workspace-free operations (docs/atom.md): one source to many
/// destinations (Atom::copyToMany), interleaved pairs (Atom::copyPairs), a
/// two-source reduction (Atom::reducePair) per round (the measured shapes,
/// bench/NOTES.md E9; the runtime's hand-written program is at commit
/// cfcd7a0).
#include "codegen/EmitDirect.h"

#include "codegen/Cite.h"
#include "codegen/EmitInstances.h"
#include "codegen/KernelPrinter.h"
#include "codegen/Spelling.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::RankRef;
using ir::Sig;
using ir::kernel::SignalValue;
using ir::kernel::Stmt;
using ir::kernel::StmtKind;

/// The direct-CTA form's printer.
class Printer : public KernelPrinter {
public:
  Printer(const std::string &id, const ir::Program &prog, const ir::kernel::DirectCtas &k)
      : KernelPrinter(id, prog), k_(k) {}

  DirectCode print() {
    DirectCode code;
    code.kernel = id_ + "_directKernel";
    code.reduces = k_.reduces;
    code.ops = k_.ops;
    o_ << "/// Role direct (CTA c of C: slice c of every partition, signals with index c; IR ops ";
    for (std::size_t i = 0; i < k_.ops.size(); ++i) o_ << (i ? ", %" : "%") << k_.ops[i];
    o_ << ").\n";
    o_ << "template <int Pair>\n"
       << "__device__ void " << id_ << "_direct(const DeviceComm& dc, const Plan& pl, const DirectPeers& peers,\n"
       << "    const std::byte* in, std::byte* out, uint64_t e) {\n"
       << "  const int r = pl.rank, c = int(blockIdx.x), C = int(gridDim.x);\n"
       << "  [[maybe_unused]] const int n = pl.n;\n"
       << "  (void)out;\n"
       << "  const atom::Slice s{threadIdx.x, blockDim.x};\n";
    if (code.reduces) o_ << "  " << kPairReductionStatement << "\n";
    body(k_.body, "  ");
    o_ << "}\n\n";
    kernel();
    code.text = o_.str();
    return code;
  }

private:
  const ir::kernel::DirectCtas &k_;

  static const char *indexFn(Sig s) {
    return s == Sig::ARRIVED ? "arrivedIndex" : s == Sig::PUT ? "putIndex" : "backIndex";
  }
  static const char *value(SignalValue v) {
    return v == SignalValue::First ? "v0" : v == SignalValue::Round ? "v" : "last";
  }

  void statement(const Stmt &s, const std::string &pad) override {
    switch (s.kind) {
      case StmtKind::Arrive: return arrive(s, pad);
      case StmtKind::CopyToMany:
        // One source, every destination: the input slice is read once.
        o_ << citeOf(s, pad) << pad << "{\n"
           << pad << "  const std::size_t b = sliceBegin(pl.txLen[0], C, c), len = sliceSize(pl.txLen[0], C, c);\n"
           << pad << "  atom::Dests d{};\n"
           << pad << "  d.n = 0;\n"
           << pad << "  for (int m = 0; m < n; ++m) {  // k in r+1..r (mod n): peers first, own output last\n"
           << pad << "    const int k = (r + 1 + m) % n;\n"
           << pad << "    std::byte* dst = peers.out[k] + pl.rxOff[r] + b;\n"
           << pad << "    if (dst != in + b) d.p[d.n++] = dst;  // in place: the own block holds the input\n"
           << pad << "  }\n"
           << pad << "  if (d.n > 0) " << atomTypeName(id_) << "::copyToMany(d, in + b, len, s);\n"
           << pad << "}\n";
        return;
      case StmtKind::CopyPairs:
        // One source per destination, all destinations interleaved (every
        // block has the same length: one slice range for all).
        o_ << citeOf(s, pad) << pad << "{\n"
           << pad << "  const std::size_t b = sliceBegin(pl.txLen[0], C, c), len = sliceSize(pl.txLen[0], C, c);\n"
           << pad << "  atom::CopyPairs pr{};\n"
           << pad << "  pr.n = n;\n"
           << pad << "  for (int m = 0; m < n; ++m) {  // k in r+1..r (mod n)\n"
           << pad << "    const int k = (r + 1 + m) % n;\n"
           << pad << "    pr.dst[m] = peers.out[k] + pl.rxOff[r] + b;\n"
           << pad << "    pr.src[m] = in + pl.txOff[k] + b;\n"
           << pad << "  }\n"
           << pad << "  " << atomTypeName(id_) << "::copyPairs(pr, len, s);\n"
           << pad << "}\n";
        return;
      case StmtKind::Notify:
        o_ << citeOf(s, pad);
        if (s.fence) o_ << pad << "__syncthreads();  // this CTA's writes of the round are done\n";
        o_ << pad << "if (threadIdx.x == 0) {\n";
        if (s.fence) o_ << pad << "  arch::fenceAcqRelSys();  // publish them at system scope\n";
        o_ << pad << "  for (int k = 0; k < n; ++k) if (k != r) arch::stReleaseSys(dc.signals[k] + " << indexFn(s.sig)
           << "(r, c), " << value(s.value) << ");\n"
           << pad << "}\n";
        return;
      case StmtKind::Wait:
        o_ << citeOf(s, pad) << pad << "{\n"
           << pad << "  int ok = 1;\n"
           << pad << "  if (threadIdx.x == 0)\n"
           << pad << "    for (int p = 0; p < n && ok; ++p) if (p != r) ok = waitSignal(dc, " << indexFn(s.sig)
           << "(p, c), " << value(s.value) << ");\n"
           << pad << "  if (!__syncthreads_and(ok)) return;  // a checked wait gave up\n"
           << pad << "}\n";
        return;
      case StmtKind::TwoRankSlices:
        o_ << pad << "// Two ranks (the IR's direct reduction is derived for n == 2 only): others(r) = {q}.\n"
           << pad << "const int q = 1 - r;\n"
           << pad << "// This CTA's slice of partition q (pushed into q's output) and of partition r\n"
           << pad << "// (q's contribution lands in the own output; reduced there in place).\n"
           << pad << "const std::size_t qb = sliceBegin(pl.txLen[q], C, c), qlen = sliceSize(pl.txLen[q], C, c);\n"
           << pad << "const std::size_t qround = directRoundBytes(qlen), qrounds = directRounds(qlen);\n"
           << pad << "const std::size_t rb = sliceBegin(pl.txLen[r], C, c), rlen = sliceSize(pl.txLen[r], C, c);\n"
           << pad << "const std::size_t rround = directRoundBytes(rlen), rrounds = directRounds(rlen);\n"
           << pad << "const std::byte* const pushSrc = in + pl.txOff[q] + qb;\n"
           << pad << "std::byte* const pushDst = peers.out[q] + pl.rxOff[q] + qb;\n"
           << pad << "const std::byte* const mine = in + pl.txOff[r] + rb;\n"
           << pad << "std::byte* const landed = out + pl.rxOff[r] + rb;\n";
        if (s.fusedBack >= 0) o_ << pad << "std::byte* const backDst = peers.out[q] + pl.rxOff[r] + rb;\n";
        o_ << pad << "const std::size_t rounds = qrounds > rrounds ? qrounds : rrounds;\n";
        return;
      case StmtKind::Rounds:
        o_ << pad << "for (std::size_t j = 0; j < rounds; ++j) {  // j in 0..max rounds-1\n"
           << pad << "  const uint64_t v = signalValue(e, uint32_t(j));\n";
        body(s.body, pad + "  ");
        o_ << pad << "}\n";
        return;
      case StmtKind::InRound:
        if (s.part == RankRef::K) o_ << pad << "if (j < qrounds) {  // j < rounds(X_r[k])\n";
        else o_ << pad << "if (j < rrounds) {  // j < rounds(X_r[r])\n";
        body(s.body, pad + "  ");
        o_ << pad << "}\n";
        return;
      case StmtKind::PushRound:
        o_ << citeOf(s, pad) << pad << "{\n"
           << pad << "  const std::size_t o = j * qround, len = (qlen - o) < qround ? (qlen - o) : qround;\n"
           << pad << "  atom::Dests d{};\n"
           << pad << "  d.n = 1;\n"
           << pad << "  d.p[0] = pushDst + o;\n"
           << pad << "  " << atomTypeName(id_) << "::copyToMany(d, pushSrc + o, len, s);\n"
           << pad << "}\n";
        return;
      case StmtKind::ReduceRound: {
        const bool back = s.fusedBack >= 0;
        o_ << citeOf(s, pad);
        if (back)
          o_ << cite(op(s.fusedBack), pad) << pad << "// (%" << s.fusedBack << " is fused into %" << s.op
             << "'s stores: each reduced vector is stored locally and into q's output)\n";
        o_ << pad << "{\n"
           << pad << "  const std::size_t o = j * rround, len = (rlen - o) < rround ? (rlen - o) : rround;\n"
           << pad << "  // Ascending rank order: rank 0's contribution first.\n"
           << pad << "  const std::byte* a = r == 0 ? mine + o : landed + o;\n"
           << pad << "  const std::byte* b = r == 0 ? landed + o : mine + o;\n"
           << pad << "  atom::AtomFor<" << atomTypeName(id_) << ", Pair>::template reducePair<" << reductionsName(id_)
           << ">(red, landed + o, " << (back ? "backDst + o" : "nullptr")
           << ", a, b, len, s);  // one dispatch for the round (Pair: the pair's loop inlined)\n"
           << pad << "}\n";
        return;
      }
      case StmtKind::AfterRounds:
        o_ << pad << "if (qrounds > 0) {  // rounds(X_r[p]) > 0: q reduced partition q in qrounds rounds\n"
           << pad << "  const uint64_t last = signalValue(e, uint32_t(qrounds - 1));\n";
        body(s.body, pad + "  ");
        o_ << pad << "}\n";
        return;
      default: notThisForm(s, "direct CTAs");
    }
  }

  /// The arrive pair in one block of thread 0 (notify every peer, then wait
  /// for every peer), one barrier after: the hand-written shape (cfcd7a0).
  void arrive(const Stmt &s, const std::string &pad) {
    const ir::Op &n = op(s.op), &w = op(s.use);
    if (n.sig != Sig::ARRIVED || w.sig != Sig::ARRIVED)
      throw EmitError("direct program: the arrive pair is on ARRIVED (%" + std::to_string(n.id) + ", %" +
                      std::to_string(w.id) + ")");
    o_ << pad << "const uint64_t v0 = signalValue(e, 0);\n"
       << pad << "{\n"
       << pad << "  int ok = 1;\n"
       << pad << "  if (threadIdx.x == 0) {\n"
       << cite(n, pad + "    ")
       << pad << "    for (int k = 0; k < n; ++k) if (k != r) notifyArrived(dc, k, c, e, pl.flowTagTo[k]);  // ARRIVED_TAG, then ARRIVED\n"
       << cite(w, pad + "    ")
       << pad << "    for (int p = 0; p < n && ok; ++p) if (p != r) ok = waitArrived(dc, p, c, e, pl.flowTagFrom[p]);  // and its tag\n"
       << pad << "  }\n"
       << pad << "  if (!__syncthreads_and(ok)) return;  // a wait gave up, or a peer's call differs\n"
       << pad << "}\n";
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
  ir::kernel::DirectCtas k;
  try {
    k = ir::lowerDirectCtas(prog);
  } catch (const ir::IRError &e) {
    throw EmitError(e.message);
  }
  return Printer(id, prog, k).print();
}

} // namespace purlin::codegen
