/// @file PolicyTest.cpp
/// @brief Unit tests of the built-in policies and the policy JSON loader.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "PolicyLoader.h"

using namespace purlin;

namespace {
PolicySet parse(const std::string &text, std::string &error, Arch arch = Arch::Sm90) {
  return parsePolicies(text, "p.json", arch, error);
}
} // namespace

TEST_CASE("built-in defaults are valid for every arch and world size") {
  for (Arch a : {Arch::Sm80, Arch::Sm90, Arch::Sm100}) {
    PolicySet s = defaultPolicies(a);
    REQUIRE(s.policies.count("Policy") == 1);
    CHECK(validatePolicy(s.policies.at("Policy")) == "");
    const Policy &p = s.policies.at("Policy");
    for (int n = 3; n <= kMaxWorld; ++n) // crossovers never grow with the world
      CHECK(p.forWorld(n).latency.maxBytes <= p.forWorld(n - 1).latency.maxBytes);
  }
  const PolicySet builtIn = defaultPolicies(Arch::Sm90);  // (a reference into the temporary dangled: ASan)
  const Policy &h = builtIn.policies.at("Policy");
  CHECK(h.forWorld(2).latency.maxBytes == 4 * 1024 * 1024);
  CHECK(h.forWorld(2).latency.ctas == 128);
  CHECK(h.forWorld(4).latency.ctas == 32);
  CHECK(h.forWorld(2).throughput.consumeCtas == 16);
  CHECK(h.forWorld(2).throughput.chunkBytes == 4 * 1024 * 1024);
  CHECK(h.forWorld(2).throughput.transfer == Transfer::Push);
  CHECK(h.forWorld(4).throughput.transfer == Transfer::Pull);
  CHECK(h.atom.pipelineStages == 8);
  CHECK(h.atom.stageBytes == 16384);
  CHECK(h.stagingBytes == 256ull << 20);
}

TEST_CASE("arch names") {
  CHECK(parseArch("sm_90") == Arch::Sm90);
  CHECK_FALSE(parseArch("sm_75"));
  CHECK(std::string(toString(Arch::Sm100)) == "sm_100");
}

TEST_CASE("base fields and per-world overrides merge over the defaults") {
  std::string e;
  PolicySet s = parse(R"({"arch": "sm_90", "policies": {"decode": {
      "latency": {"maxBytes": 1048576},
      "throughput": {"transfer": "push"},
      "world": {"8": {"latency": {"maxBytes": 65536, "ctas": 32}}}}}})",
                      e);
  REQUIRE(e == "");
  REQUIRE(s.policies.count("Policy") == 1);
  const Policy &d = s.policies.at("decode");
  CHECK(d.forWorld(2).latency.maxBytes == 1048576);
  CHECK(d.forWorld(4).latency.maxBytes == 1048576);
  CHECK(d.forWorld(8).latency.maxBytes == 65536);
  CHECK(d.forWorld(8).latency.ctas == 32);
  CHECK(d.forWorld(2).latency.ctas == 128);  // the sm_90 world-2 default
  CHECK(d.forWorld(5).throughput.transfer == Transfer::Push);
  CHECK(d.atom.pipelineStages == 8);
}

TEST_CASE("errors name the JSON path and what was expected") {
  std::string e;
  parse(R"({"policies": {"decode": {"latency": {"threads": 100}}}})", e);
  CHECK(e == "p.json: policies.decode.latency.threads: expected an integer multiple of 32 in [32, 1024], got 100");
  parse(R"({"policies": {"decode": {"throughput": {"stageCtas": -1}}}})", e);
  CHECK(e == "p.json: policies.decode.throughput.stageCtas: expected an integer in [1, 128], got -1");
  parse(R"({"policies": {"decode": {"throughput": {"chunkBytes": "big"}}}})", e);
  CHECK(e.find("policies.decode.throughput.chunkBytes: expected an integer multiple of 16") != std::string::npos);
  parse(R"({"policies": {"decode": {"atom": {"stages": 4}}}})", e);
  CHECK(e == "p.json: policies.decode.atom: unknown key 'stages' (expected one of: pipelineStages, stageBytes)");
  parse(R"({"policies": {"decode": {"world": {"9": {}}}}})", e);
  CHECK(e.find("policies.decode.world: unknown key '9'") != std::string::npos);
  parse(R"({"policies": {"decode": {"throughput": {"transfer": "sideways"}}}})", e);
  CHECK(e == "p.json: policies.decode.throughput.transfer: expected \"pull\" or \"push\", got \"sideways\"");
  parse(R"({"polices": {}})", e);
  CHECK(e.find("(top level): unknown key 'polices'") != std::string::npos);
  parse(R"({"arch": "sm_80", "policies": {}})", e);
  CHECK(e.find("arch: the file is for sm_80 but the target is sm_90") != std::string::npos);
  parse(R"({"policies": {"1bad": {}}})", e);
  CHECK(e.find("'1bad' is not a C++ type name") != std::string::npos);
  parse("{\"policies\": ", e);
  CHECK(e.find("p.json: invalid JSON") != std::string::npos);
  parse("[1, 2]", e);
  CHECK(e.find("(top level): expected an object") != std::string::npos);
}

TEST_CASE("what the runtime would refuse is refused here (purlin/limits.h)") {
  std::string e;
  parse(R"({"policies": {"decode": {"atom": {"pipelineStages": 17}}}})", e);
  CHECK(e == "p.json: policies.decode.atom.pipelineStages: expected an integer in [1, 16], got 17");
  parse(R"({"policies": {"decode": {"atom": {"stageBytes": 528}}}})", e);
  CHECK(e.find("policies.decode.atom.stageBytes: expected an integer multiple of 512") != std::string::npos);
  parse(R"({"policies": {"decode": {"atom": {"pipelineStages": 16, "stageBytes": 32768}}}})", e);
  CHECK(e == "p.json: policies.decode.atom: expected pipelineStages x stageBytes <= 232448 (the shared memory of one "
             "CTA), got 524288");
  parse(R"({"policies": {"decode": {"latency": {"ctas": 129}}}})", e);
  CHECK(e == "p.json: policies.decode.latency.ctas: expected an integer in [1, 128], got 129");
  parse(R"({"policies": {"decode": {"throughput": {"stageCtas": 64, "consumeCtas": 64, "gatherCtas": 8}}}})", e);
  CHECK(e == "p.json: policies.decode.world.2.throughput: expected stageCtas + consumeCtas + gatherCtas <= 128 (one epoch "
             "slot per CTA of the kernel), got 136");
  // At the limits: accepted.
  parse(R"({"policies": {"decode": {"atom": {"pipelineStages": 14, "stageBytes": 16384},
           "throughput": {"stageCtas": 32, "consumeCtas": 64, "gatherCtas": 32}}}})", e);
  CHECK(e.empty());
}

TEST_CASE("a deeply nested document is an error, not a crash") {
  std::string e;
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  parse(deep, e);
  CHECK(e == "p.json: invalid JSON: nested deeper than 32 levels");
  // Brackets inside strings do not count.
  parse(R"({"description": ")" + std::string(100, '[') + R"(", "policies": {}})", e);
  CHECK(e.empty());
}

TEST_CASE("cross-field rule: staging holds a chunk per rank") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"Policy": {"stagingBytes": 4194304,
      "throughput": {"chunkBytes": 1048576}}}})",
                      e);
  CHECK(e.find("policies.Policy.stagingBytes: expected at least world size x chunkBytes") != std::string::npos);
  CHECK(s.policies.empty());
}

TEST_CASE("policyToJson round-trips") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"prefill": {"world": {"4": {"throughput": {"consumeCtas": 24}}}}}})", e);
  REQUIRE(e == "");
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  REQUIRE(back.policies.size() == s.policies.size());
  for (const auto &[name, p] : s.policies) {
    const Policy &q = back.policies.at(name);
    CHECK(q.stagingBytes == p.stagingBytes);
    CHECK(q.atom.stageBytes == p.atom.stageBytes);
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      CHECK(q.forWorld(n).latency.maxBytes == p.forWorld(n).latency.maxBytes);
      CHECK(q.forWorld(n).throughput.consumeCtas == p.forWorld(n).throughput.consumeCtas);
      CHECK(q.forWorld(n).throughput.chunkBytes == p.forWorld(n).throughput.chunkBytes);
    }
  }
  CHECK(back.policies.at("prefill").forWorld(4).throughput.consumeCtas == 24);
}

TEST_CASE("direct program knobs: defaults, overrides, off") {
  for (Arch a : {Arch::Sm80, Arch::Sm90, Arch::Sm100})
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      const DirectPolicy d = defaultPolicies(a).policies.at("Policy").forWorld(n).direct;  // a copy: the set is a temporary
      CHECK(d.enabled);
      CHECK(d.minBytes == 4 * 1024 * 1024);
      CHECK(d.ctas == 32);
      CHECK(d.threads == 512);
    }
  std::string e;
  PolicySet s = parse(R"({"policies": {"decode": {
      "direct": {"minBytes": 1048576, "threads": 256},
      "world": {"2": {"direct": {"ctas": 16}}, "4": {"direct": false}}}}})",
                      e);
  REQUIRE(e == "");
  const Policy &d = s.policies.at("decode");
  CHECK(d.forWorld(2).direct.enabled);
  CHECK(d.forWorld(2).direct.ctas == 16);
  CHECK(d.forWorld(2).direct.minBytes == 1048576); // base field kept under the per-world override
  CHECK(d.forWorld(2).direct.threads == 256);
  CHECK(d.forWorld(3).direct.ctas == 32);
  CHECK_FALSE(d.forWorld(4).direct.enabled);
  CHECK(d.forWorld(8).direct.enabled);
  // Off for every world size, then on again for one (numbers inherited).
  s = parse(R"({"policies": {"p": {"direct": false, "world": {"2": {"direct": true}}}}})", e);
  REQUIRE(e == "");
  CHECK(s.policies.at("p").forWorld(2).direct.enabled);
  CHECK(s.policies.at("p").forWorld(2).direct.ctas == 32);
  CHECK_FALSE(s.policies.at("p").forWorld(3).direct.enabled);
}

TEST_CASE("direct program knobs: each bad value names its path") {
  std::string e;
  parse(R"({"policies": {"p": {"direct": {"ctas": 0}}}})", e);
  CHECK(e == "p.json: policies.p.direct.ctas: expected an integer in [1, 128], got 0");
  parse(R"({"policies": {"p": {"direct": {"ctas": 129}}}})", e);
  CHECK(e == "p.json: policies.p.direct.ctas: expected an integer in [1, 128], got 129");
  parse(R"({"policies": {"p": {"world": {"2": {"direct": {"threads": 100}}}}}})", e);
  CHECK(e == "p.json: policies.p.world.2.direct.threads: expected an integer multiple of 32 in [64, 512], got 100");
  parse(R"({"policies": {"p": {"direct": {"threads": 1024}}}})", e);
  CHECK(e == "p.json: policies.p.direct.threads: expected an integer multiple of 32 in [64, 512], got 1024");
  parse(R"({"policies": {"p": {"direct": {"minBytes": 0}}}})", e);
  CHECK(e == "p.json: policies.p.direct.minBytes: expected an integer in [1, 68719476736], got 0");
  parse(R"({"policies": {"p": {"direct": {"minBytes": "256K"}}}})", e);
  CHECK(e.find("policies.p.direct.minBytes: expected an integer") != std::string::npos);
  parse(R"({"policies": {"p": {"direct": "off"}}})", e);
  CHECK(e == "p.json: policies.p.direct: expected false, true or an object with minBytes, ctas, threads, engineMinBytes, got \"off\"");
  parse(R"({"policies": {"p": {"direct": {"blocks": 4}}}})", e);
  CHECK(e == "p.json: policies.p.direct: unknown key 'blocks' (expected one of: minBytes, ctas, threads, engineMinBytes)");
  // validatePolicy checks a policy built in code (the tuner's) the same way.
  Policy p = defaultPolicies(Arch::Sm90).policies.at("Policy");
  p.world[3].direct.ctas = 200;
  CHECK(validatePolicy(p) ==
        "policies.Policy.world.3.direct: expected minBytes >= 1, ctas in [1, 128] and threads a multiple of 32 in "
        "[64, 512]");
  p.world[3].direct.enabled = false; // numbers of a disabled direct program are not used
  CHECK(validatePolicy(p) == "");
}

TEST_CASE("policyToJson round-trips the direct knobs") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"t": {"world": {"2": {"direct": {"minBytes": 65536, "ctas": 8,
      "threads": 128}}, "5": {"direct": false}}}}})",
                      e);
  REQUIRE(e == "");
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  for (const auto &[name, p] : s.policies)
    for (int n = kMinWorld; n <= kMaxWorld; ++n) {
      const DirectPolicy &a = p.forWorld(n).direct, &b = back.policies.at(name).forWorld(n).direct;
      CHECK(a.enabled == b.enabled);
      if (!a.enabled) continue;
      CHECK(a.minBytes == b.minBytes);
      CHECK(a.ctas == b.ctas);
      CHECK(a.threads == b.threads);
    }
  CHECK(back.policies.at("t").forWorld(2).direct.ctas == 8);
  CHECK_FALSE(back.policies.at("t").forWorld(5).direct.enabled);
  CHECK(policyToJson(s).find("\"direct\": false") != std::string::npos);
}

TEST_CASE("push lanes: optional, 1 or 2, round-tripped") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"t": {"throughput": {"transfer": "push", "lanes": 1},
      "world": {"2": {"throughput": {"consumeLanes": 2}}}}}})",
                      e);
  REQUIRE(e == "");
  const Policy &t = s.policies.at("t");
  CHECK(t.forWorld(2).throughput.lanes == 1);
  CHECK(t.forWorld(2).throughput.consumeLanes == 2);
  CHECK(t.forWorld(3).throughput.consumeLanes == 0);  // 0: the runtime's default
  CHECK(s.policies.at("Policy").forWorld(2).throughput.lanes == 0);
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  CHECK(back.policies.at("t").forWorld(2).throughput.lanes == 1);
  CHECK(back.policies.at("t").forWorld(2).throughput.consumeLanes == 2);
  CHECK(back.policies.at("t").forWorld(3).throughput.consumeLanes == 0);
  parse(R"({"policies": {"t": {"throughput": {"lanes": 3}}}})", e);
  CHECK(e == "p.json: policies.t.throughput.lanes: expected an integer in [1, 2], got 3");
}

TEST_CASE("reductions.specialize: pairs the masks compile, default bf16 sum, round-tripped") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"t": {"reductions": {"specialize": ["f32 sum", "bf16 max"]}},
      "none": {"reductions": {"specialize": []}},
      "noBf16": {"reductions": {"dtypes": ["f32"]}}}})",
                      e);
  REQUIRE(e == "");
  CHECK(s.policies.at("t").reductions.specialize == (pairBit(DType::F32, RedOp::Sum) | pairBit(DType::BF16, RedOp::Max)));
  CHECK(s.policies.at("none").reductions.specialize == 0);
  CHECK(s.policies.at("Policy").reductions.specialize == pairBit(DType::BF16, RedOp::Sum));  // the default
  CHECK(s.policies.at("noBf16").reductions.specialize == 0);  // the default, where the masks compile it
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  for (const char *name : {"t", "none", "noBf16", "Policy"})
    CHECK(back.policies.at(name).reductions.specialize == s.policies.at(name).reductions.specialize);
  parse(R"({"policies": {"t": {"reductions": {"specialize": ["bf16 summ"]}}}})", e);
  CHECK(e.find("policies.t.reductions.specialize") != std::string::npos);
  parse(R"({"policies": {"t": {"reductions": {"ops": ["sum"], "specialize": ["bf16 max"]}}}})", e);
  CHECK(e.find("pairs the masks compile") != std::string::npos);
  parse(R"({"policies": {"t": {"reductions": {"specialize": "bf16 sum"}}}})", e);
  CHECK(e.find("a list of pairs") != std::string::npos);
}

TEST_CASE("reductions.specializePrograms: program names, default all three, round-tripped") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"all": {"reductions": {"specializePrograms": ["latency", "throughput", "direct"]}},
      "tp": {"reductions": {"specializePrograms": ["throughput"]}},
      "none": {"reductions": {"specializePrograms": []}}}})",
                      e);
  REQUIRE(e == "");
  CHECK(s.policies.at("all").reductions.specializePrograms ==
        (kSpecializeLatency | kSpecializeThroughput | kSpecializeDirect));
  CHECK(s.policies.at("tp").reductions.specializePrograms == kSpecializeThroughput);
  CHECK(s.policies.at("none").reductions.specializePrograms == 0);
  CHECK(s.policies.at("Policy").reductions.specializePrograms ==
        (kSpecializeLatency | kSpecializeThroughput | kSpecializeDirect));  // the default
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  for (const char *name : {"all", "tp", "none", "Policy"})
    CHECK(back.policies.at(name).reductions.specializePrograms == s.policies.at(name).reductions.specializePrograms);
  parse(R"({"policies": {"t": {"reductions": {"specializePrograms": ["pull"]}}}})", e);
  CHECK(e.find("policies.t.reductions.specializePrograms") != std::string::npos);
  CHECK(e.find("\"latency\", \"throughput\", \"direct\"") != std::string::npos);
  parse(R"({"policies": {"t": {"reductions": {"specializePrograms": "latency"}}}})", e);
  CHECK(e.find("a list of program names") != std::string::npos);
}

TEST_CASE("reductions masks: names of types.def, optional, round-tripped") {
  std::string e;
  PolicySet s = parse(R"({"policies": {"t": {"reductions": {"dtypes": ["bf16", "f8e4m3"], "ops": ["sum"]}},
      "u": {"reductions": {"ops": ["max", "min"]}}}})",
                      e);
  REQUIRE(e == "");
  const Policy &t = s.policies.at("t"), &u = s.policies.at("u");
  CHECK(t.reductions.dtypes == ((1u << unsigned(DType::BF16)) | (1u << unsigned(DType::F8E4M3))));
  CHECK(t.reductions.ops == (1u << unsigned(RedOp::Sum)));
  CHECK(u.reductions.dtypes == kAllDTypesMask);  // the key left out: every dtype
  CHECK(u.reductions.ops == ((1u << unsigned(RedOp::Max)) | (1u << unsigned(RedOp::Min))));
  CHECK(s.policies.at("Policy").reductions.ops == kAllOpsMask);  // the default: every pair
  PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
  REQUIRE(e == "");
  CHECK(back.policies.at("t").reductions.dtypes == t.reductions.dtypes);
  CHECK(back.policies.at("t").reductions.ops == t.reductions.ops);
  CHECK(back.policies.at("u").reductions.ops == u.reductions.ops);
  CHECK(policyToJson(defaultPolicies(Arch::Sm90)).find("reductions") == std::string::npos);
  // Bad names, types and empty lists are errors naming the path.
  parse(R"({"policies": {"t": {"reductions": {"dtypes": ["bf17"]}}}})", e);
  CHECK(e.find("policies.t.reductions.dtypes") != std::string::npos);
  CHECK(e.find("f32, f16, bf16") != std::string::npos);
  parse(R"({"policies": {"t": {"reductions": {"ops": []}}}})", e);
  CHECK(e.find("policies.t.reductions.ops: expected a non-empty list") != std::string::npos);
  parse(R"({"policies": {"t": {"reductions": {"ops": ["sum"], "lanes": 2}}}})", e);
  CHECK(e.find("unknown key 'lanes'") != std::string::npos);
}

TEST_CASE("every knob of policy_knobs.def is read from JSON, checked and written back") {
  // Each knob set to the bottom of its range at world 3 only: read, the
  // other worlds untouched, written and read back to the same value; one
  // step past the top of its range is refused, naming the path.
  std::string e;
  int checked = 0;
  auto one = [&](const char *section, const char *key, int64_t value, auto member) {
    INFO(section << "." << key << " = " << value);
    const std::string text = std::string(R"({"policies": {"k": {"world": {"3": {")") + section + R"(": {")" + key +
                             R"(": )" + std::to_string(value) + "}}}}}}";
    PolicySet s = parse(text, e);
    REQUIRE(e == "");
    const Policy &k = s.policies.at("k");
    CHECK(int64_t(member(k.forWorld(3))) == value);
    PolicySet back = parsePolicies(policyToJson(s), "rt.json", Arch::Sm90, e);
    REQUIRE(e == "");
    CHECK(int64_t(member(back.policies.at("k").forWorld(3))) == value);
    CHECK(int64_t(member(back.policies.at("k").forWorld(4))) == int64_t(member(k.forWorld(4))));
    ++checked;
  };
#define PURLIN_KNOB(Section, Key, Const, Type, Min, Max, Multiple, Unset, Doc)                                   \
  one(#Section, #Key, int64_t(Min), [](const WorldPolicy &w) { return w.Section.Key; });                        \
  if ((Max) >= 0) {                                                                                             \
    parse(std::string(R"({"policies": {"k": {")") + #Section + R"(": {")" + #Key + R"(": )" +                   \
              std::to_string(int64_t(Max) + int64_t(Multiple)) + "}}}}",                                        \
          e);                                                                                                   \
    CHECK(e.find("policies.k." #Section "." #Key ": expected an integer") != std::string::npos);               \
  }
#include "purlin/policy_knobs.def"
  CHECK(checked == 16);  // the numeric rows (the 17th, the transfer, is "pull" or "push")
  // The knobs only the runtime's defaults set before: -1 latency slots per
  // thread (always the full launch shape), chunks per CTA, the copy-engine threshold.
  PolicySet s = parse(R"({"policies": {"k": {"latency": {"slotsPerThread": -1}, "throughput": {"chunksPerCta": 8},
      "direct": {"engineMinBytes": 1048576}}}})", e);
  REQUIRE(e == "");
  CHECK(s.policies.at("k").forWorld(5).latency.slotsPerThread == -1);
  CHECK(s.policies.at("k").forWorld(5).throughput.chunksPerCta == 8);
  CHECK(s.policies.at("k").forWorld(5).direct.engineMinBytes == 1048576);
  CHECK(s.policies.at("Policy").forWorld(5).direct.engineMinBytes == 0);  // 0: the runtime's default
  parse(R"({"policies": {"k": {"latency": {"slotsPerThread": -2}}}})", e);
  CHECK(e == "p.json: policies.k.latency.slotsPerThread: expected an integer in [-1, 64], got -2");
  parse(R"({"policies": {"k": {"direct": {"engineMinBytes": 0}}}})", e);
  CHECK(e.find("policies.k.direct.engineMinBytes: expected an integer in [1, ") != std::string::npos);
}

TEST_CASE("docs/policy.md lists every knob of policy_knobs.def (the table policyKnobsTable prints)") {
  std::ifstream in(PURLIN_SOURCE_DIR "/docs/policy.md");
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string table = policyKnobsTable();
  INFO("docs/policy.md must hold, verbatim:\n" << table);
  CHECK(doc.str().find(table) != std::string::npos);
  CHECK(table.find("`direct.engineMinBytes`") != std::string::npos);
}
