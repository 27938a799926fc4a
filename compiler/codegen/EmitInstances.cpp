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
const char *familySpelling(OpFamily f) {
  return f == OpFamily::Sum ? "OpFamily::Sum" : f == OpFamily::Product ? "OpFamily::Product" : "OpFamily::Extremum";
}
/// "f32 sum, f32 avg": the pairs of the masks that class `cls` reduces.
std::string pairsOf(int cls, unsigned dtypes, unsigned ops) {
  std::string s;
  for (int t = 0; t < kNumDTypes; ++t)
    for (int o = 0; o < kNumRedOps; ++o) {
      if (!(dtypes >> t & 1u) || !(ops >> o & 1u) || reductionOf(DType(t), RedOp(o)).cls != cls) continue;
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
    << "// every kernel below is compiled once per architecture; none is a template on the\n"
    << "// element type or the op. The template arguments that exist:\n";
  if (c.latency) o << "//   " << c.latency->kernel << "<W8>: W8 = true, false (Plan::words8)\n";
  if (c.throughput)
    o << "//   " << c.throughput->kernel << "<AtomT>: AtomT = the policy's Atom (" << c.policy.atom.pipelineStages
      << " stages x " << c.policy.atom.stageBytes << " B)"
      << (c.throughput->hasPush ? "; push CTAs with 1 or 2 lanes per role (LaneAtomOf)" : "") << "\n";
  if (c.direct) o << "//   " << c.direct->kernel << "<>: one\n";
  if (c.engine) o << "//   " << c.engine->host << " kernel nodes: one each\n";
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
      o << "//   " << name << pairsOf(cls, c.policy.reductions.dtypes, c.policy.reductions.ops) << "\n";
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
