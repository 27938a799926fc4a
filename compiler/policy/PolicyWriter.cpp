/// @file PolicyWriter.cpp
/// @brief policyToJson: writes a PolicySet in the explicit per-world form
/// that parsePolicies reads back to the same numbers.
#include "PolicyLoader.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

namespace purlin {

std::string policyToJson(const PolicySet &set) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["arch"] = toString(set.arch);
  json pols = json::object();
  for (const auto &[name, p] : set.policies) {
    json j;
    j["stagingBytes"] = p.stagingBytes;
    j["atom"] = {{"pipelineStages", p.atom.pipelineStages}, {"stageBytes", p.atom.stageBytes}};
    if (p.reductions.dtypes != kAllDTypesMask || p.reductions.ops != kAllOpsMask ||
        p.reductions.specialize != kDefaultSpecializedPairs ||
        p.reductions.specializePrograms != kDefaultSpecializedPrograms) {
      json dtypes = json::array(), ops = json::array(), specialize = json::array();
      for (int i = 0; i < kNumDTypes; ++i)
        if (p.reductions.dtypes >> i & 1u) dtypes.push_back(dtypeName(DType(i)));
      for (int i = 0; i < kNumRedOps; ++i)
        if (p.reductions.ops >> i & 1u) ops.push_back(redOpName(RedOp(i)));
      const uint64_t classes = reductionClassesOf(p.reductions.dtypes, p.reductions.ops);
      for (int pair = 0; pair < kNumPairs; ++pair)
        if ((p.reductions.specialize >> pair & 1u) && reducesPair(classes, pairDType(pair), pairOp(pair)))
          specialize.push_back(std::string(dtypeName(pairDType(pair))) + " " + redOpName(pairOp(pair)));
      json programs = json::array();
      for (int i = 0; i < int(std::size(kSpecializedProgramNames)); ++i)
        if (p.reductions.specializePrograms >> i & 1u) programs.push_back(kSpecializedProgramNames[i]);
      j["reductions"] = {{"dtypes", dtypes}, {"ops", ops}, {"specialize", specialize}, {"specializePrograms", programs}};
    }
    json worlds = json::object();
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      const WorldPolicy &w = p.world[n];
      json world = {{"latency", json::object()}, {"throughput", json::object()}, {"direct", json::object()}};
      // Every knob of policy_knobs.def that is set (0: the runtime's
      // default, except where 0 is a value the loader takes as such: Min 0).
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc) \
  if (w.Section.Key != 0 || (Min) == 0) world[#Section][#Key] = w.Section.Key;
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) \
  world[#Section][#Key] = w.Section.Key == Transfer::Pull ? "pull" : "push";
#include "purlin/policy_knobs.def"
      if (!w.direct.enabled) world["direct"] = false;
      worlds[std::to_string(n)] = world;
    }
    j["world"] = worlds;
    pols[name] = j;
  }
  doc["policies"] = pols;
  return doc.dump(2) + "\n";
}

namespace {
std::string sizeText(uint64_t v) {
  const char *units[] = {"", " KiB", " MiB", " GiB"};
  int u = 0;
  while (u < 3 && v >= 1024 && v % 1024 == 0) v /= 1024, ++u;
  return std::to_string(v) + units[u];
}
template <class T> std::string rangeOf(int64_t lo, int64_t hi, uint64_t multiple) {
  const bool bytes = std::is_same_v<T, std::size_t>;
  auto num = [&](int64_t v) { return bytes && v > 0 ? sizeText(uint64_t(v)) : std::to_string(v); };
  std::string s = multiple > 1 ? "integer, multiple of " + std::to_string(multiple) + ", " : "integer ";
  return s + "[" + num(lo) + ", " + (hi < 0 ? std::string("any") : num(hi)) + "]";
}
} // namespace

std::string policyKnobsTable() {
  std::string t = "| key (in `latency`, `throughput`, `direct` of a policy or of `world.\"n\"`) | values | 0 means | sets |\n"
                  "|---|---|---|---|\n";
  for (std::string_view section : {"latency", "throughput", "direct"}) {
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc)                                   \
  if (section == #Section)                                                                                      \
    t += "| `" #Section "." #Key "` | " + rangeOf<Type>(Min, Max, Multiple) + " | " + Unset + " | " + Doc + " |\n";
#define PURLIN_KNOB_TRANSFER(Section, Key, Const, Doc) \
  if (section == #Section) t += "| `" #Section "." #Key "` | `\"pull\"` or `\"push\"` | | " + std::string(Doc) + " |\n";
#include "purlin/policy_knobs.def"
  }
  return t;
}

} // namespace purlin
