/// @file EmitEngine.cpp
/// @brief printEngineProgram(): the direct program's copy-engine form,
/// printed op by op from the SNAC IR (see EmitEngine.h).
///
/// Names in the printed code: r, n (this rank, the world), k / p (the rank
/// loops' variables), c, done, chunk (the engine-chunk loop: chunk index,
/// bytes before it, its bytes). A buffer access is a pointer into `in`,
/// `out` or a peer's mapped output `peers.out[k]` at the plan's partition
/// offsets (snac::Plan txOff/rxOff), plus `done` for an engine chunk.
#include "codegen/EmitEngine.h"

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

class Printer {
public:
  Printer(const std::string &id, ir::Kind kind) : id_(id), allReduce_(kind == ir::Kind::AllReduce) {}

  EngineCode print(const ir::Role &role) {
    EngineCode code;
    code.host = id_ + "_engine";
    std::ostringstream host;
    host << "/// The copy-engine form's graph in the IR's host order (role " << role.name
         << "): each op one node or edge on the\n"
         << "/// call's stream or the communicator's branch (snac::EngineGraph; a failure stops the rest).\n"
         << "template <int = 0>  // instantiated where enqueued (a program that launches kernels itself never is)\n"
         << "void " << code.host << "(const Plan& pl, const DeviceComm& dc, const DirectPeers& peers,\n"
         << "    const std::byte* in, std::byte* out, EngineGraph& g) {\n"
         << "  const int r = pl.rank, n = pl.n;\n"
         << "  (void)peers;\n";
    if (hasReduce(role.body))
      host << "  // The two-rank reduction cuts both partitions into the same engine chunks.\n"
           << "  if (n != 2 || pl.txLen[1 - r] != pl.txLen[r]) {\n"
           << "    g.refuse(\"" << code.host << "\", \"copy-engine reduction needs two ranks with equal partitions\");\n"
           << "    return;\n"
           << "  }\n";
    hostBody(role.body, host, "  ", false);
    host << "}\n";
    code.text = kernels_.str() + host.str();
    code.ops = ops_;
    return code;
  }

private:
  const std::string &id_;
  bool allReduce_;
  std::ostringstream kernels_;
  std::vector<int> ops_;

  static std::string idsOf(const std::vector<Stmt> &b) {
    std::string s;
    ir::forEachOp(b, [&](const Op &o) { s += (s.empty() ? "%" : ", %") + std::to_string(o.id); });
    return s;
  }
  static bool hasReduce(const std::vector<Stmt> &b) {
    bool any = false;
    ir::forEachOp(b, [&](const Op &o) { any |= o.kind == OpKind::Reduce; });
    return any;
  }
  void cited(const Op &op, std::ostringstream &o, const std::string &pad) {
    o << cite(op, pad);
    ops_.push_back(op.id);
  }
  /// `if (<roundOf> not empty)` around an op.
  std::string guard(const Op &op) {
    if (op.cond == Cond::Always) return "";
    if (op.cond != Cond::NonEmpty) unsupported(op, "only `if ... not empty` conditions are printed");
    return "if (" + bytesOf(op.roundOf).len + " != 0) ";
  }
  std::string opRef(const Op &op) { return "\"%" + std::to_string(op.id) + "\""; }

  /// An engine-chunk loop over `chunksOf`'s partition (host or device code).
  void chunkLoop(const Stmt &s, std::ostringstream &o, const std::string &pad, bool device) {
    o << pad << "{  // for c in engine chunks of " << ir::accessText(s.chunksOf)
      << "\n"
      << pad << "  const std::size_t len = " << bytesOf(s.chunksOf).len << ";\n"
      << pad << "  std::size_t done = 0;\n"
      << pad << "  for (int c = 0;; ++c) {\n"
      << pad << "    const std::size_t chunk = engineChunkBytes(" << (allReduce_ ? "true" : "false")
      << ", len, done, c);\n"
      << pad << "    if (chunk == 0) break;\n";
    if (device) deviceBody(s.body, o, pad + "    ");
    else hostBody(s.body, o, pad + "    ", true);
    o << pad << "    done += chunk;\n" << pad << "  }\n" << pad << "}\n";
  }

  // ---- host --------------------------------------------------------------

  void hostBody(const std::vector<Stmt> &body, std::ostringstream &o, const std::string &pad, bool inChunks) {
    for (const Stmt &s : body) {
      if (s.isLoop && !s.kernel.empty()) {
        kernel(s, o, pad, inChunks);
      } else if (s.isLoop) {
        if (!s.engineChunks || inChunks) throw EmitError("direct program (copy engine): a host loop other than one "
                                                         "level of engine chunks");
        chunkLoop(s, o, pad, false);
      } else {
        hostOp(s.op, o, pad, inChunks);
      }
    }
  }

  void hostOp(const Op &op, std::ostringstream &o, const std::string &pad, bool inChunks) {
    if (!op.host) unsupported(op, "a device op outside a kernel node");
    cited(op, o, pad);
    const std::string st = streamName(op.stream);
    if (op.kind == OpKind::Copy) {
      Bytes d = bytesOf(op.dst), s = bytesOf(op.src);
      o << inRankLoop(op, pad,
                      guard(op) + "g.copy(" + st + ", " + d.ptr + ", " + s.ptr + ", " + s.len + ", " + opRef(op) + ");");
      return;
    }
    if (op.sig == Sig::EDGE) {
      if (op.cond != Cond::Always && op.cond != Cond::NonEmpty) unsupported(op, "an edge condition");
      std::string ev = op.event == Event::Fork ? "g.fork()" : op.event == Event::Join ? "g.join()" : "";
      if (op.event == Event::Chunk) {
        if (!inChunks) unsupported(op, "a chunk event outside an engine-chunk loop");
        ev = "g.chunk(c, " + opRef(op) + ")";
      }
      o << pad << guard(op) << (op.kind == OpKind::Notify ? "g.record(" : "g.wait(") << st << ", " << ev << ", "
        << opRef(op) << ");\n";
      return;
    }
    if (op.kind == OpKind::Notify && (op.sig == Sig::E_PUT || op.sig == Sig::E_BACK)) {
      if (op.round != RoundOf::One || op.slotSpace != SlotSpace::Chunk || op.target != op.var || !inChunks)
        unsupported(op, "a flag write is `= 1` into flag c of each target, inside an engine-chunk loop");
      o << inRankLoop(op, pad,
                      guard(op) + "g.writeFlag(" + st + ", dc.signals[" + rankName(op.target) + "] + " +
                          cuIndexFn(op.sig) + "(c), " + opRef(op) + ");");
      return;
    }
    unsupported(op, "not a host op of the copy-engine form");
  }

  // ---- kernels -----------------------------------------------------------

  void kernel(const Stmt &k, std::ostringstream &host, const std::string &pad, bool inChunks) {
    const std::string name = id_ + "_engine_" + k.kernel;
    const bool reduces = hasReduce(k.body);
    bool epoch = k.endsCall;
    ir::forEachOp(k.body, [&](const Op &o) {
      epoch |= (o.kind == OpKind::Notify || o.kind == OpKind::Wait) && o.round != RoundOf::One;
    });
    const std::string grid = k.wide ? "pl.directCtas" : "1";
    const std::string block = k.wide ? "kDirectEngineReduceThreads" : "32";
    std::ostringstream &o = kernels_;
    o << "/// Kernel node `" << k.kernel << "` of the copy-engine form (" << ir::toString(k.stream) << "; grid "
      << grid << " x " << block << " threads" << (k.wide ? ", CTA i reduces slice i of the chunk" : "") << ").\n"
      << "template <int = 0>\n"
      << "__global__ void __launch_bounds__(" << block << ") " << name
      << "(DeviceComm dc, Plan pl, const std::byte* in,\n"
      << "    std::byte* out, int c, std::size_t done, std::size_t chunk) {\n"
      << "  [[maybe_unused]] const int r = pl.rank, n = pl.n;\n"
      << "  (void)in, (void)out, (void)c, (void)done, (void)chunk;\n";
    if (reduces) o << "  " << kReductionStatement << "\n";
    if (epoch) o << "  const uint64_t e = ctaBeginCall(dc);  // the call's epoch (after the previous grid)\n";
    o << "  bool ok = true;  // false once a checked wait gave up: the rest is skipped\n";
    deviceBody(k.body, o, "  ");
    o << "  (void)ok;\n";
    if (k.endsCall) o << "  ctaEndCall(dc, e);  // the call ends: the epoch advances\n";
    o << "}\n\n";
    host << pad << "// kernel " << k.kernel
         << " on " << ir::toString(k.stream) << " (its ops are printed in " << name << ")\n"
         << pad << "g.launch(" << streamName(k.stream) << ", " << name << "<>, " << grid
         << ", " << block << ", \"kernel " << k.kernel << " (" << idsOf(k.body) << ")\", dc, pl, in, out, "
         << (inChunks ? "c, done, chunk" : "0, 0, 0") << ");\n";
  }

  void deviceBody(const std::vector<Stmt> &body, std::ostringstream &o, const std::string &pad) {
    for (const Stmt &s : body) {
      if (s.isLoop) {
        if (!s.engineChunks) throw EmitError("direct program (copy engine): a kernel loop other than engine chunks");
        chunkLoop(s, o, pad, true);
      } else {
        deviceOp(s.op, o, pad);
      }
    }
  }

  void deviceOp(const Op &op, std::ostringstream &o, const std::string &pad) {
    if (op.host) unsupported(op, "a host op inside a kernel node");
    if (op.cond != Cond::Always) unsupported(op, "a condition inside a kernel");
    cited(op, o, pad);
    auto value = [&]() -> std::string {
      if (op.round == RoundOf::One) return "1";
      if (op.round == RoundOf::Zero) return "signalValue(e, 0)";
      unsupported(op, "a signal value other than sig(e,0) or 1");
    };
    switch (op.kind) {
    case OpKind::Notify: {
      if (op.slotSpace != SlotSpace::Cta || !cuIndexFn(op.sig) || op.target != op.var)
        unsupported(op, "a kernel notifies a per-CTA signal (index 0 of a one-CTA kernel) of each target");
      o << pad << "if (ok) {\n";
      if (op.fence) o << pad << "  __syncthreads();  // the CTA's earlier work is done\n";
      o << pad << "  if (threadIdx.x == 0) {\n";
      if (op.fence) o << pad << "    arch::fenceAcqRelSys();  // and published at system scope\n";
      o << inRankLoop(op, pad + "    ",
                      "arch::stReleaseSys(dc.signals[" + rankName(op.target) + "] + " + cuIndexFn(op.sig) + "(r, 0), " +
                          value() + ");")
        << pad << "  }\n"
        << pad << "}\n";
      return;
    }
    case OpKind::Wait: {
      if (!cuIndexFn(op.sig) || op.sigSrc != op.var) unsupported(op, "a kernel waits on each source of a forEach");
      const std::string idx = op.slotSpace == SlotSpace::Chunk ? std::string(cuIndexFn(op.sig)) + "(c)"
                              : op.slotSpace == SlotSpace::Cta ? std::string(cuIndexFn(op.sig)) + "(" +
                                                                     rankName(op.sigSrc) + ", 0)"
                                                               : "";
      if (idx.empty()) unsupported(op, "a wait on a per-CTA signal or a flag");
      o << pad << "if (ok) {  // CTA-collective: thread 0 polls, the barrier shares its verdict\n"
        << pad << "  int w = 1;\n"
        << pad << "  if (threadIdx.x == 0)\n"
        << inRankLoop(op, pad + "    ", "w = w && waitSignal(dc, " + idx + ", " + value() + ");")
        << pad << "  ok = __syncthreads_and(w) != 0;\n"
        << pad << "}\n";
      return;
    }
    case OpKind::Reduce: {
      if (op.step || op.var != RankRef::P || op.domain != Domain::All || !op.hasSrcSelf ||
          op.dst.buf != op.src.buf || op.dst.owner != op.src.owner || op.dst.part != op.src.part ||
          !op.dst.engineChunk || !op.srcSelf.engineChunk)
        unsupported(op, "the kernel reduction is in place over chunk c, the own contribution from the input");
      o << pad << "if (ok) {  // n == 2 (the IR's copy-engine reduction is derived for two ranks)\n"
        << pad << "  const int cta = int(blockIdx.x), C = int(gridDim.x);\n"
        << pad << "  const atom::Slice s{threadIdx.x, blockDim.x};\n"
        << pad << "  const std::size_t b = sliceBegin(chunk, C, cta), len = sliceSize(chunk, C, cta);\n"
        << pad << "  const std::byte* mine = " << bytesOf(op.srcSelf).ptr << " + b;\n"
        << pad << "  std::byte* landed = " << bytesOf(op.dst).ptr << " + b;\n"
        << pad << "  // Ascending rank order: rank 0's contribution first.\n"
        << pad << "  const std::byte* a = r == 0 ? mine : landed;\n"
        << pad << "  const std::byte* x = r == 0 ? landed : mine;\n"
        << pad << "  " << atomTypeName(id_) << "::template reducePair<" << reductionsName(id_) << ">(red, landed, nullptr, a, x, len, s);  // one dispatch for the slice\n"
        << pad << "}\n";
      return;
    }
    case OpKind::Reset:
      if (op.sig != Sig::E_PUT && op.sig != Sig::E_BACK) unsupported(op, "only the engine flags are reset");
      o << pad << "if (ok) {\n"
        << pad << "  uint64_t* own = dc.signals[dc.rank];\n"
        << pad << "  for (uint32_t i = threadIdx.x; i < uint32_t(kMaxEngineChunks); i += blockDim.x)\n"
        << pad << "    *reinterpret_cast<volatile uint64_t*>(own + " << cuBase(op.sig) << " + i) = 0;\n"
        << pad << "}\n";
      return;
    default: unsupported(op, "not an op of a copy-engine kernel");
    }
  }
};

} // namespace

EngineCode printEngineProgram(const std::string &id, ir::Kind kind, const ir::Program &prog) {
  if (!prog.engine || prog.roles.size() != 1) throw EmitError("direct program (copy engine): one host role is required");
  return Printer(id, kind).print(prog.roles[0]);
}

} // namespace purlin::codegen
