/// @file PolicyLoader.cpp
/// @brief Policy JSON reader: strict (unknown keys, wrong types and values
/// out of range are errors naming the JSON path), merging file values over
/// the built-in defaults of the target architecture.
#include "PolicyLoader.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>
#include <vector>
#include <sstream>

namespace purlin {
namespace {

using json = nlohmann::json;
constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

/// Thrown inside this file only; turned into the `error` string.
struct Failure {
  std::string message;
};

std::string shown(const json &v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

[[noreturn]] void fail(const std::string &path, const std::string &expected, const json &got) {
  throw Failure{path + ": expected " + expected + ", got " + shown(got)};
}

void requireObject(const json &v, const std::string &path, const std::vector<const char *> &keys) {
  if (!v.is_object())
    fail(path, "an object", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    bool known = false;
    std::string list;
    for (const char *k : keys) {
      known |= it.key() == k;
      list += list.empty() ? k : std::string(", ") + k;
    }
    if (!known)
      throw Failure{path + ": unknown key '" + it.key() + "' (expected one of: " + list + ")"};
  }
}

std::string rangeText(int64_t lo, uint64_t hi, uint64_t multiple) {
  std::string s = "an integer";
  if (multiple > 1)
    s += " multiple of " + std::to_string(multiple);
  return s + " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

/// Reads obj[key] if present: an integer in [lo, hi] (hi < 0: up to what T
/// holds), a multiple of `multiple` (policy_knobs.def's columns, and the
/// per-policy numbers).
template <class T>
void readKnob(const json &obj, const char *key, const std::string &path, int64_t lo, int64_t hi, uint64_t multiple,
              T &out) {
  auto it = obj.find(key);
  if (it == obj.end())
    return;
  const std::string p = path + "." + key;
  const uint64_t top = hi < 0 ? uint64_t(std::numeric_limits<T>::max()) : uint64_t(hi);
  const std::string expected = rangeText(lo, top, multiple);
  if (!it->is_number_integer())
    fail(p, expected, *it);
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if ((lo > 0 && v < uint64_t(lo)) || v > top || v % multiple != 0)
      fail(p, expected, *it);
    out = static_cast<T>(v);
  } else {
    const int64_t v = it->get<int64_t>();
    if (v < lo || (v >= 0 && uint64_t(v) > top) || uint64_t(v < 0 ? -v : v) % multiple != 0)
      fail(p, expected, *it);
    out = static_cast<T>(v);
  }
}

/// The JSON keys of one section of a world (policy_knobs.def).
std::vector<const char *> sectionKeys(std::string_view section) {
  std::vector<const char *> keys;
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) \
  if (section == #Section) keys.push_back(#Key);
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) \
  if (section == #Section) keys.push_back(#Key);
#include "purlin/policy_knobs.def"
  return keys;
}

/// The knobs of one section object (`v` at `path`) into w's section.
void readSection(const json &v, const std::string &path, std::string_view section, WorldPolicy &w) {
  requireObject(v, path, sectionKeys(section));
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) \
  if (section == #Section) readKnob(v, #Key, path, Min, Max, Multiple, w.Section.Key);
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc)                               \
  if (auto it = v.find(#Key); section == #Section && it != v.end()) {                 \
    if (*it == "pull")                                                                \
      w.Section.Key = Transfer::Pull;                                                 \
    else if (*it == "push")                                                           \
      w.Section.Key = Transfer::Push;                                                 \
    else                                                                              \
      fail(path + "." #Key, "\"pull\" or \"push\"", *it);                         \
  }
#include "purlin/policy_knobs.def"
}

/// Base (all world sizes) or one world size's overrides. "direct" may also
/// be false (off) or true (on, numbers unchanged); an object turns it on.
void readWorldFields(const json &v, const std::string &path, WorldPolicy &w) {
  if (auto it = v.find("latency"); it != v.end())
    readSection(*it, path + ".latency", "latency", w);
  if (auto it = v.find("throughput"); it != v.end())
    readSection(*it, path + ".throughput", "throughput", w);
  if (auto it = v.find("direct"); it != v.end()) {
    if (it->is_boolean()) {
      w.direct.enabled = it->get<bool>();
    } else {
      std::string keys;
      for (const char *k : sectionKeys("direct")) keys += (keys.empty() ? "" : ", ") + std::string(k);
      if (!it->is_object())
        fail(path + ".direct", "false, true or an object with " + keys, *it);
      readSection(*it, path + ".direct", "direct", w);
      w.direct.enabled = true;
    }
  }
}

bool isPolicyName(const std::string &s) {
  if (s.empty())
    return false;
  bool start = true;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ':' && i + 2 < s.size() && s[i + 1] == ':' && !start) {
      ++i;
      start = true;
      continue;
    }
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && !start)))
      return false;
    start = false;
  }
  return !start;
}

/// Whether the JSON text nests arrays / objects deeper than `limit`
/// (outside strings): the parser recurses once per level, so a deep
/// document would exhaust the stack before any schema check.
bool nestsDeeperThan(const std::string &text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

/// "reductions": {"dtypes": [names], "ops": [names]}: the pairs a
/// reduction compiles (types.def names; each key optional, default every one).
unsigned readNameMask(const json &v, const char *key, const std::string &path, bool dtypes) {
  const unsigned all = dtypes ? kAllDTypesMask : kAllOpsMask;
  auto it = v.find(key);
  if (it == v.end()) return all;
  const std::string p = path + "." + key;
  std::string names;
  for (int i = 0; i < (dtypes ? kNumDTypes : kNumRedOps); ++i)
    names += (i ? ", " : "") + std::string(dtypes ? dtypeName(DType(i)) : redOpName(RedOp(i)));
  if (!it->is_array() || it->empty()) fail(p, "a non-empty list of names (" + names + ")", *it);
  unsigned mask = 0;
  for (const json &e : *it) {
    int found = -1;
    for (int i = 0; i < (dtypes ? kNumDTypes : kNumRedOps) && e.is_string(); ++i)
      if (e.get<std::string>() == (dtypes ? dtypeName(DType(i)) : redOpName(RedOp(i)))) found = i;
    if (found < 0) fail(p, "names among " + names, e);
    mask |= 1u << found;
  }
  return mask;
}

/// "specialize": ["bf16 sum", ...]: pairs "dtype op" whose class the masks
/// compile (an empty list: none).
uint64_t readSpecialize(const json &v, const std::string &path, const ReductionPolicy &r) {
  auto it = v.find("specialize");
  if (it == v.end()) {
    // The default, where the masks compile it.
    const uint64_t classes = reductionClassesOf(r.dtypes, r.ops);
    uint64_t set = 0;
    for (int pair = 0; pair < kNumPairs; ++pair)
      if ((kDefaultSpecializedPairs >> pair & 1u) && reducesPair(classes, pairDType(pair), pairOp(pair)))
        set |= uint64_t(1) << pair;
    return set;
  }
  const std::string p = path + ".specialize";
  if (!it->is_array()) fail(p, "a list of pairs \"dtype op\" (e.g. \"bf16 sum\")", *it);
  uint64_t set = 0;
  for (const json &e : *it) {
    int found = -1;
    for (int pair = 0; pair < kNumPairs && e.is_string(); ++pair)
      if (e.get<std::string>() == std::string(dtypeName(pairDType(pair))) + " " + redOpName(pairOp(pair)))
        found = pair;
    if (found < 0) fail(p, "pairs \"dtype op\" of the names of types.def (e.g. \"bf16 sum\")", e);
    if (!reducesPair(reductionClassesOf(r.dtypes, r.ops), pairDType(found), pairOp(found)))
      fail(p, "pairs the masks compile (reductions.dtypes and reductions.ops)", e);
    set |= uint64_t(1) << found;
  }
  return set;
}

/// "specializePrograms": ["latency", ...]: the programs whose kernels a
/// specialized pair gets (an empty list: none).
unsigned readSpecializePrograms(const json &v, const std::string &path) {
  auto it = v.find("specializePrograms");
  if (it == v.end()) return kDefaultSpecializedPrograms;
  const std::string p = path + ".specializePrograms";
  std::string names;
  for (const char *n : kSpecializedProgramNames) names += std::string(names.empty() ? "" : ", ") + "\"" + n + "\"";
  if (!it->is_array()) fail(p, "a list of program names (" + names + ")", *it);
  unsigned mask = 0;
  for (const json &e : *it) {
    int found = -1;
    for (int i = 0; i < int(std::size(kSpecializedProgramNames)) && e.is_string(); ++i)
      if (e.get<std::string>() == kSpecializedProgramNames[i]) found = i;
    if (found < 0) fail(p, "program names among " + names, e);
    mask |= 1u << found;
  }
  return mask;
}

Policy readPolicy(const json &v, const std::string &name, const Policy &base) {
  std::string path = "policies." + name;
  requireObject(v, path,
                {"description", "stagingBytes", "atom", "reductions", "latency", "throughput", "direct", "world"});
  Policy p = base;
  p.name = name;
  if (auto it = v.find("description"); it != v.end() && !it->is_string())
    fail(path + ".description", "a string", *it);
  readKnob(v, "stagingBytes", path, 1 * MiB, 64 * GiB, 4096, p.stagingBytes);
  if (auto it = v.find("atom"); it != v.end()) {
    requireObject(*it, path + ".atom", {"pipelineStages", "stageBytes"});
    readKnob(*it, "pipelineStages", path + ".atom", 1, limits::kMaxPipelineStages, 1, p.atom.pipelineStages);
    readKnob(*it, "stageBytes", path + ".atom", limits::kStageBytesUnit, int64_t(limits::kMaxAtomWorkspaceBytes),
             limits::kStageBytesUnit, p.atom.stageBytes);
  }
  if (auto it = v.find("reductions"); it != v.end()) {
    requireObject(*it, path + ".reductions", {"dtypes", "ops", "specialize", "specializePrograms"});
    p.reductions.dtypes = readNameMask(*it, "dtypes", path + ".reductions", true);
    p.reductions.ops = readNameMask(*it, "ops", path + ".reductions", false);
    p.reductions.specialize = readSpecialize(*it, path + ".reductions", p.reductions);
    p.reductions.specializePrograms = readSpecializePrograms(*it, path + ".reductions");
  }
  for (int n = kMinWorld; n <= kMaxWorld; ++n)
    readWorldFields(v, path, p.world[n]);
  if (auto it = v.find("world"); it != v.end()) {
    if (!it->is_object())
      fail(path + ".world", "an object keyed by world size \"2\"..\"8\"", *it);
    for (auto w = it->begin(); w != it->end(); ++w) {
      const std::string &k = w.key();
      int n = (k.size() == 1 && k[0] >= '2' && k[0] <= '8') ? k[0] - '0' : 0;
      if (n == 0)
        throw Failure{path + ".world: unknown key '" + k + "' (expected a world size \"2\"..\"8\")"};
      std::string wp = path + ".world." + k;
      requireObject(*w, wp, {"latency", "throughput", "direct"});
      readWorldFields(*w, wp, p.world[n]);
    }
  }
  if (std::string e = validatePolicy(p); !e.empty())
    throw Failure{e};
  return p;
}

} // namespace

std::string validatePolicy(const Policy &p) {
  std::string path = "policies." + p.name;
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    const WorldPolicy &w = p.world[n];
    std::string wp = path + ".world." + std::to_string(n);
    if (w.latency.ctas < 1 || w.latency.threads < 32 || w.latency.threads % 32)
      return wp + ".latency: expected ctas >= 1 and threads a multiple of 32";
    const ThroughputPolicy &t = w.throughput;
    // One kernel holds every role's CTAs; each CTA has one epoch slot.
    if (t.stageCtas + t.consumeCtas + t.gatherCtas > limits::kMaxEpochSlots)
      return wp + ".throughput: expected stageCtas + consumeCtas + gatherCtas <= " +
             std::to_string(limits::kMaxEpochSlots) + " (one epoch slot per CTA of the kernel), got " +
             std::to_string(t.stageCtas + t.consumeCtas + t.gatherCtas);
    if (t.stageCtas < 1 || t.consumeCtas < 1 || t.gatherCtas < 1 || t.threads < 32 || t.threads % 32 ||
        t.threads > limits::kMaxThroughputThreads ||
        t.chunkBytes < 16 || t.chunkBytes % 16)
      return wp + ".throughput: expected CTA counts >= 1, threads a multiple of 32 in [32, " +
             std::to_string(limits::kMaxThroughputThreads) + "], chunkBytes a multiple of 16";
    const DirectPolicy &d = w.direct;
    if (d.enabled && (d.minBytes < 1 || d.ctas < 1 || d.ctas > kMaxDirectCtas || d.threads < 64 ||
                      d.threads > kMaxDirectThreads || d.threads % 32))
      return wp + ".direct: expected minBytes >= 1, ctas in [1, " + std::to_string(kMaxDirectCtas) +
             "] and threads a multiple of 32 in [64, " + std::to_string(kMaxDirectThreads) + "]";
    // Cyclic staging needs room for one chunk of every rank's partition.
    if (p.stagingBytes < static_cast<uint64_t>(n) * t.chunkBytes)
      return path + ".stagingBytes: expected at least world size x chunkBytes = " +
             std::to_string(n * t.chunkBytes) + " for world " + std::to_string(n) + ", got " +
             std::to_string(p.stagingBytes);
  }
  if (p.atom.pipelineStages < 1 || p.atom.pipelineStages > limits::kMaxPipelineStages ||
      p.atom.stageBytes < limits::kStageBytesUnit || p.atom.stageBytes % limits::kStageBytesUnit)
    return path + ".atom: expected pipelineStages in [1, " + std::to_string(limits::kMaxPipelineStages) +
           "] and stageBytes a multiple of " + std::to_string(limits::kStageBytesUnit);
  if (uint64_t(p.atom.pipelineStages) * p.atom.stageBytes > uint64_t(limits::kMaxAtomWorkspaceBytes))
    return path + ".atom: expected pipelineStages x stageBytes <= " + std::to_string(limits::kMaxAtomWorkspaceBytes) +
           " (the shared memory of one CTA), got " + std::to_string(uint64_t(p.atom.pipelineStages) * p.atom.stageBytes);
  return "";
}

PolicySet parsePolicies(const std::string &text, const std::string &source, Arch arch, std::string &error) {
  error.clear();
  PolicySet set = defaultPolicies(arch);
  const Policy builtin = set.policies.at("Policy");
  try {
    json doc;
    // The schema is 5 levels deep; refuse anything much deeper before parsing.
    constexpr int kMaxDepth = 32;
    if (nestsDeeperThan(text, kMaxDepth))
      throw Failure{"invalid JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels"};
    try {
      doc = json::parse(text);
    } catch (const json::parse_error &e) {
      throw Failure{std::string("invalid JSON: ") + e.what()};
    }
    requireObject(doc, "(top level)", {"description", "arch", "policies"});
    if (auto it = doc.find("arch"); it != doc.end()) {
      if (!it->is_string() || !parseArch(it->get<std::string>()))
        fail("arch", "\"sm_80\", \"sm_90\" or \"sm_100\"", *it);
      if (*parseArch(it->get<std::string>()) != arch)
        throw Failure{std::string("arch: the file is for ") + it->get<std::string>() + " but the target is " +
                      toString(arch) + " (use --arch " + it->get<std::string>() + ")"};
    }
    auto pols = doc.find("policies");
    if (pols == doc.end())
      throw Failure{"policies: missing (expected an object of named policies)"};
    if (!pols->is_object())
      fail("policies", "an object of named policies", *pols);
    for (auto it = pols->begin(); it != pols->end(); ++it) {
      if (!isPolicyName(it.key()))
        throw Failure{"policies: '" + it.key() + "' is not a C++ type name"};
      set.policies[it.key()] = readPolicy(*it, it.key(), builtin);
    }
  } catch (const Failure &f) {
    error = source + ": " + f.message;
    return PolicySet{arch, {}};
  } catch (const json::exception &e) {
    error = source + ": " + e.what();
    return PolicySet{arch, {}};
  }
  return set;
}

PolicySet loadPolicies(const std::string &path, Arch arch, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open the policy file";
    return PolicySet{arch, {}};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = path + ": cannot read the policy file";
    return PolicySet{arch, {}};
  }
  return parsePolicies(ss.str(), path, arch, error);
}

} // namespace purlin
