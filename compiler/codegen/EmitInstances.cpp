/// @file EmitInstances.cpp
/// @brief printInstantiationTable(): see EmitInstances.h.
#include "codegen/EmitInstances.h"

#include <sstream>

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

std::string printInstantiationTable(const EmitCollective &c, const std::string &id) {
  std::ostringstream o;
  const uint64_t classes = reductionClassesOf(c);
  const bool reduction = reduces(c.kind);
  o << "// Instantiation table of " << c.name << " (purlinc, from its declaration and policy " << c.policy.name
    << "):\n"
    << (reduction ? "// every kernel below is compiled once per architecture for every pair (kAnyPair: the\n"
                    "// call's class dispatched per range), and once more per specialized pair. The\n"
                    "// template arguments that exist:\n"
                  : "// every kernel below is compiled once per architecture (a copy: no element type,\n"
                    "// no op). The template arguments that exist:\n");
  const std::vector<int> special = specializedPairsOf(c);
  std::string pairs = "kAnyPair (every pair of the classes below)";
  for (int pair : special) pairs += ", " + std::string(dtypeName(pairDType(pair))) + " " + redOpName(pairOp(pair));
  if (c.latency)
    o << "//   " << c.latency->kernel << (reduction ? "<W8, Pair>" : "<W8>") << ": W8 = true, false (Plan::words8)"
      << (reduction ? "; Pair = " + pairs : std::string()) << "\n";
  if (c.throughput)
    o << "//   " << c.throughput->kernel << "<AtomT>: AtomT = the policy's Atom (" << c.policy.atom.pipelineStages
      << " stages x " << c.policy.atom.stageBytes << " B)"
      << (reduction && !special.empty() ? ", and atom::PairAtom of it for each specialized pair" : "")
      << (c.throughput->hasPush ? "; push CTAs with 1 or 2 lanes per role (LaneAtomOf)" : "") << "\n";
  if (c.direct) o << "//   " << c.direct->kernel << "<Pair>: Pair = " << (reduction ? pairs : "kAnyPair") << "\n";
  if (c.engine) o << "//   " << c.engine->host << " kernel nodes: one each (every pair)\n";
  if (reduction && !special.empty())
    o << "// Specialized pairs (policy reductions.specialize): their latency, throughput and direct\n"
      << "// kernels inline the pair's loop with the op a constant; the launch picks them by the call's pair.\n";
  if (!reduction) {
    o << "// A copy: no reduction class (the programs move bytes of any dtype).\n";
  } else {
    int count = 0;
    for (int cls = 0; cls < kNumReductionClasses; ++cls) count += int(classes >> cls & 1u);
    o << "// Reduction classes (purlin/reduction.h): one loop per class and datapath, compiled\n"
      << "// once per translation unit and entered once per contiguous range (Atom::reduce,\n"
      << "// atom::reducePairVec16, snac::reduceGroupWords). Policy masks: dtypes "
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
  return o.str();
}

} // namespace purlin::codegen
