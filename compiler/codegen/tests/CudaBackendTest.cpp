/// @file CudaBackendTest.cpp
/// @brief Tests of runCudaEmit: files beside each other, byte-identical
/// reruns, stdout form, IR notes, errors.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "SampleInput.h"
#include "codegen/CudaBackend.h"
#include "codegen/FromIR.h"

using namespace purlin;
using namespace purlin::codegen;

namespace {
std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
std::string tempDir() {
  char tmpl[] = "/tmp/purlin-codegen-XXXXXX";
  const char *d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}
} // namespace

TEST_CASE("runCudaEmit writes every file beside the .cu, identically on reruns", "[codegen]") {
  std::string dir = tempDir();
  std::ostringstream sink;
  REQUIRE_FALSE(runCudaEmit(test::sampleModule(), test::samplePolicySet(), dir + "/ar.cu", sink, irProvider()));
  std::string cu1 = slurp(dir + "/ar.cu"), h1 = slurp(dir + "/ar.h");
  REQUIRE(cu1.find("#include \"ar.h\"") != std::string::npos);
  REQUIRE(cu1.find("#include \"ar.programs.h\"") != std::string::npos);
  REQUIRE(h1.find("Status allReduce(") != std::string::npos);
  REQUIRE(slurp(dir + "/ar.device.cuh").find("#include \"ar.programs.h\"") != std::string::npos);
  REQUIRE(slurp(dir + "/ar.latency.cu").find("allReduce_latencyKernel_many_any() { return") != std::string::npos);
  REQUIRE(sink.str().empty());
  // A different directory gives byte-identical files (no paths, no time).
  std::string dir2 = tempDir();
  REQUIRE_FALSE(runCudaEmit(test::sampleModule(), test::samplePolicySet(), dir2 + "/ar.cu", sink, irProvider()));
  for (const char *f : {"ar.cu", "ar.h", "ar.programs.h", "ar.device.cuh", "ar.latency.cu", "ar.throughput.cu",
                        "ar.direct.cu", "ar.pairs.cu"}) {
    INFO(f);
    const std::string text = slurp(dir + "/" + f);
    REQUIRE(!text.empty());
    REQUIRE(slurp(dir2 + "/" + f) == text);
    REQUIRE(text.find(dir) == std::string::npos);
  }
}

TEST_CASE("runCudaEmit without -o prints every file, header first", "[codegen]") {
  std::ostringstream os;
  REQUIRE_FALSE(runCudaEmit(test::sampleModule(), test::samplePolicySet(), "", os, irProvider()));
  const std::string s = os.str();
  auto h = s.find("// ===== purlinc: allreduce.h =====");
  auto programs = s.find("// ===== purlinc: allreduce.programs.h =====");
  auto device = s.find("// ===== purlinc: allreduce.device.cuh =====");
  auto cu = s.find("// ===== purlinc: allreduce.cu =====");
  auto pairs = s.find("// ===== purlinc: allreduce.pairs.cu =====");
  REQUIRE(h == 0);
  REQUIRE(h < programs);
  REQUIRE(programs < device);
  REQUIRE(device < cu);
  REQUIRE(cu < pairs);
  REQUIRE(pairs != std::string::npos);
  REQUIRE(s.find("#include \"allreduce.h\"", cu) != std::string::npos);
}

TEST_CASE("runCudaEmit prints from the provider's IR and reports its errors", "[codegen]") {
  std::ostringstream os;
  IRProvider lowered = irProvider();
  IRProvider notes = [&](const Collective &c, const Policy &p, EmitCollective &out) -> std::optional<std::string> {
    if (auto err = lowered(c, p, out)) return err;
    out.programs.push_back(ProgramNote{"latency", "bytes <= world[n].latencyMaxBytes",
                                       {RoleNote{"latency", "world[n].latencyCtas", "%0..%2", "note for " + c.name}}});
    return std::nullopt;
  };
  REQUIRE_FALSE(runCudaEmit(test::sampleModule(), test::samplePolicySet(), "-", os, notes));
  REQUIRE(os.str().find("//       note for allReduce") != std::string::npos);
  REQUIRE(os.str().find("//       note for reduceScatter") != std::string::npos);
  // The device code comes from the IR the provider verified.
  REQUIRE(os.str().find("__global__ void allReduce_latencyKernel") != std::string::npos);
  REQUIRE(os.str().find("// %0 packet.put PK_k[r] <- X_r (full) for k in r+1..r-1 (mod n)") != std::string::npos);

  IRProvider failing = [](const Collective &, const Policy &, EmitCollective &) -> std::optional<std::string> {
    return std::string("IR derivation failed");
  };
  auto err = runCudaEmit(test::sampleModule(), test::samplePolicySet(), "-", os, failing);
  REQUIRE(err.has_value());
  REQUIRE(err->message == "IR derivation failed");
  REQUIRE(err->loc.line == 4);
  // No provider: nothing is emitted without a verified IR.
  err = runCudaEmit(test::sampleModule(), test::samplePolicySet(), "-", os, IRProvider{});
  REQUIRE(err.has_value());
  REQUIRE(err->message.find("no SNAC IR provider") != std::string::npos);
}

TEST_CASE("runCudaEmit errors: unwritable path, header clash", "[codegen]") {
  std::ostringstream os;
  auto err = runCudaEmit(test::sampleModule(), test::samplePolicySet(), "/nonexistent-purlin/x.cu", os, irProvider());
  REQUIRE(err.has_value());
  REQUIRE(err->message.find("/nonexistent-purlin/x.h") != std::string::npos);
  err = runCudaEmit(test::sampleModule(), test::samplePolicySet(), "/tmp/x.h", os, irProvider());
  REQUIRE(err.has_value());
  REQUIRE(err->message.find("overwritten") != std::string::npos);
}
