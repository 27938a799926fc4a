/// @file Spelling.cpp
/// @brief Spellings of identifiers, runtime types and literals in generated code.
#include "codegen/Spelling.h"

namespace purlin::codegen {

std::vector<std::string> nameParts(const std::string &qualified) {
  std::vector<std::string> parts;
  std::string cur;
  for (std::size_t i = 0; i < qualified.size(); ++i) {
    if (qualified[i] == ':' && i + 1 < qualified.size() && qualified[i + 1] == ':') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
      ++i;
    } else {
      cur += qualified[i];
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

std::string baseName(const std::string &qualified) {
  auto parts = nameParts(qualified);
  return parts.empty() ? std::string() : parts.back();
}

std::string namespacePrefix(const std::string &qualified) {
  auto parts = nameParts(qualified);
  std::string out;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!out.empty()) out += "::";
    out += parts[i];
  }
  return out;
}

std::string flatName(const std::string &qualified) {
  std::string out;
  for (const auto &p : nameParts(qualified)) {
    if (!out.empty()) out += "_";
    out += p;
  }
  return out;
}

std::string cFunctionName(const std::string &qualified) {
  return "purlin_" + flatName(qualified);
}

std::string spellConsume(ConsumeOp op) { return std::string("snac::Consume::") + enumName(op); }
std::string spellLayout(Layout l) { return std::string("snac::Layout::") + enumName(l); }
std::string spellRoot(Root r) { return std::string("snac::Root::") + enumName(r); }

std::string dslConsume(ConsumeOp op) { return dslName(op); }
std::string dslLayout(Layout l) { return dslName(l); }

std::string archName(Arch a) { return toString(a); }

std::string dslRoot(Root r) { return std::string("Root::") + dslName(r); }

std::string spellTransform(const StageSpec &s) {
  std::string t = "snac::Transform<" + spellConsume(s.op) + ", " + spellLayout(s.in) + ", " +
                  spellLayout(s.out);
  if (s.root != Root::None) t += ", " + spellRoot(s.root);
  return t + ">";
}

std::string spellCollectiveType(const std::vector<StageSpec> &stages) {
  if (stages.size() == 1) return spellTransform(stages[0]);
  std::string t = "snac::Compose<";
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i) t += ",\n                               ";
    t += spellTransform(stages[i]);
  }
  return t + ">";
}

namespace {
AtomKind resolveNative(AtomKind kind, Arch arch) {
  if (kind != AtomKind::Native) return kind;
  // The datapath whose NativeOn column is the target (vocabulary.def).
  const std::string target = archName(arch);
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) \
  if (target == #NativeOn) return AtomKind::Name;
#include "purlin/vocabulary.def"
  return AtomKind::Generic;
}

const char *datapathName(AtomKind k) { return enumName(k); }
} // namespace

// `Atom` (Native) is spelled atom::Native, which the runtime resolves in
// each compilation pass, so a file built for sm_80 and sm_90 runs Ampere's
// datapath on an A100 and Hopper's on an H200; --arch only picks the policy.
std::string spellDatapath(AtomKind kind, Arch) {
  return std::string("atom::") + datapathName(kind);
}

std::string describeDatapath(AtomKind kind, Arch arch) {
  if (kind == AtomKind::Native)
    return std::string("Atom (native datapath of each compiled architecture; ") + datapathName(resolveNative(kind, arch)) +
           " on " + archName(arch) + ")";
  return datapathName(kind);
}

std::string u64(uint64_t v) { return std::to_string(v); }

std::string humanBytes(uint64_t v) {
  if (v != 0 && v % (1ull << 30) == 0) return std::to_string(v >> 30) + " GiB";
  if (v != 0 && v % (1ull << 20) == 0) return std::to_string(v >> 20) + " MiB";
  if (v != 0 && v % (1ull << 10) == 0) return std::to_string(v >> 10) + " KiB";
  return std::to_string(v) + " B";
}

} // namespace purlin::codegen
