/// @file EmitThroughputTest.cpp
/// @brief Tests of the throughput program printer: every op of the pull and
/// the push program printed exactly once under its own IR line, nothing
/// cited that is not an op, the IR's loop orders and counters in the code,
/// a deleted notify refused by the verifier (and printed differently when
/// fed past it), shapes without a CUDA form are errors naming the op.
#include <catch2/catch.hpp>


#include "SampleInput.h"
#include "codegen/EmitThroughput.h"
#include "ir/Mutation.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::codegen;
using purlin::codegen::test::checkCitations;
using purlin::codegen::test::leaf;
using purlin::codegen::test::opsOf;
using purlin::codegen::test::runnable;

namespace {

/// The sample policy pulls for n < 8 and pushes for n = 8.
constexpr int kPullWorld = 4, kPushWorld = 8;

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

int firstOpId(const ir::Program &p, ir::OpKind k, ir::Sig s) {
  int id = -1;
  for (const ir::Role &r : p.roles)
    ir::forEachOp(r.body, [&](const ir::Op &o) {
      if (id < 0 && o.kind == k && o.sig == s) id = o.id;
    });
  return id;
}

} // namespace

TEST_CASE("the throughput printer cites every pull and push op once, by its IR line", "[codegen][throughput]") {
  for (const auto &c : runnable()) {
    INFO(c->name);
    ir::VerifiedIR pull = ir::lowerVerified(*c, test::samplePolicy(), kPullWorld);
    ir::VerifiedIR push = ir::lowerVerified(*c, test::samplePolicy(), kPushWorld);
    REQUIRE(pull.ir().throughput.transfer == Transfer::Pull);
    REQUIRE(push.ir().throughput.transfer == Transfer::Push);
    ThroughputCode code = printThroughputPrograms(c->name, &pull.ir().throughput, &push.ir().throughput);
    checkCitations(code.pullText, opsOf(pull.ir().throughput));
    checkCitations(code.pushText, opsOf(push.ir().throughput));
    CHECK(code.pullOps.size() == opsOf(pull.ir().throughput).size());
    CHECK(code.pushOps.size() == opsOf(push.ir().throughput).size());
    // One function per (program, role); the kernel dispatches to each.
    for (const auto &r : pull.ir().throughput.roles) CHECK(has(code.kernelText, c->name + "_pull_" + r.name + "<AtomT"));
    for (const auto &r : push.ir().throughput.roles) CHECK(has(code.pushText, c->name + "_push_" + r.name + "<typename"));
    CHECK(code.reduces == (c->op == ConsumeOp::Reduce));
    // Without a push (or pull) program the launcher refuses such a plan; the kernel traps on one.
    ThroughputCode pullOnly = printThroughputPrograms(c->name, &pull.ir().throughput, nullptr);
    CHECK(pullOnly.pushText.empty());
    CHECK((pullOnly.hasPull && !pullOnly.hasPush));
    CHECK(has(pullOnly.kernelText, "__trap();  // no world size of this policy takes the push transfer"));
    ThroughputCode pushOnly = printThroughputPrograms(c->name, nullptr, &push.ir().throughput);
    CHECK(pushOnly.pullText.empty());
    CHECK((pushOnly.hasPush && !pushOnly.hasPull));
    CHECK(has(pushOnly.kernelText, "__trap();  // no world size of this policy takes the pull transfer"));
    CHECK_THROWS_AS(printThroughputPrograms(c->name, nullptr, nullptr), EmitError);
  }
}

TEST_CASE("the printed throughput code follows the IR's orders, counters and slots", "[codegen][throughput]") {
  auto cs = runnable();
  ir::VerifiedIR ar = ir::lowerVerified(*cs[2], test::samplePolicy(), kPullWorld);
  ir::VerifiedIR arPush = ir::lowerVerified(*cs[2], test::samplePolicy(), kPushWorld);
  ThroughputCode c = printThroughputPrograms("allReduce", &ar.ir().throughput, &arPush.ir().throughput);
  // Pull: stage in ring order, gather own partition first, the reducer's
  // counter indexed by rank r+1's slot of chunk c.
  CHECK(has(c.pullText, "for (int s = 1; s < n; ++s) {  // k in r+1..r-1 (mod n)\n      const int k = (r + s) % n;"));
  CHECK(has(c.pullText, "for (int s = 0; s < n; ++s) {  // k in r..r-1 (mod n)"));
  CHECK(has(c.pullText, "const int seq_next_r = cx.seqIndex((r + 1) % n, r, c);  // seq(r,c) of next"));
  CHECK(has(c.pullText, "ctaArriveLast(cx.dc, 256u + uint32_t(slot_next_r), ctas)"));
  CHECK(has(c.pullText, "ctaArriveLast(cx.dc, 2304u + 128u * uint32_t(k) + uint32_t(cx.ySlotOf(c)), ctas)"));
  CHECK(has(c.pullText, "AtomT::template reduce<allReduce_Reductions>(cx.red, cx.ySlot(r, c) + b, sources, sz, n, cx.ws);"));
  // Push: workers over steps, receivers in reverse ring order, lanes.
  CHECK(has(c.pushText, "const int k = (r + 1 + m) % n;"));
  CHECK(has(c.pushText, "const int k = (r + n - 1 - m) % n;"));
  CHECK(has(c.pushText, "if (len) AtomL::copy(cx.pushYSlot(k, r, c),"));
  // Every push CTA shape by default; only the ones asked for otherwise.
  CHECK(has(c.kernelText, "if (pl.lanes == 1 && pl.consumeLanes == 1) allReduce_pushCta<AtomT, 1, 1>(cx, in, out, b);"));
  CHECK(has(c.kernelText, "else if (pl.lanes == 2 && pl.consumeLanes == 2) allReduce_pushCta<AtomT, 2, 2>(cx, in, out, b);"));
  CHECK(c.pushLanes == kEveryPushLaneShape);
  c = printThroughputPrograms("allReduce", &ar.ir().throughput, &arPush.ir().throughput, {{2, 1}});
  CHECK(has(c.kernelText, "if (pl.lanes == 2 && pl.consumeLanes == 1) allReduce_pushCta<AtomT, 2, 1>(cx, in, out, b);\n"
                          "    else __trap();"));
  CHECK_FALSE(has(c.kernelText, "allReduce_pushCta<AtomT, 1, 1>"));
  CHECK_FALSE(has(c.kernelText, "allReduce_pushCta<AtomT, 2, 2>"));
  CHECK_THROWS_AS(printThroughputPrograms("allReduce", &ar.ir().throughput, &arPush.ir().throughput, {}), EmitError);
  CHECK(printThroughputPrograms("allReduce", &ar.ir().throughput, nullptr, {}).pushLanes.empty());
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), kPullWorld);
  c = printThroughputPrograms("allGather", &ag.ir().throughput, nullptr);
  CHECK(has(c.pullText, "const int p = (r + n - s) % n;"));  // consume r-1..r+1
  CHECK(has(c.pullText, "if (src != dst && sz) AtomT::copy(dst + b, src + b, sz, cx.ws);  // skipped in place"));
  CHECK(has(c.pullText, "const int seq_p_r = cx.seqIndex(p, r, c);  // seq(r,c) of p"));
  CHECK(has(c.pullText, "ctaArriveLast(cx.dc, 256u + 256u * uint32_t(p) + uint32_t(slot_p_r), ctas)"));
}

TEST_CASE("a deleted notify is refused by the verifier and changes the printed code", "[codegen][throughput]") {
  auto cs = runnable();
  for (std::size_t which : {std::size_t(0), std::size_t(1), std::size_t(2)}) {
    for (int world : {kPullWorld, kPushWorld}) {
      INFO(cs[which]->name << " n=" << world);
      ir::VerifiedIR v = ir::lowerVerified(*cs[which], test::samplePolicy(), world);
      const ir::Program &tp = v.ir().throughput;
      const int id = firstOpId(tp, ir::OpKind::Notify, ir::Sig::STAGED);
      REQUIRE(id >= 0);
      ir::CollectiveIR mutant = ir::withoutOp(v.ir(), id);
      CHECK_THROWS_AS(ir::VerifiedIR::check(mutant), ir::IRError);
      // Printed past the verifier (which the emitter never does), the code
      // lacks the notify: the printed statements are the IR's.
      ir::VerifiedIR pull = ir::lowerVerified(*cs[which], test::samplePolicy(), kPullWorld);
      auto print = [&](const ir::Program &p) {
        return p.transfer == Transfer::Push ? printThroughputPrograms("x", &pull.ir().throughput, &p).pushText
                                            : printThroughputPrograms("x", &p, nullptr).pullText;
      };
      const std::string good = print(tp), bad = print(mutant.throughput);
      CHECK(good != bad);
      CHECK(has(good, "// %" + std::to_string(id) + " "));
      CHECK_FALSE(has(bad, "// %" + std::to_string(id) + " "));
    }
  }
}

TEST_CASE("rooted throughput programs: roles and ops on one side of the root, DONE acks", "[codegen][throughput]") {
  for (const auto &c : test::rooted()) {
    INFO(c->name);
    ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), 4);
    const auto ops = opsOf(v.ir().throughput);
    ThroughputCode code = printThroughputPrograms(c->name, &v.ir().throughput, nullptr);
    test::checkCitations(code.pullText, ops);
    CHECK(code.pullOps.size() == ops.size());
    CHECK(has(code.pullText, "[[maybe_unused]] const int root = pl.root;"));
    CHECK(has(code.pullText, "doneIndex("));
    CHECK(has(code.pullText, "cx.sig(0)"));
    const bool composed = c->isCompose;
    CHECK(has(code.pullText, composed ? "ctaArriveLast(cx.dc, 3328u, pl.consumeCtas + pl.gatherCtas)"
                                      : "ctaArriveLast(cx.dc, 3328u, pl.consumeCtas)"));
  }
  // Scatter's consumers and Gather's root-only consume role return early elsewhere.
  ir::VerifiedIR sc = ir::lowerVerified(*test::rooted()[0], test::samplePolicy(), 3);
  CHECK(has(printThroughputPrograms("scatter", &sc.ir().throughput, nullptr).pullText,
            "if (r == root) return;  // the role runs on ranks != root"));
  // A rooted op inside code on the other side of the root has no form.
  ir::CollectiveIR odd = ir::lowerVerified(*test::rooted()[1], test::samplePolicy(), 3).ir();
  ir::forEachOp(odd.throughput.roles[1].body, [](ir::Op &o) {
    if (o.kind == ir::OpKind::Notify && o.sig == ir::Sig::DONE) o.onlyOn = ir::RunsOn::NonRoot;
  });
  CHECK_THROWS_AS(printThroughputPrograms("gather", &odd.throughput, nullptr), EmitError);
}

TEST_CASE("throughput shapes without a CUDA form are errors naming the op", "[codegen][throughput]") {
  // A pull loop over peers in an order the printer has no loop for.
  auto cs = runnable();
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), kPullWorld);
  ir::CollectiveIR odd = ag.ir();
  for (auto &role : odd.throughput.roles)
    for (auto &s : role.body)
      if (s.isLoop && s.var == ir::RankRef::P) s.domain = ir::Domain::Others;
  try {
    printThroughputPrograms("allGather", &odd.throughput, nullptr);
    FAIL("a loop over others(r) printed");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()).find("throughput program: %9 wait.acquire STAGED[p]") == 0);
  }
  // A push program passed as the pull one is refused.
  ir::VerifiedIR push = ir::lowerVerified(*cs[1], test::samplePolicy(), kPushWorld);
  CHECK_THROWS_AS(printThroughputPrograms("allGather", &push.ir().throughput, nullptr), EmitError);
}

TEST_CASE("a V form's throughput kernel runs its roles on the resolved plan", "[codegen][throughput]") {
  auto cs = runnable();
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), kPullWorld);
  const std::string v = printThroughputPrograms("allGather", &ag.ir().throughput, nullptr, {}, true).kernelText;
  CHECK(has(v, "  const uint64_t e = ctaBeginCall(dc);\n  __shared__ PlanStorage resolved;"));
  CHECK(has(v, "const TpContext cx{dc, ctaResolvedPlan(dc, pl, resolved), e, workspace};"));
  const std::string fixed = printThroughputPrograms("allGather", &ag.ir().throughput, nullptr, {}, false).kernelText;
  CHECK(has(fixed, "const TpContext cx{dc, pl, e, workspace};"));
  CHECK_FALSE(has(fixed, "ctaResolvedPlan"));
}

TEST_CASE("the throughput kernel is the CTA body the device API's entry runs too", "[codegen][throughput][device-api]") {
  auto cs = runnable();
  ir::VerifiedIR pull = ir::lowerVerified(*cs[2], test::samplePolicy(), kPullWorld);
  ir::VerifiedIR push = ir::lowerVerified(*cs[2], test::samplePolicy(), kPushWorld);
  const std::string k =
      printThroughputPrograms("allReduce", &pull.ir().throughput, &push.ir().throughput, {{2, 1}}).kernelText;
  const auto body = k.find("template <class AtomT>\n__device__ __forceinline__ uint64_t allReduce_throughputCta(const "
                           "DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out, std::byte* workspace) {\n"
                           "  const uint64_t e = ctaBeginCall(dc);\n");
  REQUIRE(body != std::string::npos);
  const auto end = k.find("  ctaEndCall(dc, e);\n  return e;\n}", body);
  const auto kernel = k.find("allReduce_throughputKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {");
  CHECK(end != std::string::npos);
  CHECK(kernel > end);
  // The kernel: the datapath guard, its dynamic shared memory as the body's workspace, nothing else.
  CHECK(has(k.substr(kernel), "  extern __shared__ __align__(128) std::byte atomWorkspace[];\n"
                              "  if constexpr (!atom::kAtomCompiled<AtomT>) {\n"
                              "    __trap();  // this pass's architecture is older than the datapath needs\n"
                              "  } else {\n"
                              "    (void)allReduce_throughputCta<AtomT>(dc, pl, in, out, atomWorkspace);\n  }\n}"));
  CHECK_FALSE(has(k.substr(kernel), "ctaBeginCall"));
  // The roles and the push CTA are dispatched in the body.
  CHECK(has(k.substr(body, end - body), "allReduce_pushCta<AtomT, 2, 1>(cx, in, out, b);"));
  for (const auto &r : pull.ir().throughput.roles) CHECK(has(k.substr(body, end - body), "allReduce_pull_" + r.name + "<AtomT>"));
}
