/// @file PolicyWriter.cpp
/// @brief policyToJson: writes a PolicySet in the explicit per-world form
/// that parsePolicies reads back to the same numbers.
#include "PolicyLoader.h"

#include <nlohmann/json.hpp>

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
        p.reductions.specialize != kDefaultSpecializedPairs) {
      json dtypes = json::array(), ops = json::array(), specialize = json::array();
      for (int i = 0; i < kNumDTypes; ++i)
        if (p.reductions.dtypes >> i & 1u) dtypes.push_back(dtypeName(DType(i)));
      for (int i = 0; i < kNumRedOps; ++i)
        if (p.reductions.ops >> i & 1u) ops.push_back(redOpName(RedOp(i)));
      const uint64_t classes = reductionClassesOf(p.reductions.dtypes, p.reductions.ops);
      for (int pair = 0; pair < kNumPairs; ++pair)
        if ((p.reductions.specialize >> pair & 1u) && reducesPair(classes, pairDType(pair), pairOp(pair)))
          specialize.push_back(std::string(dtypeName(pairDType(pair))) + " " + redOpName(pairOp(pair)));
      j["reductions"] = {{"dtypes", dtypes}, {"ops", ops}, {"specialize", specialize}};
    }
    json worlds = json::object();
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      const WorldPolicy &w = p.world[n];
      const ThroughputPolicy &t = w.throughput;
      json &world = worlds[std::to_string(n)];
      world = {
          {"latency", {{"maxBytes", w.latency.maxBytes}, {"ctas", w.latency.ctas}, {"threads", w.latency.threads}}},
          {"throughput",
           {{"stageCtas", t.stageCtas},
            {"consumeCtas", t.consumeCtas},
            {"gatherCtas", t.gatherCtas},
            {"threads", t.threads},
            {"chunkBytes", t.chunkBytes},
            {"transfer", t.transfer == Transfer::Pull ? "pull" : "push"}}}};
      if (t.lanes) world["throughput"]["lanes"] = t.lanes;
      if (t.consumeLanes) world["throughput"]["consumeLanes"] = t.consumeLanes;
      const DirectPolicy &d = w.direct;
      if (d.enabled)
        worlds[std::to_string(n)]["direct"] = {{"minBytes", d.minBytes}, {"ctas", d.ctas}, {"threads", d.threads}};
      else
        worlds[std::to_string(n)]["direct"] = false;
    }
    j["world"] = worlds;
    pols[name] = j;
  }
  doc["policies"] = pols;
  return doc.dump(2) + "\n";
}

} // namespace purlin
