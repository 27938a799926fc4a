/// @file EmitLatencyTest.cpp
/// @brief Tests of the latency program printer: every IR op printed exactly
/// once under its own IR line, nothing cited that is not an op, a mutated
/// IR prints different code and is refused by the verifier before printing,
/// shapes without a CUDA form are errors naming the op.
#include <catch2/catch.hpp>


#include "SampleInput.h"
#include "codegen/EmitDeviceEntry.h"
#include "codegen/EmitLatency.h"
#include "ir/Mutation.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::codegen;
using purlin::codegen::test::leaf;
using purlin::codegen::test::opsOf;
using purlin::codegen::test::runnable;

TEST_CASE("the latency printer cites every IR op once, by its IR line", "[codegen][latency]") {
  for (const auto &c : runnable()) {
    INFO(c->name);
    ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), 2);
    const auto ops = opsOf(v.ir().latency);
    LatencyCode code = printLatencyProgram(c->name, v.ir().latency);
    // Statement comments: "// %N <IR line>" (full citation, once per op) and
    // "// %N [variant]" (the same op in a specialization, e.g. n == 2).
    test::checkCitations(code.text, ops, true);
    CHECK(code.ops.size() == ops.size());
  }
}

TEST_CASE("the printed latency code follows the IR's loop orders and shapes", "[codegen][latency]") {
  auto cs = runnable();
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), 2);
  LatencyCode c = printLatencyProgram("allGather", ag.ir().latency);
  CHECK_FALSE(c.reduces);
  CHECK(c.text.find("for (int i = 1; i < n; ++i) {  // k = (r + i) mod n") != std::string::npos);
  CHECK(c.text.find("for (int i = 1; i < n; ++i) {  // p in r-1..r+1 (mod n)") != std::string::npos);
  CHECK(c.text.find("PollStagger::First") != std::string::npos);
  CHECK(c.text.find("kTriggerOnRead = true") != std::string::npos);
  ir::VerifiedIR ar = ir::lowerVerified(*cs[2], test::samplePolicy(), 2);
  c = printLatencyProgram("allReduce", ar.ir().latency);
  CHECK(c.reduces);
  CHECK(c.text.find("for (int p = 0; p < kMaxRanks; ++p) {  // p in 0..n-1") != std::string::npos);
  CHECK(c.text.find("reduceGroupWords<kernelClasses<Pair>(allReduce_Reductions)>(red, wa, wb, n, ra, rb);") !=
        std::string::npos);
  CHECK(c.text.find("const Reduction red = kernelReduction<Pair>(pl.dtype, pl.op);") != std::string::npos);
  // Every pair or one: no element type; the rank form picks the body (two ranks, more, or by n).
  CHECK(c.text.find("template <packet::WordForm Words, packet::RankForm Ranks, int Pair>") != std::string::npos);
  CHECK(c.text.find("if constexpr (Ranks == packet::RankForm::Two)\n    allReduce_latency<Words, true, Pair>(dc, pl,") !=
        std::string::npos);
  CHECK(c.text.find("else if constexpr (Ranks == packet::RankForm::Many)\n    allReduce_latency<Words, false, Pair>(dc, pl,") !=
        std::string::npos);
  CHECK(c.text.find("else if (pl.n == 2)\n    allReduce_latency<Words, true, Pair>(dc, pl,") != std::string::npos);
  CHECK(c.text.find("RedOp Op") == std::string::npos);
  CHECK(c.text.find("PollStagger::EveryRound") != std::string::npos);
  CHECK(c.text.find("kTriggerOnRead = false") != std::string::npos); // one load feeds every put
  CHECK(c.text.find("reduceGroupPair<kernelClasses<Pair>(allReduce_Reductions)>(red,") != std::string::npos);
}

TEST_CASE("a mutated IR is refused by the verifier and by the printer", "[codegen][latency]") {
  auto cs = runnable();
  for (int which : {1, 2}) { // allGather (copy loop), allReduce (reduce loop)
    ir::VerifiedIR v = ir::lowerVerified(*cs[size_t(which)], test::samplePolicy(), 2);
    const std::string before = printLatencyProgram("x", v.ir().latency).text;
    // Another put order: the printer has no CUDA form for it, so it refuses.
    ir::CollectiveIR swapped = v.ir();
    swapped.latency.roles[0].body[0].op.domain = ir::Domain::RevRing;
    CHECK_THROWS_AS(printLatencyProgram("x", swapped.latency), EmitError);
    // Delete the poll: the verifier rejects the program, so no VerifiedIR
    // (the emitter's only input) exists for it.
    int pollId = -1;
    ir::forEachOp(v.ir().latency.roles[0].body, [&](const ir::Op &o) {
      if (o.kind == ir::OpKind::PacketPoll) pollId = o.id;
    });
    REQUIRE(pollId >= 0);
    ir::CollectiveIR mutant = ir::withoutOp(v.ir(), pollId);
    CHECK_THROWS_AS(ir::VerifiedIR::check(mutant), ir::IRError);
    // The printer, fed the unverified mutant directly, refuses it too (a
    // loop without its poll has no CUDA form), so no code exists for it.
    CHECK_THROWS_AS(printLatencyProgram("x", mutant.latency), EmitError);
    CHECK(printLatencyProgram("x", v.ir().latency).text == before); // the verified one prints as before
  }
  // Statements follow the IR's order: an own copy before the put prints
  // before it (the kernel IR lowers op after op, in the role's order).
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), 2);
  ir::CollectiveIR early = ag.ir();
  std::swap(early.latency.roles[0].body[0], early.latency.roles[0].body[1]);
  const ir::Op &put = early.latency.roles[0].body[1].op, &own = early.latency.roles[0].body[0].op;
  REQUIRE(put.kind == ir::OpKind::PacketPut);
  const std::string late = printLatencyProgram("x", ag.ir().latency).text;
  const std::string first = printLatencyProgram("x", early.latency).text;
  CHECK(late.find(ir::opLine(put)) < late.find(ir::opLine(own)));
  CHECK(first.find(ir::opLine(own)) < first.find(ir::opLine(put)));
  CHECK(first.find("packet::loadLane<Words>(x, own, len, a, b, pl.words8);") < first.find("slotPut("));
}

TEST_CASE("rooted latency programs: rank conditions and the DONE acks", "[codegen][latency]") {
  for (const auto &c : test::rooted()) {
    INFO(c->name);
    for (int n : {2, 5}) {
      ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), n);
      const auto ops = opsOf(v.ir().latency);
      LatencyCode code = printLatencyProgram(c->name, v.ir().latency);
      test::checkCitations(code.text, ops, true);
      CHECK(code.ops.size() == ops.size());
      CHECK(code.text.find("const int root = pl.root;") != std::string::npos);
      CHECK(code.text.find("if (r != root) {  // ranks != root") != std::string::npos);
      CHECK(code.text.find("ctaArriveLast(dc, 3328u, int(gridDim.x))") != std::string::npos);
      CHECK(code.text.find("doneIndex(") != std::string::npos);
    }
  }
  // A producer that does not wait for its readers has no CUDA form.
  auto gather = test::rooted()[1];
  ir::CollectiveIR bad = ir::lowerVerified(*gather, test::samplePolicy(), 4).ir();
  bad.latency.roles[0].body.pop_back();
  try {
    printLatencyProgram("gather", bad.latency);
    FAIL("a rooted program without its DONE wait printed");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()) == "latency program: a rooted program ends with DONE acks (and only a rooted one)");
  }
  // Ops on the wrong side of the root are refused by name.
  bad = ir::lowerVerified(*gather, test::samplePolicy(), 4).ir();
  bad.latency.roles[0].body[0].op.onlyOn = ir::RunsOn::Root;
  try {
    printLatencyProgram("gather", bad.latency);
    FAIL("a put on the root to the root printed");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()).find("latency program: %0 packet.put PK_root[r] <- X_r (full) on root") == 0);
  }
}

TEST_CASE("a V form's latency code moves each flow's own groups (a zero-byte flow its marker)", "[codegen][latency]") {
  const auto agv = leaf("allGatherV", ConsumeOp::Copy, Layout::PackedV, Layout::ScatteredV);
  const auto rsv = leaf("reduceScatterV", ConsumeOp::Reduce, Layout::ScatteredV, Layout::PackedV);
  for (const auto &c : {agv, rsv}) {
    INFO(c->name);
    ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), 3);
    const auto ops = opsOf(v.ir().latency);
    LatencyCode code = printLatencyProgram(c->name, v.ir().latency, true);
    test::checkCitations(code.text, ops, true);
    CHECK(code.ops.size() == ops.size());
    CHECK(code.text.find("packet::ctaRegions<true>(dc, pl, rg)") != std::string::npos);
    CHECK(code.text.find("const std::size_t len = rg.sendLen[i - 1];") != std::string::npos);
    CHECK(code.text.find("if (g >= packet::flowGroups(len)) continue;") != std::string::npos);
    CHECK(code.text.find("cs.len") == std::string::npos);  // no one length for every flow
    // The same program without the flag is the fixed-size form.
    LatencyCode fixed = printLatencyProgram(c->name, v.ir().latency, false);
    CHECK(fixed.text.find("flowGroups") == std::string::npos);
    CHECK(fixed.text.find("const std::size_t len = cs.len") != std::string::npos);
  }
  ir::VerifiedIR g = ir::lowerVerified(*agv, test::samplePolicy(), 3);
  const std::string copy = printLatencyProgram("agv", g.ir().latency, true).text;
  CHECK(copy.find("const std::size_t len = rg.recvLen[i - 1];") != std::string::npos);
  CHECK(copy.find("if (g < packet::flowGroups(rg.ownLen)) {") != std::string::npos);
  ir::VerifiedIR r = ir::lowerVerified(*rsv, test::samplePolicy(), 3);
  const std::string red = printLatencyProgram("rsv", r.ir().latency, true).text;
  CHECK(red.find("if (g < packet::flowGroups(rg.ownLen)) {  // the groups of this rank's partition") !=
        std::string::npos);
  // A rooted program has no V form.
  ir::VerifiedIR sc = ir::lowerVerified(*test::rooted()[0], test::samplePolicy(), 3);
  CHECK_THROWS_AS(printLatencyProgram("scatter", sc.ir().latency, true), EmitError);
}

TEST_CASE("the latency printer prints the lowering the IR records", "[codegen][latency][lowering]") {
  auto cs = runnable();
  ir::VerifiedIR ar = ir::lowerVerified(*cs[2], test::samplePolicy(), 2);
  // Without shareLoads' record the put and the reduction load separately.
  ir::CollectiveIR separate = ar.ir();
  for (ir::Stmt &s : separate.latency.roles[0].body)
    if (s.isLoop) s.body.back().op.reusesLoadOf = -1;
  const std::string shared = printLatencyProgram("allReduce", ar.ir().latency).text;
  const std::string apart = printLatencyProgram("allReduce", separate.latency).text;
  CHECK(shared.find("kTriggerOnRead = false") != std::string::npos);
  CHECK(apart.find("kTriggerOnRead = true") != std::string::npos);
  CHECK(shared != apart);
  // Without specializeTwoRanks' record there is no n == 2 form to print.
  ir::CollectiveIR general = ar.ir();
  for (ir::Stmt &s : general.latency.roles[0].body)
    if (s.isLoop) s.twoRankForm = false;
  try {
    printLatencyProgram("allReduce", general.latency);
    FAIL("printed without the two-rank record");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()).find("specializeTwoRanks") != std::string::npos);
  }
}

TEST_CASE("a V form's latency kernel takes a device-count call's ranges after the wait", "[codegen][latency]") {
  auto cs = runnable();
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), 2);
  const std::string line = "  if (pl.deviceCounts) packet::ctaDeviceRanges(dc, pl, rg);";
  const std::string v = printLatencyProgram("allGather", ag.ir().latency, true).text;
  REQUIRE(v.find(line) != std::string::npos);
  CHECK(v.find("gridDependencyWait();\n" + line) != std::string::npos);  // after the wait: the counts kernel wrote them
  CHECK(printLatencyProgram("allGather", ag.ir().latency, false).text.find("ctaDeviceRanges") == std::string::npos);
}

TEST_CASE("the latency kernel is the CTA body the device API's entry runs too", "[codegen][latency][device-api]") {
  auto cs = runnable();
  ir::VerifiedIR ar = ir::lowerVerified(*cs[2], test::samplePolicy(), 2);
  LatencyCode c = printLatencyProgram("allReduce", ar.ir().latency);
  // One body: the kernel and allReduce_device both call allReduce_latencyCta.
  CHECK(c.text.find("__device__ __forceinline__ uint64_t allReduce_latencyCta(const DeviceComm& dc, const Plan& pl,") !=
        std::string::npos);
  CHECK(c.text.find("  (void)allReduce_latencyCta<Words, Ranks, Pair>(dc, pl, in, out);\n}") != std::string::npos);
  CHECK(c.text.find("  ctaEndCall(dc, ce.e);\n  return ce.e;\n}") != std::string::npos);
  CHECK(c.text.find("_device(") == std::string::npos);  // the entry is printed after the throughput kernel
  const std::string body = printDeviceEntry("allReduce", true);
  CHECK(body.find("__device__ __forceinline__ bool allReduce_device(const snac::DeviceCall& call, "
                  "snac::GridSync sync = snac::GridSync::After) {") != std::string::npos);
  CHECK(body.find("if (call.pl.n == 1) return snac::deviceLocalCall(call);") != std::string::npos);
  // The latency program where the plan takes it, with the caller's sync...
  const auto latency = body.find("  if (call.pl.latency) {\n    const uint64_t e = allReduce_latencyCta<packet::WordForm::Either, "
                                 "packet::RankForm::Any, Pair>(call.dc, call.pl, call.in, call.out);\n"
                                 "    return snac::deviceCallEnd(call.dc, e, sync);\n  }");
  CHECK(latency != std::string::npos);
  // ...else the throughput program's body, on the dynamic shared memory, always with the grid barrier.
  const auto tp = body.find("allReduce_throughputCta<AtomT>(call.dc, call.pl, call.in, call.out, atomWorkspace);\n"
                            "    return snac::deviceCallEnd(call.dc, e, snac::GridSync::After);");
  CHECK(tp != std::string::npos);
  CHECK(tp > latency);
  CHECK(body.find("using AtomT = atom::AtomFor<allReduce_Atom, Pair>;") != std::string::npos);
  CHECK(body.find("if constexpr (!atom::kAtomCompiled<AtomT>)") != std::string::npos);
  CHECK(body.find("(kernelClasses<Pair>(~uint64_t(0)) & allReduce_Reductions) != 0") != std::string::npos);
  // A copy: no Pair in the latency body's parameters, the entry still takes one (kAnyPair).
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), 2);
  c = printLatencyProgram("allGather", ag.ir().latency);
  CHECK(c.text.find("  (void)allGather_latencyCta<Words>(dc, pl, in, out);\n}") != std::string::npos);
  const std::string copy = printDeviceEntry("allGather", false);
  CHECK(copy.find("allGather_latencyCta<packet::WordForm::Either>(call.dc, call.pl, call.in, call.out);") !=
        std::string::npos);
  CHECK(copy.find("template <int Pair = kAnyPair>\n__device__ __forceinline__ bool allGather_device(") !=
        std::string::npos);
  CHECK(copy.find("kernelClasses") == std::string::npos);
}
