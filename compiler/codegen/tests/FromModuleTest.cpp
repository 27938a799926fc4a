/// @file FromModuleTest.cpp
/// @brief Tests of buildEmitInput: classification, selection, policies,
/// file names, unsupported collectives.
#include <catch2/catch.hpp>

#include "SampleInput.h"
#include "codegen/EmitCUDA.h"
#include "codegen/FromModule.h"

using namespace purlin;
using namespace purlin::codegen;

TEST_CASE("classify the paper's declarations", "[codegen]") {
  Module m = test::sampleModule();
  REQUIRE(classify(*m.collectives[0]) == CollectiveKind::ReduceScatter);
  REQUIRE(classify(*m.collectives[1]) == CollectiveKind::AllGather);
  REQUIRE(classify(*m.collectives[2]) == CollectiveKind::AllReduce);
  Collective a2a;
  a2a.op = ConsumeOp::Copy;
  a2a.in = Layout::Scattered;
  a2a.out = Layout::Transposed;
  REQUIRE(classify(a2a) == CollectiveKind::AllToAll);
  a2a.in = Layout::ScatteredV;
  a2a.out = Layout::TransposedV;
  REQUIRE(classify(a2a) == CollectiveKind::AllToAllV);
  Collective gather;
  gather.op = ConsumeOp::Copy;
  gather.in = Layout::Packed;
  gather.out = Layout::Scattered;
  gather.root = Root::Consumer;
  REQUIRE(classify(gather) == CollectiveKind::Gather);
  Collective odd;
  odd.op = ConsumeOp::Reduce;
  odd.in = Layout::Packed;
  odd.out = Layout::Packed;
  REQUIRE(classify(odd) == CollectiveKind::Unknown);
}

TEST_CASE("file names are printed safely: no line break or backslash in a comment, plain output names", "[codegen]") {
  Module m = test::sampleModule();
  m.file = "/tmp/evil\nname\\.pl";
  BuildResult r = buildEmitInput(m, test::samplePolicySet(), {}, "/abs/out/ar.cu");
  REQUIRE_FALSE(r.error.has_value());
  CHECK(r.input.sourceName == "evil?name?.pl");
  BuildResult bad = buildEmitInput(test::sampleModule(), test::samplePolicySet(), {}, "/abs/out/a\"r.cu");
  REQUIRE(bad.error.has_value());
  CHECK(bad.error->find("output file name 'a\"r.cu'") != std::string::npos);
  BuildResult nl = buildEmitInput(test::sampleModule(), test::samplePolicySet(), {}, "/abs/out/a\nb.cu");
  REQUIRE(nl.error.has_value());
  CHECK(nl.error->find("output file name 'a?b.cu'") != std::string::npos);
}

TEST_CASE("all collectives by default, in source order, file names only", "[codegen]") {
  BuildResult r = buildEmitInput(test::sampleModule(), test::samplePolicySet(), {}, "/abs/out/ar.cu");
  REQUIRE_FALSE(r.error.has_value());
  REQUIRE(r.input.sourceName == "allreduce.pl");
  REQUIRE(r.input.cuName == "ar.cu");
  REQUIRE(r.input.headerName == "ar.h");
  REQUIRE(r.input.programsName == "ar.programs.h");
  REQUIRE(r.input.deviceName == "ar.device.cuh");
  REQUIRE(r.input.unitNames[int(KernelUnit::Throughput)] == "ar.throughput.cu");
  REQUIRE(r.input.collectives.size() == 3);
  REQUIRE(r.input.collectives[2].name == "allReduce");
  REQUIRE(r.input.collectives[2].line == 6);
  REQUIRE(r.input.collectives[2].stages.size() == 2);
  REQUIRE(r.input.collectives[2].stageNames == std::vector<std::string>{"reduceScatter", "allGather"});
  REQUIRE(r.input.collectives[2].policy.world[5].latency.maxBytes == 5000);
}

TEST_CASE("selection and its errors", "[codegen]") {
  BuildResult r = buildEmitInput(test::sampleModule(), test::samplePolicySet(), {"allReduce"}, "ar.cu");
  REQUIRE_FALSE(r.error.has_value());
  REQUIRE(r.input.collectives.size() == 1);
  REQUIRE(r.input.collectives[0].kind == CollectiveKind::AllReduce);

  r = buildEmitInput(test::sampleModule(), test::samplePolicySet(), {"nope"}, "ar.cu");
  REQUIRE(r.error == std::optional<std::string>("no collective named 'nope' in allreduce.pl"));
}

TEST_CASE("missing policy and unsupported kinds are errors", "[codegen]") {
  Module m = test::sampleModule();
  auto dec = std::make_shared<Collective>(*m.collectives[0]);
  dec->name = "rsDecode";
  dec->policy = "decode";
  m.collectives.push_back(dec);
  BuildResult r = buildEmitInput(m, test::samplePolicySet(), {"rsDecode"}, "ar.cu");
  REQUIRE(r.error.has_value());
  REQUIRE(r.error->find("policy 'decode'") != std::string::npos);

  Module g;
  g.file = "alltoallv.pl";
  auto c = std::make_shared<Collective>();
  c->name = "allToAllV";
  c->loc = Location{"alltoallv.pl", 3, 7};
  c->op = ConsumeOp::Copy;
  c->in = Layout::ScatteredV;
  c->out = Layout::TransposedV;
  g.collectives.push_back(c);
  r = buildEmitInput(g, test::samplePolicySet(), {}, "g.cu");
  REQUIRE_FALSE(r.error.has_value());  // every collective of the def runs, AllToAllV too
  REQUIRE(r.input.collectives.size() == 1);

  Module empty;
  empty.file = "empty.pl";
  r = buildEmitInput(empty, test::samplePolicySet(), {}, "e.cu");
  REQUIRE(r.error == std::optional<std::string>("empty.pl declares no collective to generate code for"));
}
