/// @file EmitSource.cpp
/// @brief Emits the generated files but the API header (EmitCUDA.h):
/// NAME.programs.h (per collective a commented block tying it to the .pl
/// line and the SNAC IR, a policy struct with the constants per world size,
/// the runtime Transform/Compose type, the instantiation table with one
/// accessor per kernel, the Programs struct and the host code enqueueing a
/// planned call), NAME.device.cuh (the device code printed from the
/// verified IR), the kernel units defining the accessors, and NAME.cu (the
/// host API, C++ and C ABI, calling purlin::snac::launch).
#include "codegen/EmitCUDA.h"

#include <sstream>
#include <type_traits>

#include "codegen/EmitDeviceEntry.h"
#include "codegen/Signature.h"
#include "codegen/EmitInstances.h"
#include "codegen/Spelling.h"
#include "ir/RuntimePlan.h"
#include "purlin/reduction.h"

namespace purlin::codegen {

namespace {

/// "allReduce_engineGraph": the host function enqueueing the copy-engine form.
std::string engineGraphName(const std::string &id) { return id + "_engineGraph"; }

/// The comment block above a collective: declaration, stages, IR roles.
void emitBanner(std::ostringstream &o, const EmitInput &in, const EmitCollective &c) {
  o << "// " << std::string(76, '=') << "\n"
    << "// " << c.name << ": " << toString(c.kind) << ", declared at " << in.sourceName << ":"
    << c.line << "\n";
  if (c.stages.size() == 2) {
    o << "//   compose<" << (c.stageNames.size() == 2 ? c.stageNames[0] : "F") << ", "
      << (c.stageNames.size() == 2 ? c.stageNames[1] : "G")
      << ">, one kernel; G consumes F's intermediate in place:\n";
    for (std::size_t i = 0; i < 2; ++i) {
      const StageSpec &s = c.stages[i];
      o << "//     " << (i == 0 ? "F" : "G") << " = " << dslConsume(s.op) << " " << dslLayout(s.in)
        << " -> " << dslLayout(s.out) << (s.root != Root::None ? ", " + dslRoot(s.root) : "")
        << "\n";
    }
  } else if (!c.stages.empty()) {
    const StageSpec &s = c.stages[0];
    o << "//   SNAC<" << dslConsume(s.op) << ", " << dslLayout(s.in) << " -> " << dslLayout(s.out)
      << (s.root != Root::None ? ", " + dslRoot(s.root) : "") << ">\n";
  }
  o << "//   datapath: " << describeDatapath(c.atom, in.arch) << "; policy: " << c.policy.name
    << " (" << archName(in.arch) << ")\n";
  if (!c.programs.empty())
    o << "// SNAC IR (purlinc --emit=ir " << in.sourceName << "); the programs' device code\n"
      << "// below is printed from it, op by op (// %N cites op N of the program named in\n"
      << "// the section's heading):\n";
  for (const ProgramNote &p : c.programs) {
    o << "//   " << p.name << " program" << (p.when.empty() ? "" : ", when " + p.when) << ":\n";
    for (const RoleNote &r : p.roles) {
      o << "//     role " << r.role;
      if (!r.ctas.empty()) o << " [" << r.ctas << " CTAs]";
      if (!r.opIds.empty()) o << " ops " << r.opIds;
      o << "\n";
      if (!r.summary.empty()) o << "//       " << r.summary << "\n";
    }
  }
  o << "// " << std::string(76, '=') << "\n";
}

/// The policy struct: the codesign constants of policy `c.policy`.
void emitPolicy(std::ostringstream &o, const EmitCollective &c, const std::string &id) {
  const Policy &p = c.policy;
  o << "/// Codesign constants of policy `" << p.name << "` (Atom pipeline capacity per CTA =\n"
    << "/// pipelineStages * stageBytes = " << humanBytes(uint64_t(p.atom.pipelineStages) * uint64_t(p.atom.stageBytes))
    << "). world[n] holds the knobs for n ranks;\n"
    << "/// bytes <= latencyMaxBytes select the latency program, larger calls the\n"
    << "/// throughput program (the same decision on every rank). A call captured\n"
    << "/// into a CUDA graph with at least directMinBytes takes the direct program\n"
    << "/// (directCtas < 0: never).\n"
    << "struct " << id << "_Policy {\n"
    << "  static constexpr int pipelineStages = " << p.atom.pipelineStages << ";\n"
    << "  static constexpr int stageBytes = " << p.atom.stageBytes << ";\n"
    << "  static constexpr std::size_t stagingBytes = " << u64(p.stagingBytes) << "; // "
    << humanBytes(p.stagingBytes) << " per staging half\n"
    << "  static constexpr snac::WorldConsts world[kMaxRanks + 1] = {\n"
    << "      {}, // n = 0: unused\n"
    << "      {}, // n = 1: unused\n";
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    // The row the kernels read: ir::worldConsts, the same mapping the IR
    // plans calls with (RuntimePlan.h). Every member of policy_knobs.def
    // that is not 0 (an omitted member is 0: the runtime's default), a line
    // per section.
    const snac::WorldConsts w = ir::worldConsts(p.forWorld(n), c.kind);
    std::string row, section;
    auto add = [&](const char *sec, const char *member, const std::string &value) {
      if (!row.empty()) row += section == sec ? ", " : ",\n       ";
      section = sec;
      row += std::string(".") + member + " = " + value;
    };
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) \
  if (w.Const != 0)                                                                     \
    add(#Section, #Const, std::is_same_v<Type, std::size_t> ? u64(uint64_t(w.Const)) : std::to_string(w.Const));
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) add(#Section, #Const, w.Const ? "true" : "false");
#include "purlin/policy_knobs.def"
    o << "      {" << row << "}, // n = " << n << (w.directCtas < 0 ? " (direct program off)" : "") << "\n";
  }
  o << "  };\n};\n\n";
}

std::string callArgsBody(const EmitCollective &c, SizeArgs sizes) {
  std::string s;
  s += "  snac::CallArgs args{};\n";
  s += "  args.in = in;\n  args.out = out;\n";
  switch (sizes) {
  case SizeArgs::Count: s += "  args.count = count;\n"; break;
  case SizeArgs::Counts: s += "  args.counts = counts;\n"; break;
  case SizeArgs::SendRecvCounts:
  case SizeArgs::DeviceSendRecvCounts:
    s += "  args.sendCounts = sendCounts;\n  args.sendDispls = sendDispls;\n  args.recvCounts = recvCounts;\n"
         "  args.recvDispls = recvDispls;\n  args.maxCount = maxCount;\n";
    break;
  case SizeArgs::DeviceCounts: s += "  args.counts = counts;\n  args.maxCount = maxCount;\n"; break;
  }
  if (snac::def::isDeviceForm(sizes)) s += "  args.countsOnDevice = true;  // the kernels read the counts (docs/device-counts.md)\n";
  s += "  args.dtype = dtype;\n";
  if (reduces(c.kind)) s += "  args.op = op;\n";
  if (isRooted(c.kind)) s += "  args.root = root;\n";
  return s;
}

/// The C++ host function (inside its namespace block).
void emitCxxApi(std::ostringstream &o, const EmitCollective &c, const std::string &id, SizeArgs sizes) {
  o << "\nStatus " << baseName(c.name) << formSuffix(sizes) << "(Communicator &comm";
  for (const Param &p : hostParams(c.kind, sizes)) o << ", " << p.cxxType << p.name;
  o << ") {\n"
    << callArgsBody(c, sizes)
    << "  // Validates the arguments, picks the program by bytes, launches it.\n"
    << "  return snac::launch<" << id << "_Collective, " << id << "_Policy, " << id << "_Datapath, " << id
    << "_Programs>(comm, args, stream);\n"
    << "}\n";
}

/// The C ABI wrapper: NULL communicator check, enum conversion, message.
void emitCApi(std::ostringstream &o, const EmitCollective &c, SizeArgs sizes) {
  const std::string cname = cFunctionName(c.name) + formSuffix(sizes);
  o << "extern \"C\" purlin_status_t " << cname << "(purlin_comm_t comm";
  for (const Param &p : hostParams(c.kind, sizes)) o << ", " << p.cType << p.name;
  o << ") {\n"
    << "  purlin::Communicator *communicator = purlin_comm_unwrap(comm);\n"
    << "  if (communicator == nullptr)\n"
    << "    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, \"" << cname
    << ": the communicator is NULL\");\n"
    << "  const purlin::Status status = purlin::gen::" << c.name << formSuffix(sizes) << "(*communicator";
  for (const Param &p : hostParams(c.kind, sizes)) o << ", " << (p.toCxx.empty() ? p.name : p.toCxx);
  o << ");\n"
    << "  if (status == purlin::Status::Ok)\n"
    << "    return PURLIN_OK;\n"
    << "  return purlin::capi::fail(static_cast<purlin_status_t>(status), purlin::lastError());\n"
    << "}\n";
}

/// The device API's host launcher (NAME_launchDevice, docs/device-api.md):
/// NAME's arguments (its host form), then the caller's kernel and the values
/// of its parameters after the DeviceCall; snac::launch checks and plans
/// the call as NAME's and launches that kernel in place of the planned
/// program's (latency or throughput).
void emitLaunchDevice(std::ostringstream &o, const EmitInput &in, const EmitCollective &c, const std::string &id) {
  const SizeArgs sizes = apiForms(c.kind).front();
  o << "/// Device API (docs/device-api.md): " << c.name << "'s call (its checks, plan and checked mode, as\n"
    << "/// " << baseName(c.name) << "'s) run by the caller's `kernel`, launched in place of the kernel of the\n"
    << "/// program the plan takes (latency or throughput: its grid, block and shared memory) with\n"
    << "/// the call (snac::DeviceCall) first and `kernelArgs` after it; the kernel calls\n"
    << "/// " << id << "_device<Pair>(call) (" << in.deviceName << "). A kernel that cannot hold that\n"
    << "/// grid at once is refused (Status::Unsupported) with nothing launched. Pair: the\n"
    << "/// (dtype, op) pair the kernel's " << id << "_device is compiled for (kAnyPair: any).\n"
    << "template <int Pair = kAnyPair, class... K, class... A>\n"
    << "Status " << id << "_launchDevice(Communicator &comm";
  for (const Param &p : hostParams(c.kind, sizes)) o << ", " << p.cxxType << p.name;
  o << ",\n    void (*kernel)(snac::DeviceCall, K...), A&&... kernelArgs) {\n"
    << "  static_assert(sizeof...(K) == sizeof...(A), \"" << id
    << "_launchDevice: one value per kernel parameter after the DeviceCall\");\n"
    << "  snac::DeviceArgs<K...> values(std::forward<A>(kernelArgs)...);\n"
    << "  const snac::DeviceLaunch launch = snac::deviceLaunchOf<Pair>(kernel, values);\n"
    << callArgsBody(c, sizes)
    << "  args.deviceLaunch = &launch;\n"
    << "  return snac::launch<" << id << "_Collective, " << id << "_Policy, " << id << "_Datapath, " << id
    << "_Programs, true>(comm, args, stream);\n"
    << "}\n\n";
}

/// The host code that picks the program of a planned call and enqueues it
/// (NAME_enqueue): the plan's flags are the IR's dispatch (snac::makePlan,
/// planDirect: latency by the crossover, direct for captured calls from
/// directMinBytes, its copy-engine form from directEngineMinBytes, pull or
/// push by the policy), the same decision on every rank. Only the printed
/// programs are reachable; a plan of another is refused. The kernels are
/// the instantiation table's, through NAME_Programs.
void emitEnqueue(std::ostringstream &o, const EmitCollective &c, const std::string &id) {
  const ThroughputCode &tp = *c.throughput;
  const std::string bytes = c.ir && !c.ir->ir().dispatchBytes.empty() ? c.ir->ir().dispatchBytes : "bytes";
  const std::string programs = id + "_Programs::template ";
  o << "/// The host code that enqueues " << c.name << "'s program for a planned call, with the\n"
    << "/// kernels for `Pair` (kAnyPair: every pair; the plan's flags: snac::makePlan / planDirect,\n"
    << "/// the same on every rank).\n"
    << "template <class AtomT, int Pair>\n"
    << "Status " << id << "_enqueueFor(const snac::Plan& pl, const DeviceComm& dc, const snac::DirectPeers& peers,\n"
    << "    const std::byte* in, std::byte* out, const snac::LaunchContext& lc) {\n"
    << "  (void)peers;\n";
  if (c.direct) {
    o << "  // program direct: a captured call, " << bytes << " >= world[n].directMinBytes\n";
    if (c.engine)
      o << "  if (pl.direct && pl.directEngine) {  // its copy-engine form: >= directEngineMinBytes, unchecked\n"
        << "    snac::EngineGraph g = lc.graph();\n"
        << "    " << engineGraphName(id) << "(pl, dc, peers, in, out, g);\n"
        << "    return lc.finish(g);\n"
        << "  }\n";
    else
      o << "  if (pl.direct && pl.directEngine) return lc.refuse(Status::Internal, \"no copy-engine form was printed\");\n";
    o << "  if (pl.direct)  // its kernel form; may start while the previous grid runs (ctaBeginCall waits)\n"
      << "    return snac::launchProgram(lc, \"direct kernel\", " << programs << "direct<Pair>(),\n"
      << "                               pl.directCtas, pl.directThreads, 0, lc.pdl, dc, pl, peers, in, out);\n";
  } else {
    o << "  if (pl.direct) return lc.refuse(Status::Internal, \"no direct program was printed\");\n";
  }
  o << "  // program latency: " << bytes << " <= world[n].latencyMaxBytes\n"
    << "  if (pl.latency) {\n"
    << "    const snac::ProgramKernel kernel = pl.words8 ? " << programs << "latency<true, Pair>(pl.n) : "
    << programs << "latency<false, Pair>(pl.n);\n"
    << "    return snac::launchProgram(lc, \"latency kernel\", kernel, pl.latencyCtas, pl.latencyThreads, 0, lc.pdl, dc, pl, in, out);\n"
    << "  }\n"
    << "  // program throughput, pull or push by Plan::push\n";
  if (!tp.hasPull || !tp.hasPush)
    o << "  if (" << (tp.hasPull ? "pl.push" : "!pl.push") << ")\n"
      << "    return lc.refuse(Status::Unsupported, \"the policy's " << (tp.hasPull ? "push" : "pull")
      << " transfer for world size \" + std::to_string(pl.n) +\n"
      << "                                              \" has no printed program (purlinc printed "
      << (tp.hasPull ? "pull" : "push") << " only)\");\n";
  if (tp.hasPush && tp.pushLanes != kEveryPushLaneShape) {
    std::string cond;
    for (const PushLaneShape &l : tp.pushLanes) cond += (cond.empty() ? "" : " || ") + ("(" + pushLaneCondition(l) + ")");
    o << "  // The push CTA shapes the kernel instantiates: the policy's (stage lanes, consume lanes).\n"
      << "  if (pl.push && !(" << cond << "))\n"
      << "    return lc.refuse(Status::Unsupported, \"push lanes (\" + std::to_string(pl.lanes) + \", \" +\n"
      << "                     std::to_string(pl.consumeLanes) + \") per stage and consume CTA: the throughput kernel \"\n"
      << "                     \"has " << pushLaneShapesText(tp.pushLanes)
      << " only (the lanes of the policy purlinc compiled)\");\n";
  }
  o << "  return snac::launchProgram(lc, \"throughput kernel\", " << programs << "throughput<AtomT, Pair>(),\n"
    << "                             pl.ctas(), pl.threads, AtomT::kWorkspaceBytes, false, dc, pl, in, out);\n"
    << "}\n\n";
  // The dispatch by the call's pair: a specialized pair's kernels, else every pair's.
  const std::vector<int> special = specializedPairsOf(c);
  o << "/// The host code that picks " << c.name << "'s program for a planned call and enqueues it:\n"
    << "/// the kernels of the call's pair where the instantiation table specializes it.\n"
    << "template <class AtomT>\n"
    << "Status " << id << "_enqueue(const snac::Plan& pl, const DeviceComm& dc, const snac::DirectPeers& peers,\n"
    << "    const std::byte* in, std::byte* out, const snac::LaunchContext& lc) {\n";
  if (!special.empty()) {
    o << "  switch (pairIndex(pl.dtype, pl.op)) {\n";
    for (int pair : special)
      o << "    case " << pairSpelling(pair) << ":\n"
        << "      return " << id << "_enqueueFor<AtomT, " << pairSpelling(pair) << ">(pl, dc, peers, in, out, lc);\n";
    o << "    default: break;\n"
      << "  }\n";
  }
  o << "  return " << id << "_enqueueFor<AtomT, kAnyPair>(pl, dc, peers, in, out, lc);\n"
    << "}\n\n";
}

/// The body of NAME_Programs' accessor of `program`: the row of the call's
/// pair (`Pair`; a copy has one row per form), else a compile-time error.
void emitRowChoice(std::ostringstream &o, const EmitCollective &c, const std::vector<KernelRow> &rows,
                   KernelRow::Program program, const char *what) {
  const bool reduction = reduces(c.kind);
  auto call = [&](int pair) {
    std::string w8, w4, many, one;
    for (const KernelRow &r : rows) {
      if (r.program != program || r.pair != pair) continue;
      if (program != KernelRow::Program::Latency) one = r.accessor + "()";
      else if (r.ranks == KernelRow::Ranks::Many) many = r.accessor + "()";
      else (r.words == KernelRow::Words::Whole ? w8 : w4) = r.accessor + "()";
    }
    if (program != KernelRow::Program::Latency) return one;
    if (w8.empty() && many.empty()) return std::string();  // none of this pair's own
    const std::string two = "W8 ? " + w8 + " : " + w4;
    return many.empty() ? two : "n == 2 ? (" + two + ") : " + many;
  };
  if (!reduction) {
    o << "    return " << call(kAnyPair) << ";  // a copy: one row for every pair\n";
    return;
  }
  o << "    if constexpr (Pair == kAnyPair) return " << call(kAnyPair) << ";\n";
  for (int pair : specializedPairsOf(c)) {
    const std::string own = call(pair);  // empty: the policy does not specialize this program
    o << "    else if constexpr (Pair == " << pairSpelling(pair) << ") return "
      << (own.empty() ? call(kAnyPair) + ";  // the kernel of every pair (reductions.specializePrograms)" : own + ";")
      << "\n";
  }
  o << "    else static_assert(Pair == kAnyPair, \"" << c.name << ": no " << what
    << " kernel of this pair in the instantiation table\");\n";
}

/// The instantiation table and the Programs struct that hands its kernels
/// to snac::launch (NAME.programs.h).
void emitPrograms(std::ostringstream &o, const EmitInput &in, const EmitCollective &c, const std::string &id) {
  if (!c.latency || !c.throughput) return;
  const std::vector<KernelRow> rows = kernelRowsOf(c, id);
  o << "// ---- " << c.name << ": instantiation table ----\n\n" << printInstantiationTable(in, c, id);
  if (c.engine)
    o << "/// The copy-engine form's graph of a planned call (" << in.unitNames[int(KernelUnit::Direct)] << ").\n"
      << "void " << engineGraphName(id) << "(const snac::Plan& pl, const DeviceComm& dc, const snac::DirectPeers& peers,\n"
      << "    const std::byte* in, std::byte* out, snac::EngineGraph& g);\n";
  o << "\ntemplate <class AtomT>\n"
    << "Status " << id << "_enqueue(const snac::Plan& pl, const DeviceComm& dc, const snac::DirectPeers& peers,\n"
    << "    const std::byte* in, std::byte* out, const snac::LaunchContext& lc);\n\n"
    << "/// The programs purlinc printed for " << c.name << ", as snac::launch takes them: the\n"
    << "/// kernels of the instantiation table by program, form and pair.\n"
    << "struct " << id << "_Programs {\n"
    << "  /// The reduction classes the programs compile (the instantiation table; 0: a copy).\n"
    << "  [[maybe_unused]] static constexpr uint64_t reductions = " << reductionsName(id) << ";\n"
    << "  /// The latency kernel of the whole-word form W8 for `Pair` (kAnyPair: every pair)\n"
    << "  /// and `n` ranks.\n"
    << "  template <bool W8, int Pair = kAnyPair> static snac::ProgramKernel latency([[maybe_unused]] int n) {\n";
  emitRowChoice(o, c, rows, KernelRow::Program::Latency, "latency");
  o << "  }\n"
    << "  /// The throughput kernel for datapath AtomT and `Pair`.\n"
    << "  template <class AtomT, int Pair = kAnyPair> static snac::ProgramKernel throughput() {\n"
    << "    static_assert(std::is_same_v<AtomT, " << atomTypeName(id) << ">, \"" << c.name
    << ": the throughput kernels exist for the policy's Atom (" << c.policy.atom.pipelineStages << " x "
    << c.policy.atom.stageBytes << " B) only; another pipeline needs purlinc output of a policy setting it\");\n";
  emitRowChoice(o, c, rows, KernelRow::Program::Throughput, "throughput");
  o << "  }\n";
  if (c.direct) {
    o << "  /// The direct program's kernel form for `Pair`.\n"
      << "  static constexpr bool hasDirect = true;\n"
      << "  template <int Pair = kAnyPair> static snac::DirectKernel direct() {\n";
    emitRowChoice(o, c, rows, KernelRow::Program::Direct, "direct");
    o << "  }\n";
  } else {
    o << "  /// No direct program: no world size shown for this policy derives one.\n"
      << "  static constexpr bool hasDirect = false;\n"
      << "  template <int Pair = kAnyPair> static snac::DirectKernel direct() { return nullptr; }\n";
  }
  o << "  /// f(std::integral_constant<int, Pair>) for every Pair with kernels of its own\n"
    << "  /// (kAnyPair first; the instantiation table's specialized pairs).\n"
    << "  template <class F> static void forEachPair(F&& f) {\n"
    << "    f(std::integral_constant<int, kAnyPair>{});\n";
  for (int pair : specializedPairsOf(c))
    o << "    f(std::integral_constant<int, " << pairSpelling(pair) << ">{});\n";
  o << "  }\n"
    << "  /// The host code that picks the program of a planned call and enqueues it.\n"
    << "  template <class AtomT> static snac::ProgramEnqueue enqueue() { return " << id << "_enqueue<AtomT>; }\n"
    << "  /// The rules of the call plan (" << in.planName << ", from the IR's plan ops).\n"
    << "  using Rules = " << id << "_PlanRules;\n"
    << "};\n\n";
  emitEnqueue(o, c, id);
  emitLaunchDevice(o, in, c, id);
}

/// The device code printed from the IR (NAME.device.cuh).
void emitDevice(std::ostringstream &o, const EmitCollective &c) {
  if (!c.latency || !c.throughput) return;
  const LatencyCode &lat = *c.latency;
  const ThroughputCode &tp = *c.throughput;
  auto world = [](const std::optional<ir::VerifiedIR> &v) { return v ? std::to_string(v->ir().n) : std::string("?"); };
  o << "// ---- " << c.name << ": program latency, printed from the SNAC IR ----\n\n" << lat.text << "\n"
    << "// ---- " << c.name << ": program throughput (pull), printed from the SNAC IR of world n = " << world(c.pullIR)
    << " ----\n\n"
    << tp.pullText;
  if (!tp.pushText.empty())
    o << "// ---- " << c.name << ": program throughput (push), printed from the SNAC IR of world n = "
      << world(c.pushIR) << " ----\n\n"
      << tp.pushText;
  o << "// ---- " << c.name << ": the throughput kernel (pull or push by Plan::push) ----\n\n"
    << tp.kernelText << "\n"
    << "// ---- " << c.name << ": the device API's entry (the latency or the throughput program) ----\n\n"
    << printDeviceEntry(flatName(c.name), lat.reduces) << "\n";
  if (c.direct)
    o << "// ---- " << c.name << ": program direct, printed from the SNAC IR of world n = " << c.directWorld
      << " ----\n\n"
      << c.direct->text << "\n";
  if (c.engine)
    o << "// ---- " << c.name << ": program direct, copy-engine form, printed from the SNAC IR of world n = "
      << c.directWorld << " ----\n\n"
      << c.engine->text << "\n";
}

} // namespace

std::string emitProgramsHeader(const EmitInput &in) {
  std::ostringstream o;
  o << "// @file " << in.programsName << "\n"
    << "// @brief The programs of the collectives declared in " << in.sourceName << " as launchers\n"
    << "// take them (generated by purlinc for " << archName(in.arch) << "; do not edit): per collective its\n"
    << "// policy struct (constants per world size), the runtime type of its SNAC transformation,\n"
    << "// its instantiation table (the kernels that exist, each reached through an accessor\n"
    << "// defined in the kernel unit that compiles it), NAME_Programs as snac::launch takes it,\n"
    << "// and the host code that enqueues a planned call. The kernels' device code is in\n"
    << "// " << in.deviceName << "; a program that launches these collectives includes this\n"
    << "// file and links the kernel units, it does not compile them again.\n"
    << "#pragma once\n\n"
    << "#include <cstddef>\n"
    << "#include <cstdint>\n"
    << "#include <type_traits>\n\n"
    << "#include \"purlin/snac/collective.cuh\"\n\n"
    << "#include \"" << in.planName << "\"\n\n"
    << "namespace purlin::gen {\n\n";
  for (const EmitCollective &c : in.collectives) {
    const std::string id = flatName(c.name);
    emitBanner(o, in, c);
    emitPolicy(o, c, id);
    o << "/// The SNAC transformation" << (c.stages.size() == 2 ? " (F then G, fused)" : "") << ".\n"
      << "using " << id << "_Collective = " << spellCollectiveType(c.stages) << ";\n"
      << "/// The datapath (Atom) moving the bytes.\n"
      << "using " << id << "_Datapath = " << spellDatapath(c.atom, in.arch) << ";\n"
      << "/// The Atom of the policy's pipeline: the one the throughput kernels are compiled for.\n"
      << "using " << atomTypeName(id) << " = atom::Atom<" << id << "_Datapath, " << id << "_Policy::pipelineStages, "
      << id << "_Policy::stageBytes>;\n\n";
    emitPrograms(o, in, c, id);
  }
  o << "} // namespace purlin::gen\n";
  return o.str();
}

std::string emitDeviceCode(const EmitInput &in) {
  std::ostringstream o;
  o << "// @file " << in.deviceName << "\n"
    << "// @brief The device code of the collectives declared in " << in.sourceName << " (generated by\n"
    << "// purlinc for " << archName(in.arch) << "; do not edit): their latency, throughput (pull, push) and\n"
    << "// direct programs and the host code of the direct program's copy-engine form, printed\n"
    << "// from the verified SNAC IR (each statement cites its op, // %N; the IR is in the\n"
    << "// banners of " << in.programsName << "). Templates only: the kernel units instantiate the\n"
    << "// rows of the instantiation table, each in one unit.\n"
    << "#pragma once\n\n"
    << "#include \"" << in.programsName << "\"\n\n"
    << "namespace {\n\nusing namespace purlin;\nusing namespace purlin::snac;\nusing namespace purlin::gen;\n\n";
  for (const EmitCollective &c : in.collectives) emitDevice(o, c);
  o << "} // namespace\n";
  return o.str();
}

std::string emitKernelUnit(const EmitInput &in, KernelUnit unit) {
  std::ostringstream o;
  const std::string name = in.unitNames[int(unit)];
  o << "// @file " << name << "\n"
    << "// @brief Kernel unit \"" << unitName(unit) << "\" of " << in.sourceName << " (generated by purlinc for "
    << archName(in.arch) << "; do not\n"
    << "// edit): the rows of the instantiation table (" << in.programsName << ") compiled here.\n"
    << "// Each accessor names one kernel of " << in.deviceName << ", so that kernel is compiled\n"
    << "// in this unit only, in parallel with the other units, and launched from any other.\n";
  bool any = false;
  for (const EmitCollective &c : in.collectives) {
    if (!c.latency || !c.throughput) continue;
    for (const KernelRow &r : kernelRowsOf(c, flatName(c.name))) any |= r.unit == unit;
    any |= unit == KernelUnit::Direct && c.engine.has_value();
  }
  if (!any) {
    o << "// No row of the table is in this unit (" << (unit == KernelUnit::Pairs ? "no specialized pair" : "no such program")
      << ").\n";
    return o.str();
  }
  o << "#include \"" << in.deviceName << "\"\n\n"
    << "namespace {\n"
    << "// Communicator creation loads this unit's kernels too (purlin/snac/module_anchor.cuh).\n"
    << "[[maybe_unused]] const bool kUnitRegistered = PurlinModuleRegistration<void>::registered;\n"
    << "} // namespace\n\n"
    << "namespace purlin::gen {\n";
  for (const EmitCollective &c : in.collectives) {
    if (!c.latency || !c.throughput) continue;
    const std::string id = flatName(c.name);
    bool header = false;
    auto heading = [&] {
      if (!header) o << "\n// " << c.name << "\n";
      header = true;
    };
    for (const KernelRow &r : kernelRowsOf(c, id)) {
      if (r.unit != unit) continue;
      heading();
      o << r.type << " " << r.accessor << "() { return " << r.kernel << "; }\n";
    }
    if (unit == KernelUnit::Direct && c.engine) {
      heading();
      o << "void " << engineGraphName(id) << "(const snac::Plan& pl, const DeviceComm& dc, const snac::DirectPeers& peers,\n"
        << "    const std::byte* in, std::byte* out, snac::EngineGraph& g) {\n"
        << "  " << c.engine->host << "<>(pl, dc, peers, in, out, g);\n"
        << "}\n";
    }
  }
  o << "\n} // namespace purlin::gen\n";
  return o.str();
}

std::string emitSource(const EmitInput &in) {
  std::ostringstream o;
  o << "// @file " << in.cuName << "\n"
    << "// @brief Host API of the collectives declared in " << in.sourceName << " (generated by purlinc\n"
    << "// for " << archName(in.arch) << "; do not edit): each function, and its C ABI wrapper, calls\n"
    << "// snac::launch with the collective's programs (" << in.programsName << "), which picks the\n"
    << "// program by bytes and capture; the kernels are compiled by the kernel units.\n"
    << "#include \"" << in.headerName << "\"\n\n"
    << "#include <cstddef>\n\n"
    << "#include \"" << in.programsName << "\"\n"
    << "#include \"purlin/host/communicator.h\"\n"
    << "#include \"purlin/purlin.h\"\n\n";
  // Consecutive collectives of one namespace share one namespace block.
  std::string open;
  bool isOpen = false;
  for (const EmitCollective &c : in.collectives) {
    std::string ns = "purlin::gen" + (namespacePrefix(c.name).empty() ? "" : "::" + namespacePrefix(c.name));
    if (isOpen && ns != open) o << "\n} // namespace " << open << "\n\n";
    if (!isOpen || ns != open) o << "namespace " << ns << " {\n";
    open = ns;
    isOpen = true;
    for (SizeArgs sizes : apiForms(c.kind)) emitCxxApi(o, c, flatName(c.name), sizes);
  }
  if (isOpen) o << "\n} // namespace " << open << "\n\n";
  bool first = true;
  for (const EmitCollective &c : in.collectives)
    for (SizeArgs sizes : apiForms(c.kind)) {
      if (!first) o << "\n";
      first = false;
      emitCApi(o, c, sizes);
    }
  return o.str();
}

} // namespace purlin::codegen
