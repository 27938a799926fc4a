/// @file EmitInstances.cpp
/// @brief printInstantiationTable(): see EmitInstances.h.
#include "codegen/EmitInstances.h"

#include <iterator>
#include <sstream>
#include <utility>

#include "codegen/Spelling.h"
#include "purlin/reduction.h"
#include "purlin/types.h"

namespace purlin::codegen {

namespace {

const char *dtypeSpelling(DType t) {
  switch (t) {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  case DType::Name: return "DType::" #Name;
#include "purlin/types.def"
  }
  return "?";
}
const char *redOpSpelling(RedOp op) {
  switch (op) {
#define PURLIN_REDOP(Name, name, CNAME) \
  case RedOp::Name: return "RedOp::" #Name;
#include "purlin/types.def"
  }
  return "?";
}
const char *familySpelling(OpFamily f) {
  return f == OpFamily::Sum ? "OpFamily::Sum" : f == OpFamily::Product ? "OpFamily::Product" : "OpFamily::Extremum";
}
/// "f32 sum, f32 avg": the pairs class `cls` reduces. A call is accepted
/// by its class, so a class compiled for one pair of the masks runs the
/// other pairs it covers too (sum and avg, max and min, i8 and u8 product).
std::string pairsOf(int cls) {
  std::string s;
  for (int t = 0; t < kNumDTypes; ++t)
    for (int o = 0; o < kNumRedOps; ++o) {
      if (reductionOf(DType(t), RedOp(o)).cls != cls) continue;
      s += (s.empty() ? "" : ", ") + std::string(dtypeName(DType(t))) + " " + redOpName(RedOp(o));
    }
  return s;
}

std::string maskText(unsigned mask, int count, bool dtypes) {
  if ((mask & ((1u << count) - 1u)) == (1u << count) - 1u) return "every one";
  std::string s;
  for (int i = 0; i < count; ++i)
    if (mask >> i & 1u) s += (s.empty() ? "" : ", ") + std::string(dtypes ? dtypeName(DType(i)) : redOpName(RedOp(i)));
  return s.empty() ? "none" : s;
}

} // namespace

std::vector<int> specializedPairsOf(const EmitCollective &c) {
  std::vector<int> pairs;
  if (!reduces(c.kind)) return pairs;
  const uint64_t classes = reductionClassesOf(c);
  for (int pair = 0; pair < kNumPairs; ++pair)
    if ((c.policy.reductions.specialize >> pair & 1u) && reducesPair(classes, pairDType(pair), pairOp(pair)))
      pairs.push_back(pair);
  return pairs;
}

std::string pairSpelling(int pair) {
  return std::string("pairIndex(") + dtypeSpelling(pairDType(pair)) + ", " + redOpSpelling(pairOp(pair)) + ")";
}

uint64_t reductionClassesOf(const EmitCollective &c) {
  if (!reduces(c.kind)) return 0;
  return purlin::reductionClassesOf(c.policy.reductions.dtypes, c.policy.reductions.ops);
}

std::string pairTag(int pair) {
  return std::string(dtypeName(pairDType(pair))) + "_" + redOpName(pairOp(pair));
}

std::string atomTypeName(const std::string &id) { return id + "_Atom"; }

std::vector<KernelRow> kernelRowsOf(const EmitCollective &c, const std::string &id) {
  std::vector<KernelRow> rows;
  const bool reduction = reduces(c.kind);
  std::vector<int> pairs{kAnyPair};
  for (int pair : specializedPairsOf(c)) pairs.push_back(pair);
  for (int pair : pairs) {
    const bool any = pair == kAnyPair;
    // A specialized pair's kernels, in the programs the policy specializes
    // (reductions.specializePrograms); its calls run the others' of every pair.
    auto has = [&](unsigned program) { return any || (c.policy.reductions.specializePrograms & program) != 0; };
    const std::string tag = any ? "any" : pairTag(pair);
    const std::string arg = any ? "kAnyPair" : pairSpelling(pair);
    auto unitOf = [&](KernelUnit family) { return any ? family : KernelUnit::Pairs; };
    if (c.latency && has(kSpecializeLatency)) {
      using Words = KernelRow::Words;
      using Ranks = KernelRow::Ranks;
      // Every pair of a reduction: W8 and W4 for two ranks, one kernel for more.
      const bool split = reduction && any;
      std::vector<std::pair<Words, Ranks>> forms{{Words::Whole, split ? Ranks::Two : Ranks::Any},
                                                 {Words::Partial, split ? Ranks::Two : Ranks::Any}};
      if (split) forms.push_back({Words::Either, Ranks::Many});
      for (const auto &[words, ranks] : forms) {
        KernelRow r;
        r.program = KernelRow::Program::Latency;
        r.words = words;
        r.ranks = ranks;
        r.pair = pair;
        r.unit = unitOf(KernelUnit::Latency);
        const std::string wordsName = words == Words::Whole ? "W8" : words == Words::Partial ? "W4" : "";
        const std::string wordsArg = std::string("packet::WordForm::") +
                                     (words == Words::Whole ? "Whole" : words == Words::Partial ? "Partial" : "Either");
        const std::string ranksArg = std::string("packet::RankForm::") +
                                     (ranks == Ranks::Any ? "Any" : ranks == Ranks::Two ? "Two" : "Many");
        r.accessor = c.latency->kernel + (ranks == Ranks::Two ? "_two" : ranks == Ranks::Many ? "_many" : "") +
                     (wordsName.empty() ? "" : "_" + wordsName) + (reduction ? "_" + tag : "");
        r.kernel = c.latency->kernel + "<" + wordsArg + (reduction ? ", " + ranksArg + ", " + arg : "") + ">";
        r.type = "snac::ProgramKernel";
        rows.push_back(r);
      }
    }
    if (c.throughput && has(kSpecializeThroughput)) {
      KernelRow r;
      r.program = KernelRow::Program::Throughput;
      r.pair = pair;
      r.unit = unitOf(KernelUnit::Throughput);
      r.accessor = c.throughput->kernel + "_" + tag;
      r.kernel = c.throughput->kernel + "<atom::AtomFor<" + atomTypeName(id) + ", " + arg + ">>";
      r.type = "snac::ProgramKernel";
      rows.push_back(r);
    }
    if (c.direct && has(kSpecializeDirect)) {
      KernelRow r;
      r.program = KernelRow::Program::Direct;
      r.pair = pair;
      r.unit = unitOf(KernelUnit::Direct);
      r.accessor = c.direct->kernel + "_" + tag;
      r.kernel = c.direct->kernel + "<" + arg + ">";
      r.type = "snac::DirectKernel";
      rows.push_back(r);
    }
  }
  return rows;
}

std::string printInstantiationTable(const EmitInput &in, const EmitCollective &c, const std::string &id) {
  std::ostringstream o;
  const uint64_t classes = reductionClassesOf(c);
  const bool reduction = reduces(c.kind);
  const std::vector<int> special = specializedPairsOf(c);
  o << "// Instantiation table of " << c.name << " (purlinc, from its declaration and policy " << c.policy.name
    << "):\n"
    << "// the kernels that exist, each compiled once per architecture in the kernel unit named\n"
    << "// and reached through its accessor (declared below). "
    << (reduction ? "kAnyPair: every pair, the call's class\n"
                    "// dispatched once per range; a specialized pair's kernels inline its loop with the op\n"
                    "// a constant, and the launch picks them by the call's pair.\n"
                  : "A copy: no element type, no op.\n")
    << "// The throughput kernels take the policy's Atom (" << c.policy.atom.pipelineStages << " stages x "
    << c.policy.atom.stageBytes << " B)";
  if (c.throughput && c.throughput->hasPush)
    o << "; push CTAs of the (stage, consume) lanes " << pushLaneShapesText(c.throughput->pushLanes)
      << " (the policy's: LaneAtomOf)";
  o << ".\n";
  if (reduction && !special.empty()) {
    o << "// Specialized pairs (policy reductions.specialize):";
    for (int pair : special) o << " " << dtypeName(pairDType(pair)) << " " << redOpName(pairOp(pair));
    o << "; their kernels in the programs (reductions.specializePrograms):";
    std::string programs;
    for (int i = 0; i < int(std::size(kSpecializedProgramNames)); ++i)
      if (c.policy.reductions.specializePrograms >> i & 1u) programs += std::string(" ") + kSpecializedProgramNames[i];
    o << (programs.empty() ? " none" : programs) << " (the others' calls: the kernels of every pair).\n";
  }
  if (c.engine) o << "// The copy-engine form (" << c.engine->host << "): one kernel per node, every pair, in "
                  << in.unitNames[int(KernelUnit::Direct)] << ".\n";
  if (!reduction) {
    o << "// A copy: no reduction class (the programs move bytes of any dtype).\n";
  } else {
    int count = 0;
    for (int cls = 0; cls < kNumReductionClasses; ++cls) count += int(classes >> cls & 1u);
    o << "// Reduction classes (purlin/reduction.h): one loop per class and datapath, compiled\n"
      << "// once per kernel unit and entered once per contiguous range (Atom::reduce,\n"
      << "// Atom::reducePair, snac::reduceGroupWords). Policy masks: dtypes "
      << maskText(c.policy.reductions.dtypes, kNumDTypes, true) << "; ops "
      << maskText(c.policy.reductions.ops, kNumRedOps, false) << ": " << count << " classes.\n";
    for (int cls = 0; cls < kNumReductionClasses; ++cls) {
      if (!(classes >> cls & 1u)) continue;
      std::string name = std::string(dtypeName(classElement(cls))) + " " + familyName(classFamily(cls));
      name.resize(name.size() < 16 ? 16 : name.size(), ' ');
      o << "//   " << name << pairsOf(cls) << "\n";
    }
  }
  o << "inline constexpr uint64_t " << reductionsName(id) << " =";
  if (classes == 0) {
    o << " 0;\n";
  } else {
    bool first = true;
    for (int cls = 0; cls < kNumReductionClasses; ++cls) {
      if (!(classes >> cls & 1u)) continue;
      o << (first ? "\n    " : " |\n    ") << "classBit(" << dtypeSpelling(classElement(cls)) << ", "
        << familySpelling(classFamily(cls)) << ")";
      first = false;
    }
    o << ";\n";
  }
  o << "// The rows: accessor  // kernel (" << in.deviceName << "), unit\n";
  for (const KernelRow &r : kernelRowsOf(c, id))
    o << r.type << " " << r.accessor << "();  // " << r.kernel << ", " << in.unitNames[int(r.unit)] << "\n";
  return o.str();
}

} // namespace purlin::codegen
