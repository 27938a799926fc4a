/// @file EmitEngine.cpp
/// @brief printEngineProgram(): the direct program's copy-engine form,
/// printed statement by statement from its kernel IR (a host graph,
/// KernelIR.h; ir::lowerHostGraph lowers the SNAC IR to it). See
/// EmitEngine.h.
///
/// Names in the printed code: r, n (this rank, the world), k / p (the rank
/// loops' variables), c, done, chunk (the engine-chunk loop: chunk index,
/// bytes before it, its bytes). A buffer access is a pointer into `in`,
/// `out` or a peer's mapped output `peers.out[k]` at the plan's partition
/// offsets (snac::Plan txOff/rxOff), plus `done` for an engine chunk.
#include "codegen/EmitEngine.h"

#include <sstream>

#include "codegen/Cite.h"
#include "codegen/KernelPrinter.h"
#include "ir/KernelIR.h"
#include "codegen/EmitInstances.h"
#include "codegen/Spelling.h"
#include "ir/Printer.h"

namespace purlin::codegen {

namespace {

using ir::Access;
using ir::Buf;
using ir::Cond;
using ir::Domain;
using ir::Event;
using ir::Op;
using ir::OpKind;
using ir::RankRef;
using ir::RoundOf;
using ir::Sig;
using ir::SlotSpace;
using ir::Stmt;
using ir::Stream;

[[noreturn]] void unsupported(const Op &op, const std::string &why) {
  throw EmitError("direct program (copy engine): " + ir::opLine(op) + ": " + why);
}

std::string rankName(RankRef r) {
  switch (r) {
  case RankRef::R: return "r";
  case RankRef::K: return "k";
  case RankRef::P: return "p";
  default: throw EmitError(std::string("direct program (copy engine): rank ") + ir::toString(r) + " is not printed");
  }
}

/// Pointer and byte length of an access (see the file comment).
struct Bytes {
  std::string ptr, len;
};
Bytes bytesOf(const Access &a) {
  if (a.chunked || a.rounded || (a.buf != Buf::X && a.buf != Buf::O))
    throw EmitError("direct program (copy engine): access " + ir::accessText(a) + " is not printed");
  Bytes b;
  const std::string owner = rankName(a.owner);
  std::string base = a.buf == Buf::X ? "in" : owner == "r" ? "out" : "peers.out[" + owner + "]";
  if (a.buf == Buf::X && owner != "r")
    throw EmitError("direct program (copy engine): another rank's input " + ir::accessText(a));
  // Fixed layouts: partition q has one offset and length on every rank.
  const char *off = a.buf == Buf::X ? "txOff" : "rxOff";
  const char *len = a.buf == Buf::X ? "txLen" : "rxLen";
  if (a.part == RankRef::None) {
    b.ptr = base;
    b.len = std::string("pl.") + len + "[" + owner + "]";  // the whole buffer (packed: one partition)
  } else {
    const std::string q = rankName(a.part);
    b.ptr = base + " + pl." + off + "[" + q + "]";
    b.len = std::string("pl.") + len + "[" + q + "]";
  }
  if (a.engineChunk) {
    b.ptr = "(" + b.ptr + ") + done";
    b.len = "chunk";
  }
  return b;
}

/// `statement` (one line) inside the rank loop of a forEach op:
/// `for k in others(r)` or `for k in r+1..r-1 (mod n)`.
std::string inRankLoop(const Op &op, const std::string &pad, const std::string &statement) {
  if (op.var == RankRef::None) return pad + statement + "\n";
  const std::string v = rankName(op.var);
  if (op.domain == Domain::Others)
    return pad + "for (int " + v + " = 0; " + v + " < n; ++" + v + ")  // " + v + " in others(r)\n" + pad + "  if (" +
           v + " != r) " + statement + "\n";
  if (op.domain == Domain::Ring)
    return pad + "for (int m = 1; m < n; ++m) {  // " + v + " in r+1..r-1 (mod n)\n" + pad + "  const int " + v +
           " = (r + m) % n;\n" + pad + "  " + statement + "\n" + pad + "}\n";
  unsupported(op, "a rank loop over " + std::string(ir::toString(op.domain)));
}

const char *streamName(Stream s) { return s == Stream::Stream ? "GraphStream::Stream" : "GraphStream::Branch"; }

const char *cuIndexFn(Sig s) {
  switch (s) {
  case Sig::ARRIVED: return "arrivedIndex";
  case Sig::PUT: return "putIndex";
  case Sig::E_PUT: return "enginePutIndex";
  case Sig::E_BACK: return "engineBackIndex";
  default: return nullptr;
  }
}
const char *cuBase(Sig s) { return s == Sig::E_PUT ? "kEnginePutBase" : "kEngineBackBase"; }

/// The host-graph form's printer: the host function enqueuing the graph
/// (KernelPrinter's stream) and, before it, one kernel per kernel node.
class Printer : public KernelPrinter {
public:
  Printer(const std::string &id, ir::Kind kind, const ir::Program &prog, const ir::kernel::HostGraph &g)
      : KernelPrinter(id, prog), allReduce_(kind == ir::Kind::AllReduce), g_(g), role_(prog.roles[0]) {}

  EngineCode print() {
    EngineCode code;
    code.host = id_ + "_engine";
    o_ << "/// The copy-engine form's graph in the IR's host order (role " << role_.name
       << "): each op one node or edge on the\n"
       << "/// call's stream or the communicator's branch (snac::EngineGraph; a failure stops the rest).\n"
       << "template <int = 0>  // instantiated where enqueued (a program that launches kernels itself never is)\n"
       << "void " << code.host << "(const Plan& pl, const DeviceComm& dc, const DirectPeers& peers,\n"
       << "    const std::byte* in, std::byte* out, EngineGraph& g) {\n"
       << "  const int r = pl.rank, n = pl.n;\n"
       << "  (void)peers;\n";
    body(g_.body, "  ");
    o_ << "}\n";
    code.text = kernels_.str() + o_.str();
    code.ops = g_.ops;
    return code;
  }

private:
  bool allReduce_;
  const ir::kernel::HostGraph &g_;
  const ir::Role &role_;
  std::ostringstream kernels_;
  bool inKernel_ = false;

  std::ostringstream &out() { return inKernel_ ? kernels_ : o_; }

  /// `if (<roundOf> not empty) ` before an op, or "".
  static std::string guard(const Op &op) {
    return op.cond == Cond::NonEmpty ? "if (" + bytesOf(op.roundOf).len + " != 0) " : "";
  }
  static std::string opRef(const Op &op) { return "\"%" + std::to_string(op.id) + "\""; }
  static std::string idsOf(const std::vector<ir::kernel::Stmt> &b) {
    std::string s;
    for (const ir::kernel::Stmt &st : b) {
      if (st.op >= 0) s += (s.empty() ? "%" : ", %") + std::to_string(st.op);
      const std::string inner = idsOf(st.body);
      if (!inner.empty()) s += (s.empty() ? "" : ", ") + inner;
    }
    return s;
  }

  void statement(const ir::kernel::Stmt &s, const std::string &pad) override {
    using ir::kernel::StmtKind;
    std::ostringstream &o = out();
    switch (s.kind) {
      case StmtKind::GraphGuard:
        o << pad << "// The two-rank reduction cuts both partitions into the same engine chunks.\n"
          << pad << "if (n != 2 || pl.txLen[1 - r] != pl.txLen[r]) {\n"
          << pad << "  g.refuse(\"" << id_ << "_engine\", \"copy-engine reduction needs two ranks with equal partitions\");\n"
          << pad << "  return;\n"
          << pad << "}\n";
        return;
      case StmtKind::EngineChunks: {
        o << pad << "{  // for c in engine chunks of " << ir::accessText(s.operand) << "\n"
          << pad << "  const std::size_t len = " << bytesOf(s.operand).len << ";\n"
          << pad << "  std::size_t done = 0;\n"
          << pad << "  for (int c = 0;; ++c) {\n"
          << pad << "    const std::size_t chunk = engineChunkBytes(" << (allReduce_ ? "true" : "false")
          << ", len, done, c);\n"
          << pad << "    if (chunk == 0) break;\n";
        body(s.body, pad + "    ");
        out() << pad << "    done += chunk;\n" << pad << "  }\n" << pad << "}\n";
        return;
      }
      case StmtKind::GraphKernel: return kernel(s, pad);
      case StmtKind::GraphCopy: {
        const Op &op = this->op(s.op);
        const Bytes d = bytesOf(op.dst), src = bytesOf(op.src);
        o << citeOf(s, pad)
          << inRankLoop(op, pad, guard(op) + "g.copy(" + streamName(op.stream) + ", " + d.ptr + ", " + src.ptr + ", " +
                                     src.len + ", " + opRef(op) + ");");
        return;
      }
      case StmtKind::GraphEdge: {
        const Op &op = this->op(s.op);
        const std::string ev = op.event == Event::Fork   ? "g.fork()"
                               : op.event == Event::Join ? "g.join()"
                                                         : "g.chunk(c, " + opRef(op) + ")";
        o << citeOf(s, pad) << pad << guard(op) << (op.kind == OpKind::Notify ? "g.record(" : "g.wait(")
          << streamName(op.stream) << ", " << ev << ", " << opRef(op) << ");\n";
        return;
      }
      case StmtKind::GraphFlag: {
        const Op &op = this->op(s.op);
        o << citeOf(s, pad)
          << inRankLoop(op, pad,
                        guard(op) + "g.writeFlag(" + streamName(op.stream) + ", dc.signals[" + rankName(op.target) +
                            "] + " + cuIndexFn(op.sig) + "(c), " + opRef(op) + ");");
        return;
      }
      case StmtKind::NodeNotify: {
        const Op &op = this->op(s.op);
        o << citeOf(s, pad) << pad << "if (ok) {\n";
        if (op.fence) o << pad << "  __syncthreads();  // the CTA's earlier work is done\n";
        o << pad << "  if (threadIdx.x == 0) {\n";
        if (op.fence) o << pad << "    arch::fenceAcqRelSys();  // and published at system scope\n";
        // ARRIVED carries the call's tag (direct.cuh notifyArrived).
        o << inRankLoop(op, pad + "    ",
                        op.sig == Sig::ARRIVED
                            ? "notifyArrived(dc, " + rankName(op.target) + ", 0, e, pl.flowTagTo[" + rankName(op.target) + "]);"
                            : "arch::stReleaseSys(dc.signals[" + rankName(op.target) + "] + " + cuIndexFn(op.sig) +
                                  "(r, 0), " + value(op) + ");")
          << pad << "  }\n"
          << pad << "}\n";
        return;
      }
      case StmtKind::NodeWait: {
        const Op &op = this->op(s.op);
        // ARRIVED and its tag have one slot per source and CTA (the arrive
        // kernel is one CTA; its notify is checked likewise above).
        if (op.sig == Sig::ARRIVED && op.slotSpace == SlotSpace::Chunk)
          unsupported(op, "ARRIVED is awaited once per call (CTA 0), not per chunk");
        const std::string idx = op.slotSpace == SlotSpace::Chunk
                                    ? std::string(cuIndexFn(op.sig)) + "(c)"
                                    : std::string(cuIndexFn(op.sig)) + "(" + rankName(op.sigSrc) + ", 0)";
        o << citeOf(s, pad) << pad << "if (ok) {  // CTA-collective: thread 0 polls, the barrier shares its verdict\n"
          << pad << "  int w = 1;\n"
          << pad << "  if (threadIdx.x == 0)\n"
          << inRankLoop(op, pad + "    ",
                        op.sig == Sig::ARRIVED
                            ? "w = w && waitArrived(dc, " + rankName(op.sigSrc) + ", 0, e, pl.flowTagFrom[" +
                                  rankName(op.sigSrc) + "]);  // and its tag"
                            : "w = w && waitSignal(dc, " + idx + ", " + value(op) + ");")
          << pad << "  ok = __syncthreads_and(w) != 0;\n"
          << pad << "}\n";
        return;
      }
      case StmtKind::NodeReduce: {
        const Op &op = this->op(s.op);
        o << citeOf(s, pad) << pad << "if (ok) {  // n == 2 (the IR's copy-engine reduction is derived for two ranks)\n"
          << pad << "  const int cta = int(blockIdx.x), C = int(gridDim.x);\n"
          << pad << "  const atom::Slice s{threadIdx.x, blockDim.x};\n"
          << pad << "  const std::size_t b = sliceBegin(chunk, C, cta), len = sliceSize(chunk, C, cta);\n"
          << pad << "  const std::byte* mine = " << bytesOf(op.srcSelf).ptr << " + b;\n"
          << pad << "  std::byte* landed = " << bytesOf(op.dst).ptr << " + b;\n"
          << pad << "  // Ascending rank order: rank 0's contribution first.\n"
          << pad << "  const std::byte* a = r == 0 ? mine : landed;\n"
          << pad << "  const std::byte* x = r == 0 ? landed : mine;\n"
          << pad << "  " << atomTypeName(id_) << "::template reducePair<" << reductionsName(id_)
          << ">(red, landed, nullptr, a, x, len, s);  // one dispatch for the slice\n"
          << pad << "}\n";
        return;
      }
      case StmtKind::NodeReset: {
        const Op &op = this->op(s.op);
        o << citeOf(s, pad) << pad << "if (ok) {\n"
          << pad << "  uint64_t* own = dc.signals[dc.rank];\n"
          << pad << "  for (uint32_t i = threadIdx.x; i < uint32_t(kMaxEngineChunks); i += blockDim.x)\n"
          << pad << "    *reinterpret_cast<volatile uint64_t*>(own + " << cuBase(op.sig) << " + i) = 0;\n"
          << pad << "}\n";
        return;
      }
      default: notThisForm(s, "host graphs");
    }
  }

  /// Whether a kernel node's statements reduce (in an engine-chunk loop too).
  static bool hasReduce(const std::vector<ir::kernel::Stmt> &b) {
    for (const ir::kernel::Stmt &s : b)
      if (s.kind == ir::kernel::StmtKind::NodeReduce || hasReduce(s.body)) return true;
    return false;
  }
  static std::string value(const Op &op) { return op.round == RoundOf::One ? "1" : "signalValue(e, 0)"; }

  /// A kernel node: its kernel (printed before the host function) and its
  /// launch in the host's order.
  void kernel(const ir::kernel::Stmt &k, const std::string &pad) {
    const std::string name = id_ + "_engine_" + k.kernelName;
    const bool reduces = hasReduce(k.body);
    const std::string grid = k.wide ? "pl.directCtas" : "1";
    const std::string block = k.wide ? "kDirectEngineReduceThreads" : "32";
    std::ostringstream &o = kernels_;
    o << "/// Kernel node `" << k.kernelName << "` of the copy-engine form (" << ir::toString(k.stream) << "; grid "
      << grid << " x " << block << " threads" << (k.wide ? ", CTA i reduces slice i of the chunk" : "") << ").\n"
      << "template <int = 0>\n"
      << "__global__ void __launch_bounds__(" << block << ") " << name
      << "(DeviceComm dc, Plan pl, const std::byte* in,\n"
      << "    std::byte* out, int c, std::size_t done, std::size_t chunk) {\n"
      << "  [[maybe_unused]] const int r = pl.rank, n = pl.n;\n"
      << "  (void)in, (void)out, (void)c, (void)done, (void)chunk;\n";
    if (reduces) o << "  " << kReductionStatement << "\n";
    if (k.readsEpoch) o << "  const uint64_t e = ctaBeginCall(dc);  // the call's epoch (after the previous grid)\n";
    o << "  bool ok = true;  // false once a checked wait gave up: the rest is skipped\n";
    const bool outer = inKernel_;
    inKernel_ = true;
    body(k.body, "  ");
    inKernel_ = outer;
    o << "  (void)ok;\n";
    if (k.endsCall) o << "  ctaEndCall(dc, e);  // the call ends: the epoch advances\n";
    o << "}\n\n";
    o_ << pad << "// kernel " << k.kernelName << " on " << ir::toString(k.stream) << " (its ops are printed in " << name
       << ")\n"
       << pad << "g.launch(" << streamName(k.stream) << ", " << name << "<>, " << grid << ", " << block
       << ", \"kernel " << k.kernelName << " (" << idsOf(k.body) << ")\", dc, pl, in, out, "
       << (k.inChunks ? "c, done, chunk" : "0, 0, 0") << ");\n";
  }
};

} // namespace

EngineCode printEngineProgram(const std::string &id, ir::Kind kind, const ir::Program &prog) {
  ir::kernel::HostGraph g;
  try {
    g = ir::lowerHostGraph(prog);
  } catch (const ir::IRError &e) {
    throw EmitError(e.message);
  }
  return Printer(id, kind, prog, g).print();
}

} // namespace purlin::codegen
