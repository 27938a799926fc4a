/// @file GeneratedNamesTest.cpp
/// @brief Tests of checkGeneratedNames and of buildEmitInput reporting its clashes.
#include <catch2/catch.hpp>

#include "SampleInput.h"
#include "codegen/FromModule.h"
#include "codegen/GeneratedNames.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace purlin;
using namespace purlin::codegen;

namespace {

std::shared_ptr<Collective> allGatherNamed(const std::string &name, unsigned line) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->loc = Location{"names.pl", line, 7};
  c->op = ConsumeOp::Copy;
  c->in = Layout::Packed;
  c->out = Layout::Scattered;
  return c;
}

Module moduleOf(std::vector<std::shared_ptr<Collective>> cs) {
  Module m;
  m.file = "names.pl";
  for (auto &c : cs) m.collectives.push_back(c);
  return m;
}

} // namespace

TEST_CASE("distinct, unreserved names pass", "[codegen][names]") {
  auto a = allGatherNamed("a::x", 1), b = allGatherNamed("b::x", 2), c = allGatherNamed("allGather", 3);
  REQUIRE_FALSE(checkGeneratedNames({a.get(), b.get(), c.get()}).has_value());
  // Names the generated code only uses qualified (its output compiles).
  auto d = allGatherNamed("launch", 4), e = allGatherNamed("purlin::args", 5), f = allGatherNamed("stream", 6);
  REQUIRE_FALSE(checkGeneratedNames({d.get(), e.get(), f.get()}).has_value());
}

TEST_CASE("flattened names that collide are reported at the later alias", "[codegen][names]") {
  auto a = allGatherNamed("a::x", 3), b = allGatherNamed("a_x", 5);
  auto clash = checkGeneratedNames({a.get(), b.get()});
  REQUIRE(clash.has_value());
  REQUIRE(clash->loc.line == 5);
  REQUIRE(clash->message.find("'a::x' (line 3) and 'a_x' both generate 'purlin_a_x'") != std::string::npos);

  BuildResult r = buildEmitInput(moduleOf({a, b}), test::samplePolicySet(), {}, "n.cu");
  REQUIRE(r.error.has_value());
  REQUIRE(r.errorLoc.line == 5);
}

TEST_CASE("names the generated code uses are reserved", "[codegen][names]") {
  for (const char *name : {"Status", "snac::y", "Communicator", "DType", "RedOp", "CallArgs", "std::z"}) {
    auto c = allGatherNamed(name, 4);
    auto clash = checkGeneratedNames({c.get()});
    INFO(name);
    REQUIRE(clash.has_value());
    REQUIRE(clash->loc.line == 4);
    REQUIRE(clash->message.find("needs for itself") != std::string::npos);
  }
  auto capi = allGatherNamed("comm_unwrap", 2);
  auto clash = checkGeneratedNames({capi.get()});
  REQUIRE(clash.has_value());
  REQUIRE(clash->message.find("'purlin_comm_unwrap', which purlin/purlin.h already declares") != std::string::npos);
}

TEST_CASE("reservedCNames holds every purlin_* identifier of purlin.h", "[names]") {
  std::ifstream in(PURLIN_C_API_HEADER);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  const std::regex ident("\\bpurlin_[a-z_]+\\b");
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), ident); it != std::sregex_iterator(); ++it)
    found.insert(it->str());
  REQUIRE(found.size() > 20);
  const auto &reserved = reservedCNames();
  for (const std::string &name : found) {
    INFO(name);
    CHECK(std::find(reserved.begin(), reserved.end(), name) != reserved.end());
  }
}
