/// @file EmitLatency.cpp
/// @brief printLatencyProgram(): the latency program's device code, printed
/// statement by statement from its kernel IR (packet warps, KernelIR.h;
/// ir::lowerPacketWarps lowers the SNAC IR to it). See EmitLatency.h.
///
/// Shape of the printed code (docs/codegen.md "Latency program"): the role
/// function loops over the warp's packet groups; in a group, a lane
/// carries two payload words of every flow, so every statement moves the
/// lane's words (`a, b`, `mineA, mineB` or `ra, rb`, as the kernel IR
/// names them). Each statement of the kernel IR prints as the packet
/// layer's call it stands for, after the citation of the SNAC op it
/// implements.
#include "codegen/EmitLatency.h"

#include <sstream>

#include "codegen/Cite.h"
#include "codegen/KernelPrinter.h"
#include "codegen/Spelling.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::Access;
using ir::Buf;
using ir::Op;
using ir::RankRef;
using ir::kernel::EpochRead;
using ir::kernel::Region;
using ir::kernel::Stagger;
using ir::kernel::Stmt;
using ir::kernel::StmtKind;
using ir::kernel::Words;

/// The C++ expression of an operand of the group body; a peer's partition
/// is indexed by the ring position `i` of the enclosing loop over peers.
std::string pointer(const Access &a) {
  if (a.buf == Buf::X) return a.part == RankRef::None ? "in" : a.part == RankRef::R ? "in + rg.ownTx" : "in + rg.tx[i - 1]";
  if (a.part == RankRef::None) return "out";
  return a.part == RankRef::R ? "out + rg.ownRx" : "out + rg.rx[i - 1]";
}


const char *regs(Words w) { return w == Words::Flow ? "a, b" : w == Words::Mine ? "mineA, mineB" : "ra, rb"; }

/// The packet-warp form's printer.
class Printer : public KernelPrinter {
public:
  Printer(const std::string &id, const ir::Program &prog, const ir::kernel::PacketWarps &k)
      : KernelPrinter(id, prog), k_(k) {}

  LatencyCode print() {
    LatencyCode code;
    code.kernel = id_ + "_latencyKernel";
    code.reduces = k_.reduces;
    code.ops = k_.ops;
    roleFunction();
    kernel();
    code.text = o_.str();
    return code;
  }

private:
  const ir::kernel::PacketWarps &k_;

  /// The tag of the flow a put sends (rg.send[i - 1]'s) and of the flow a
  /// poll reads from rank `from`: a V form's flows each have their own
  /// (ctaRegions<true> fills them), the others one for the call.
  std::string tagTo() const { return k_.variable ? "rg.tagTo[i - 1]" : "pl.flowTagTo[0]"; }
  std::string tagFrom(const std::string &from) const {
    return k_.variable ? "rg.tagFrom[" + from + "]" : "pl.flowTagFrom[0]";
  }

  void roleFunction() {
    o_ << "/// Role latency (every CTA of the grid; IR ops ";
    for (std::size_t i = 0; i < k_.ops.size(); ++i) o_ << (i ? ", %" : "%") << k_.ops[i];
    o_ << "): packet group g of every\n"
       << "/// flow on warp g mod warps; lane l < 31 carries payload words 62g+2l and 62g+2l+1,\n"
       << "/// lane 31 the group's header (the call's epoch and the flow's tag) and collector.\n";
    if (k_.reduces)
      o_ << "/// N2: two ranks (chosen at run time); the running reduction of the two\n"
         << "/// operands is one reducePair in rank order (bench/NOTES.md E13 run3).\n"
         << "/// The reduction's class is dispatched once per packet group (every rank's\n"
         << "/// words of the group in registers), not per rank or word; Pair: one pair's\n"
         << "/// kernel (a constant reduction) or kAnyPair (the instantiation table).\n"
         << "template <packet::WordForm Words, bool N2, int Pair, class Epoch>\n";
    else
      o_ << "template <packet::WordForm Words, class Epoch>\n";
    o_ << "__device__ void " << id_ << "_latency(const DeviceComm& dc, const Plan& pl, const packet::Regions& rg,\n"
       << "    const packet::CallShape& cs, const std::byte* in, std::byte* out, Epoch& ce, std::size_t warp,\n"
       << "    std::size_t warps) {\n";
    o_ << (k_.reduces ? "  const int r = pl.rank, n = N2 ? 2 : pl.n, lane = laneId();\n"
                      : k_.rooted ? "  const int r = pl.rank, n = pl.n, lane = laneId();\n"
                                  : "  const int n = pl.n, lane = laneId();\n");
    if (k_.rooted) o_ << "  const int root = pl.root;\n";
    if (k_.reduces) o_ << "  " << kPairReductionStatement << "\n";
    if (k_.variable)
      o_ << "  // V form: flows differ in length; G covers the longest, each flow its own\n"
         << "  // flowGroups (a zero-byte flow: its marker group, docs/snac-protocol.md).\n"
         << "  const std::size_t G = cs.G;\n";
    else
      o_ << "  const std::size_t len = cs.len, W = cs.W, G = cs.G;\n";
    for (const ir::kernel::Binding &b : k_.bindings)
      o_ << "  " << (b.writable ? "std::byte* const " : "const std::byte* const ") << b.name << " = "
         << pointer(b.access) << ";\n";
    o_ << "  for (std::size_t g = warp; g < G; g += warps) {\n";
    if (!k_.variable) o_ << "    const packet::LaneWords x(g, lane, W);\n";
    o_ << (k_.reduces ? "    uint64_t mineA, mineB, a, b;\n" : "    uint64_t a, b;\n");
    body(k_.group, "    ");
    o_ << "  }\n}\n\n";
  }

  void statement(const Stmt &s, const std::string &pad) override {
    switch (s.kind) {
      case StmtKind::OnRanks: return onRanks(s, pad);
      case StmtKind::PeerLoop:
        o_ << citeOf(s, pad) << "#pragma unroll 1\n"
           << pad << "for (int i = 1; i < n; ++i) {  // " << (s.fromPeers ? "p in r-1..r+1 (mod n)" : "k = (r + i) mod n")
           << "\n";
        if (s.fromPeers) o_ << pad << "  const int p = rg.from[i - 1];\n";
        body(s.body, pad + "  ");
        o_ << pad << "}\n";
        return;
      case StmtKind::RootPosition:
        o_ << citeOf(s, pad);
        if (s.fromPeers)
          o_ << pad << "const int i = (r + n - root) % n;  // root = (r - i) mod n: its region is rg.recv[i - 1]\n";
        else
          o_ << pad << "const int i = (root + n - r) % n;  // root = (r + i) mod n: rg.send[i - 1]\n";
        return;
      case StmtKind::FlowLength:
        o_ << citeOf(s, pad);
        if (s.fromPeers)
          o_ << pad << "const std::size_t len = rg.recvLen[i - 1];  // " << ir::accessText(s.operand) << "'s bytes\n";
        else
          o_ << pad << "const std::size_t len = rg.sendLen[i - 1];  // " << ir::accessText(s.operand)
             << "'s bytes for k\n";
        o_ << pad << "if (g >= packet::flowGroups(len)) continue;\n"
           << pad << "const packet::LaneWords x(g, lane, packet::words(len));\n";
        return;
      case StmtKind::OwnFlow:
        o_ << citeOf(s, pad) << pad << "if (g < packet::flowGroups(rg.ownLen)) {"
           << (s.partition ? "  // the groups of this rank's partition" : "") << "\n"
           << pad << "  const std::size_t len = rg.ownLen;\n"
           << pad << "  const packet::LaneWords x(g, lane, packet::words(len));\n";
        body(s.body, pad + "  ");
        o_ << pad << "}\n";
        return;
      case StmtKind::Load:
        o_ << citeOf(s, pad) << pad << "packet::loadLane<Words>(x, " << (s.bound ? "own" : pointer(s.operand)) << ", len, "
           << regs(s.words) << ", pl.words8);";
        if (s.operandOf >= 0 && s.alsoOperand) o_ << "  // also %" << s.operandOf << "'s operand p == r";
        else if (s.operandOf >= 0)
          o_ << "  // %" << s.operandOf << "'s operand p == r, " << ir::accessText(s.operand);
        o_ << "\n";
        return;
      case StmtKind::ReadEpoch:
        o_ << pad << "ce.ensure(dc, rg);  // "
           << (s.epochRead == EpochRead::AfterLoad    ? "the call's epoch, read once the first loads are issued (E12)"
               : s.epochRead == EpochRead::NothingPut ? "the ranks that put nothing read the epoch here"
                                                      : "a warp past the groups of every flow it sends reads the epoch here")
           << "\n";
        return;
      case StmtKind::Put:
        o_ << citeOf(s, pad) << pad << "slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), groupPack("
           << regs(s.words) << ", lane, ce.header(" << tagTo() << ")));\n";
        return;
      case StmtKind::PutToPeers:
        o_ << citeOf(s, pad) << pad << "{\n"
           << pad << "  const SlotWords s = groupPack(" << regs(s.words) << ", lane, 0);  // one group, each peer's header\n"
           << "#pragma unroll 1\n"
           << pad << "  for (int i = 1; i < n; ++i)  // k = (r + i) mod n\n"
           << pad << "    slotPut(packet::laneSlot(rg.send[i - 1] + ce.h, g, lane), withHeader(s, lane, ce.header(" << tagTo()
           << ")));\n"
           << pad << "}\n";
        return;
      case StmtKind::Poll: {
        const std::string region = s.region == Region::OnlyPeer ? "rg.recv[0]" : s.region == Region::RecvRank ? "rg.recvFrom[p]" : "rg.recv[i - 1]";
        const std::string from = s.region == Region::OnlyPeer ? "rg.from[0]" : s.fromRoot ? "root" : "p";
        o_ << citeOf(s, pad) << pad << "if (!packet::pollLane<" << staggerName(s.stagger) << ">(dc, pl, " << region
           << " + ce.h, " << from << ", g, lane, " << regs(s.words) << ", ce.header(" << tagFrom(from) << ")))\n"
           << pad << "  return;  // a wait gave up, or the group is another call's\n";
        return;
      }
      case StmtKind::Store:
        o_ << citeOf(s, pad) << pad << "packet::storeLane<Words>(x, " << pointer(s.operand) << ", len, " << regs(s.words)
           << ", pl.words8);";
        if (s.after >= 0) o_ << "  // %" << s.after << " after the last p";
        o_ << "\n";
        return;
      case StmtKind::StoreUnlessInPlace:
        o_ << citeOf(s, pad) << pad << "if (own != ownDst) packet::storeLane<Words>(x, ownDst, len, " << regs(s.words)
           << ", pl.words8);  // skipped when in place\n";
        return;
      case StmtKind::GatherRanks:
        o_ << pad << "uint64_t wa[kMaxRanks], wb[kMaxRanks];  // rank p's operand words of "
           << ir::accessText(s.reduced) << "\n"
           << "#pragma unroll\n"
           << pad << "for (int p = 0; p < kMaxRanks; ++p) {  // p in 0..n-1\n"
           << pad << "  if (p >= n) break;\n"
           << citeOf(s, pad + "  ")
           << pad << "  if (p == r) {\n"
           << pad << "    wa[p] = mineA;  // %" << s.use << "'s operand p == r\n"
           << pad << "    wb[p] = mineB;\n"
           << pad << "  } else if (!packet::pollLane<" << staggerName(s.stagger)
           << ">(dc, pl, rg.recvFrom[p] + ce.h, p, g, lane, wa[p], wb[p], ce.header(" << tagFrom("p") << "))) {\n"
           << pad << "    return;  // a wait gave up, or the group is another call's\n"
           << pad << "  }\n"
           << pad << "}\n";
        return;
      case StmtKind::ReduceRanks:
        o_ << citeOf(s, pad) << pad << "uint64_t ra, rb;\n"
           << pad << "reduceGroupWords<" << classes() << ">(red, wa, wb, n, ra, rb);  // one dispatch for the group\n";
        return;
      case StmtKind::ReducePair:
        o_ << citeOf(s, pad) << pad << "const bool ownFirst = r == 0;  // both steps at once, in ascending rank order\n"
           << pad << "uint64_t ra, rb;\n"
           << pad << "reduceGroupPair<" << classes() << ">(red, ownFirst ? mineA : a, ownFirst ? a : mineA,\n"
           << pad << "                ownFirst ? mineB : b, ownFirst ? b : mineB, ra, rb);  // one dispatch for the group\n";
        return;
      case StmtKind::TwoRanks:
        o_ << pad << "if constexpr (!N2) {\n";
        body(s.body, pad + "  ");
        o_ << pad << "} else {\n"
           << pad << "  // p in 0..1: the one peer is rg.from[0]\n";
        body(s.orElse, pad + "  ");
        o_ << pad << "}\n";
        return;
      default: notThisForm(s, "packet warps");
    }
  }

  static const char *staggerName(Stagger s) {
    return s == Stagger::First ? "PollStagger::First" : "PollStagger::EveryRound";
  }
  std::string classes() const { return "kernelClasses<Pair>(" + reductionsName(id_) + ")"; }

  void kernel() {
    // Where the next call's grid is let in: the lowering's choice (E12).
    const bool trigger = k_.triggerOnRead;
    const std::string params = k_.reduces ? "Words, Ranks, Pair" : "Words";
    const char *templ = k_.reduces ? "template <packet::WordForm Words, packet::RankForm Ranks, int Pair>\n"
                                   : "template <packet::WordForm Words>\n";
    o_ << "/// The latency program's CTA body (every thread of every CTA; grid = plan.latencyCtas x\n"
       << "/// plan.latencyThreads, latencyShape, or any other: warp w takes every warps-th packet\n"
       << "/// group): the latency kernel below and the device API's " << id_ << "_device\n"
       << "/// (docs/device-api.md). Returns the call's epoch. Words: whole aligned words\n"
       << "/// (Plan::words8), any length, or Plan::words8 read at run time (packet::WordForm).\n";
    if (k_.reduces)
      o_ << "/// Ranks: two only, three and more only (the launch picks by Plan::n), or any\n"
         << "/// (the two-rank form picked by Plan::n here; packet::RankForm). Pair: kAnyPair, or\n"
         << "/// the one (dtype, op) pair it is specialized for.\n";
    o_ << templ << "__device__ __forceinline__ uint64_t " << id_
       << "_latencyCta(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out) {\n"
       << "  constexpr bool kTriggerOnRead = " << (trigger ? "true" : "false")
       << ";  // " << (trigger ? "let the next grid in once the epoch load is issued"
                                : "one load feeds every put: let the next grid in right after the wait")
       << " (E12)\n";
    o_ << "  __shared__ packet::Regions rg;\n"
       << "  packet::ctaRegions" << (k_.variable ? "<true>" : "") << "(dc, pl, rg);  // parameters only: before the wait\n"
       << "  const packet::CallShape cs(rg);\n"
       << "  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / 32);\n"
       << "  const std::size_t warp = std::size_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;\n"
       << "  gridDependencyWait();\n";
    if (k_.variable)
      o_ << "  if (pl.deviceCounts) packet::ctaDeviceRanges(dc, pl, rg);  // counts in device memory: the call's ranges (docs/device-counts.md)\n";
    o_ << "  if constexpr (!kTriggerOnRead) gridLaunchDependents();\n"
       << "  packet::CallEpoch<kTriggerOnRead> ce;\n";
    if (k_.reduces)
      o_ << "  if constexpr (Ranks == packet::RankForm::Two)\n"
         << "    " << id_ << "_latency<Words, true, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n"
         << "  else if constexpr (Ranks == packet::RankForm::Many)\n"
         << "    " << id_ << "_latency<Words, false, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n"
         << "  else if (pl.n == 2)\n"
         << "    " << id_ << "_latency<Words, true, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n"
         << "  else\n"
         << "    " << id_ << "_latency<Words, false, Pair>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    else
      o_ << "  " << id_ << "_latency<Words>(dc, pl, rg, cs, in, out, ce, warp, warps);\n";
    o_ << "  ce.ensure(dc, rg);  // threads that pushed nothing (a warp without a group)\n";
    if (k_.hasDoneAcks) doneAcks();
    o_ << "  ctaEndCall(dc, ce.e);\n"
       << "  return ce.e;\n"
       << "}\n\n";

    o_ << "/// The latency kernel: grid = plan.latencyCtas x plan.latencyThreads (latencyShape),\n"
       << "/// no dynamic shared memory; " << id_ << "_latencyCta says what the parameters pick.\n"
       << templ << "__global__ void " << id_ << "_latencyKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {\n"
       << "  (void)" << id_ << "_latencyCta<" << params << ">(dc, pl, in, out);\n"
       << "}\n";
  }

  /// The DONE acknowledgement of a rooted program, once per CTA after its
  /// groups: every CTA of a reading rank arrives; the last one notifies the
  /// producers; every CTA of a producer waits for it (so that a producer's
  /// next call cannot overwrite packets its readers still hold).
  void doneAcks() {
    const ir::kernel::DoneAcks &a = k_.acks;
    const std::string on = a.readers == ir::RunsOn::Root ? "==" : "!=";
    const ir::RunsOn producers = a.readers == ir::RunsOn::Root ? ir::RunsOn::NonRoot : ir::RunsOn::Root;
    o_ << "  const int r = pl.rank, root = pl.root;\n"
       << "  if (r " << on << " root) {  // " << ir::toString(a.readers) << "\n"
       << cite(op(a.arrive), "    ")
       << "    const bool last = ctaArriveLast(dc, " << a.counterBase << "u, int(gridDim.x));  // every CTA of the grid\n"
       << "    if (last && threadIdx.x == 0) {\n"
       << cite(op(a.notify), "      ");
    if (!a.notifyEveryProducer) {
      o_ << "      notify(dc, root, doneIndex(r), signalValue(ce.e, 0));\n";
    } else {
      o_ << "      arch::fenceAcqRelSys();  // one fence, then a release per target\n"
         << "      for (int k = 0; k < pl.n; ++k)\n"
         << "        if (k != root) arch::stReleaseSys(dc.signals[k] + doneIndex(r), signalValue(ce.e, 0));\n";
    }
    o_ << "    }\n"
       << "  } else {  // " << ir::toString(producers) << "\n"
       << cite(op(a.wait), "    ");
    if (!a.waitEveryProducer) {
      o_ << "    (void)ctaWaitSignal(dc, doneIndex(root), signalValue(ce.e, 0));  // a checked wait that gave up has recorded it\n";
    } else {
      o_ << "    int ok = 1;\n"
         << "    if (threadIdx.x == 0)\n"
         << "      for (int p = 0; p < pl.n && ok; ++p)\n"
         << "        if (p != root) ok = waitSignal(dc, doneIndex(p), signalValue(ce.e, 0));\n"
         << "    (void)__syncthreads_and(ok);  // a checked wait that gave up has recorded it\n";
    }
    o_ << "  }\n";
  }
};

} // namespace

LatencyCode printLatencyProgram(const std::string &id, const ir::Program &prog, bool variable) {
  ir::kernel::PacketWarps k;
  try {
    k = ir::lowerPacketWarps(prog, variable);
  } catch (const ir::IRError &e) {
    throw EmitError(e.message);
  }
  return Printer(id, prog, k).print();
}

} // namespace purlin::codegen
