/// @file EmitCUDATest.cpp
/// @brief Tests of the CUDA emitter on a sample AllReduce input:
/// determinism, policy constants per world size, instantiated types, host
/// API and C ABI, IR comments, output paths.
#include <catch2/catch.hpp>

#include "SampleInput.h"
#include "codegen/EmitCUDA.h"
#include "codegen/EmitInstances.h"
#include "codegen/Spelling.h"
#include "purlin/reduction.h"

using namespace purlin;
using namespace purlin::codegen;

namespace {
bool has(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}
} // namespace

TEST_CASE("emitter output is deterministic", "[codegen]") {
  EmitInput in = test::sampleAllReduceInput();
  EmitOutput a = emitCUDA(in);
  EmitOutput b = emitCUDA(test::sampleAllReduceInput());
  REQUIRE(a.cu == b.cu);
  REQUIRE(a.h == b.h);
  REQUIRE(a.programs == b.programs);
  REQUIRE(a.device == b.device);
  REQUIRE(a.units == b.units);
  // Changing one constant changes the output: the text depends on the input.
  in.collectives[0].policy.world[3].throughput.chunkBytes = 777777;
  EmitOutput c = emitCUDA(in);
  REQUIRE(c.programs != a.programs);
  REQUIRE(has(c.programs, ".chunkBytes = 777777"));
  // Push lanes reach the table only when the policy sets them (0: the runtime's default).
  REQUIRE_FALSE(has(a.programs, ".lanes = "));
  in.collectives[0].policy.world[8].throughput.lanes = 1;
  in.collectives[0].policy.world[8].throughput.consumeLanes = 2;
  REQUIRE(has(emitCUDA(in).programs, ".push = true, .lanes = 1, .consumeLanes = 2,"));
}

TEST_CASE("policy struct carries every world size's constants", "[codegen]") {
  EmitOutput out = emitCUDA(test::sampleAllReduceInput());
  REQUIRE(has(out.programs, "struct allReduce_Policy {"));
  REQUIRE(has(out.programs, "static constexpr int pipelineStages = 6;"));
  REQUIRE(has(out.programs, "static constexpr int stageBytes = 8192;"));
  REQUIRE(has(out.programs, "static constexpr std::size_t stagingBytes = 67108864; // 64 MiB"));
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    INFO("world size " << n);
    std::string row = "{.latencyMaxBytes = " + std::to_string(n * 1000) +
                      ", .latencyCtas = " + std::to_string(n + 10) +
                      ", .latencyThreads = " + std::to_string(256 + n) + ",";
    REQUIRE(has(out.programs, row));
    REQUIRE(has(out.programs, ".stageCtas = " + std::to_string(n + 20) + ", .consumeCtas = " +
                            std::to_string(n + 30) + ", .gatherCtas = " + std::to_string(n + 40)));
    REQUIRE(has(out.programs, ".chunkBytes = " + std::to_string(n * 4096) + ", .push = " +
                            (n == 8 ? "true" : "false") + ",\n"));
    // The direct program's knobs follow consumeLanes in WorldConsts; a
    // disabled direct program is directCtas = -1 (runtime plan.h).
    REQUIRE(has(out.programs, ".directMinBytes = " + std::to_string(n * 65536) + ", .directCtas = " +
                            (n == 5 ? std::string("-1") : std::to_string(n + 50)) + ", .directThreads = " +
                            std::to_string(64 * n) + "}, // n = " + std::to_string(n)));
  }
  // Rows appear in world-size order.
  REQUIRE(out.programs.find("// n = 2") < out.programs.find("// n = 3"));
  REQUIRE(out.programs.find("// n = 7") < out.programs.find("// n = 8"));
}

TEST_CASE("compose instantiates Compose of two Transforms and the native datapath", "[codegen]") {
  EmitOutput out = emitCUDA(test::sampleAllReduceInput());
  REQUIRE(has(out.programs, "using allReduce_Collective = snac::Compose<snac::Transform<snac::Consume::Reduce, "
                            "snac::Layout::Scattered, snac::Layout::Packed>,"));
  REQUIRE(has(out.programs, "snac::Transform<snac::Consume::Copy, snac::Layout::Packed, snac::Layout::Scattered>>;"));
  REQUIRE(has(out.programs, "using allReduce_Datapath = atom::Native;"));
  REQUIRE(has(out.programs, "using allReduce_Atom = atom::Atom<allReduce_Datapath, allReduce_Policy::pipelineStages, "
                            "allReduce_Policy::stageBytes>;"));
  REQUIRE(has(out.cu, "snac::launch<allReduce_Collective, allReduce_Policy, allReduce_Datapath, allReduce_Programs>(comm, args, stream)"));
  REQUIRE(has(out.programs, "struct allReduce_Programs {"));
  REQUIRE(has(out.cu, "#include \"allreduce.h\""));
  REQUIRE(has(out.cu, "#include \"allreduce.programs.h\""));
  REQUIRE(has(out.programs, "#include \"purlin/snac/collective.cuh\""));
  REQUIRE(has(out.device, "#include \"allreduce.programs.h\""));
}

TEST_CASE("comments cite the .pl by file name and line, and the IR roles", "[codegen]") {
  EmitOutput out = emitCUDA(test::sampleAllReduceInput());
  REQUIRE(has(out.programs, "// allReduce: AllReduce, declared at allreduce.pl:6"));
  REQUIRE(has(out.programs, "compose<reduceScatter, allGather>"));
  REQUIRE(has(out.programs, "//   latency program, when bytes <= world[n].latencyMaxBytes:"));
  REQUIRE(has(out.programs, "//     role stage [world[n].stageCtas CTAs] ops %4..%6"));
  REQUIRE(has(out.programs, "//     role gather [world[n].gatherCtas CTAs] ops %10..%11"));
  REQUIRE(has(out.h, "allReduce: AllReduce, declared at allreduce.pl:6."));
  for (const std::string *text : {&out.cu, &out.programs, &out.device})
    REQUIRE_FALSE(has(*text, "/some/abs"));
  REQUIRE_FALSE(has(out.h, "/some/abs"));
}

TEST_CASE("host API: C++ and C ABI with the documented signatures", "[codegen]") {
  EmitOutput out = emitCUDA(test::sampleAllReduceInput());
  const std::string cxx = "Status allReduce(Communicator &comm, const void *in, void *out, std::size_t count, "
                          "DType dtype, RedOp op, cudaStream_t stream)";
  REQUIRE(has(out.h, cxx + ";"));
  REQUIRE(has(out.cu, cxx + " {"));
  const std::string c = "purlin_status_t purlin_allReduce(purlin_comm_t comm, const void *in, void *out, "
                        "size_t count, purlin_dtype_t dtype, purlin_redop_t op, cudaStream_t stream)";
  REQUIRE(has(out.h, c + ";"));
  REQUIRE(has(out.cu, "extern \"C\" " + c + " {"));
  REQUIRE(has(out.cu, "if (communicator == nullptr)"));
  REQUIRE(has(out.cu, "purlin_allReduce: the communicator is NULL"));
  REQUIRE(has(out.h, "namespace purlin::gen {"));
  REQUIRE(has(out.h, "extern \"C\" {"));
  // The error message from a host header; C and C++ share it.
  REQUIRE(has(out.h, "#include \"purlin/last_error.h\""));
  REQUIRE(has(out.cu, "purlin::capi::fail(static_cast<purlin_status_t>(status), purlin::lastError())"));
}

TEST_CASE("host API: copies take no reduction op, reductions do", "[codegen]") {
  EmitInput in = test::sampleAllReduceInput();
  EmitCollective ag = in.collectives[0];
  ag.name = "allGather";
  ag.kind = CollectiveKind::AllGather;
  ag.stages = {StageSpec{ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::None}};
  in.collectives = {ag};
  EmitOutput out = emitCUDA(in);
  REQUIRE(has(out.h, "Status allGather(Communicator &comm, const void *in, void *out, std::size_t count, "
                     "DType dtype, cudaStream_t stream);"));
  REQUIRE(has(out.h, "purlin_status_t purlin_allGather(purlin_comm_t comm, const void *in, void *out, "
                     "size_t count, purlin_dtype_t dtype, cudaStream_t stream);"));
  REQUIRE_FALSE(has(out.cu, "args.op = op;"));
  REQUIRE(has(out.h, "dtype gives the element size"));
  EmitOutput ar = emitCUDA(test::sampleAllReduceInput());
  REQUIRE(has(ar.cu, "args.op = op;"));
}

TEST_CASE("rooted and V kinds get root and counts parameters; namespaces nest", "[codegen]") {
  EmitInput in = test::sampleAllReduceInput();
  EmitCollective v = in.collectives[0];
  v.name = "ns::agv";
  v.kind = CollectiveKind::AllGatherV;
  v.stages = {StageSpec{ConsumeOp::Copy, Layout::PackedV, Layout::ScatteredV, Root::None}};
  EmitCollective b = in.collectives[0];
  b.name = "bcast";
  b.kind = CollectiveKind::Broadcast;
  b.stages = {StageSpec{ConsumeOp::Copy, Layout::Scattered, Layout::Packed, Root::Producer},
              StageSpec{ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::None}};
  in.collectives = {v, b};
  EmitOutput out = emitCUDA(in);
  REQUIRE(has(out.h, "namespace purlin::gen::ns {"));
  REQUIRE(has(out.h, "Status agv(Communicator &comm, const void *in, void *out, const std::size_t *counts,"));
  REQUIRE(has(out.h, "purlin_status_t purlin_ns_agv(purlin_comm_t comm"));
  REQUIRE(has(out.h, "DType dtype, int root, cudaStream_t stream)"));  // a copy: no op
  REQUIRE(has(out.cu, "args.root = root;"));
  REQUIRE(has(out.programs, "snac::Transform<snac::Consume::Copy, snac::Layout::Scattered, snac::Layout::Packed, "
                            "snac::Root::Producer>"));
  REQUIRE(has(out.cu, "purlin::gen::ns::agv(*communicator"));
}

TEST_CASE("AllToAllV takes MPI's counts and displacements and the bound that picks the program", "[codegen]") {
  EmitInput in = test::sampleAllReduceInput();
  in.collectives[0].name = "a2av";
  in.collectives[0].kind = CollectiveKind::AllToAllV;
  in.collectives[0].stages = {StageSpec{ConsumeOp::Copy, Layout::ScatteredV, Layout::TransposedV, Root::None}};
  EmitOutput out = emitCUDA(in);
  REQUIRE(has(out.h, "Status a2av(Communicator &comm, const void *in, void *out, const std::size_t *sendCounts, "
                     "const std::size_t *sendDispls, const std::size_t *recvCounts, const std::size_t *recvDispls, "
                     "std::size_t maxCount, DType dtype, cudaStream_t stream);"));
  REQUIRE(has(out.cu, "args.recvDispls = recvDispls;"));
  REQUIRE(has(out.cu, "args.maxCount = maxCount;"));
  REQUIRE_FALSE(has(out.cu, "args.op = op;"));
}

TEST_CASE("output paths put the other files beside the .cu", "[codegen]") {
  const OutputPaths p = outputPaths("/tmp/ar.cu");
  REQUIRE(p.cu == "/tmp/ar.cu");
  REQUIRE(p.h == "/tmp/ar.h");
  REQUIRE(p.programs == "/tmp/ar.programs.h");
  REQUIRE(p.device == "/tmp/ar.device.cuh");
  REQUIRE(p.units == std::array<std::string, kNumKernelUnits>{"/tmp/ar.latency.cu", "/tmp/ar.throughput.cu",
                                                               "/tmp/ar.direct.cu", "/tmp/ar.pairs.cu"});
  REQUIRE(outputPaths("out/x.y/ar").cu == "out/x.y/ar");
  REQUIRE(outputPaths("out/x.y/ar").h == "out/x.y/ar.h");
  REQUIRE(outputPaths("out/x.y/ar").units[0] == "out/x.y/ar.latency.cu");
  REQUIRE(outputPaths(".hidden").h == ".hidden.h");
  REQUIRE(outputPaths("a.cu.in").h == "a.cu.h");
}

TEST_CASE("the kernel units: each row of the table in exactly one, accessors declared once", "[codegen][instances]") {
  EmitInput in = test::sampleAllReduceInput();
  in.collectives[0].policy.reductions.specialize = pairBit(DType::BF16, RedOp::Sum);
  const EmitOutput out = emitCUDA(in);
  const std::vector<KernelRow> rows = kernelRowsOf(in.collectives[0], "allReduce");
  REQUIRE(!rows.empty());
  for (const KernelRow &r : rows) {
    INFO(r.accessor);
    const std::string def = r.type + " " + r.accessor + "() { return " + r.kernel + "; }";
    int units = 0;
    for (int u = 0; u < kNumKernelUnits; ++u) units += has(out.units[u], def) ? 1 : 0;
    CHECK(units == 1);
    CHECK(has(out.units[int(r.unit)], def));
    CHECK(has(out.programs, r.type + " " + r.accessor + "();"));
    // Every pair's kernels in the family's unit, a specialized pair's in "pairs".
    CHECK((r.pair == kAnyPair) == (r.unit != KernelUnit::Pairs));
  }
  // The Programs struct picks a specialized pair's row at compile time (the
  // default specializePrograms: its own kernel in every program).
  CHECK(has(out.programs, "else if constexpr (Pair == pairIndex(DType::BF16, RedOp::Sum)) return "
                          "allReduce_throughputKernel_bf16_sum();"));
  CHECK(has(out.programs, "else if constexpr (Pair == pairIndex(DType::BF16, RedOp::Sum)) return "
                          "allReduce_directKernel_bf16_sum();"));
  // specializePrograms = latency: the pair's own latency kernels, every
  // pair's throughput and direct kernels (a comment says so), none of them
  // in the pairs unit.
  in.collectives[0].policy.reductions.specializePrograms = kSpecializeLatency;
  const EmitOutput lat = emitCUDA(in);
  CHECK(has(lat.programs, "else if constexpr (Pair == pairIndex(DType::BF16, RedOp::Sum)) return "
                          "W8 ? allReduce_latencyKernel_W8_bf16_sum() : allReduce_latencyKernel_W4_bf16_sum();"));
  CHECK(has(lat.programs, "else if constexpr (Pair == pairIndex(DType::BF16, RedOp::Sum)) return "
                          "allReduce_throughputKernel_any();  // the kernel of every pair"));
  CHECK(has(lat.programs, "else if constexpr (Pair == pairIndex(DType::BF16, RedOp::Sum)) return "
                          "allReduce_directKernel_any();  // the kernel of every pair"));
  CHECK_FALSE(has(lat.units[int(KernelUnit::Pairs)], "allReduce_throughputKernel_bf16_sum"));
  CHECK_FALSE(has(lat.units[int(KernelUnit::Pairs)], "allReduce_directKernel_bf16_sum"));
  CHECK(has(lat.units[int(KernelUnit::Pairs)], "allReduce_latencyKernel_W8_bf16_sum() { return"));
  in.collectives[0].policy.reductions.specializePrograms = kDefaultSpecializedPrograms;
  // Units load with the communicator; the host API compiles no kernel.
  CHECK(has(out.units[int(KernelUnit::Throughput)], "PurlinModuleRegistration<void>::registered"));
  CHECK_FALSE(has(out.cu, "allreduce.device.cuh"));
  // Without a specialized pair the "pairs" unit is a comment only.
  in.collectives[0].policy.reductions.specialize = 0;
  const EmitOutput plain = emitCUDA(in);
  CHECK(has(plain.units[int(KernelUnit::Pairs)], "No row of the table is in this unit"));
  CHECK_FALSE(has(plain.units[int(KernelUnit::Pairs)], "#include"));
}

TEST_CASE("writeFile reports unwritable paths", "[codegen]") {
  auto err = writeFile("/nonexistent-dir-purlin/x.cu", "x");
  REQUIRE(err.has_value());
  REQUIRE(has(*err, "/nonexistent-dir-purlin/x.cu"));
}

TEST_CASE("the instantiation table lists the reduction classes of the policy's masks", "[codegen][instances]") {
  EmitCollective c;
  c.name = "ar";
  c.kind = CollectiveKind::AllReduce;
  c.policy.name = "bf16only";
  c.policy.reductions.dtypes = 1u << unsigned(DType::BF16);
  c.policy.reductions.ops = (1u << unsigned(RedOp::Sum)) | (1u << unsigned(RedOp::Max));
  CHECK(reductionClassesOf(c) == (classBit(DType::BF16, OpFamily::Sum) | classBit(DType::BF16, OpFamily::Extremum)));
  EmitInput in;
  in.unitNames = {"ar.latency.cu", "ar.throughput.cu", "ar.direct.cu", "ar.pairs.cu"};
  std::string t = printInstantiationTable(in, c, "ar");
  CHECK(t.find("Policy masks: dtypes bf16; ops sum, max: 2 classes.") != std::string::npos);
  // A class runs every pair it covers: avg with sum, min with max.
  CHECK(t.find("//   bf16 sum        bf16 sum, bf16 avg\n") != std::string::npos);
  CHECK(t.find("//   bf16 extremum   bf16 max, bf16 min\n") != std::string::npos);
  CHECK(t.find("inline constexpr uint64_t ar_Reductions =\n    classBit(DType::BF16, OpFamily::Sum) |\n"
               "    classBit(DType::BF16, OpFamily::Extremum);\n") != std::string::npos);
  // Every pair by default: 29 classes; i8 product runs u8's.
  c.policy.reductions = ReductionPolicy{};
  t = printInstantiationTable(in, c, "ar");
  CHECK(t.find(": 29 classes.") != std::string::npos);
  CHECK(t.find("//   u8 product      i8 product, u8 product\n") != std::string::npos);
  // A copy has none.
  c.kind = CollectiveKind::AllGather;
  CHECK(reductionClassesOf(c) == 0);
  t = printInstantiationTable(in, c, "ag");
  CHECK(t.find("A copy: no reduction class") != std::string::npos);
  CHECK(t.find("inline constexpr uint64_t ag_Reductions = 0;") != std::string::npos);
}
