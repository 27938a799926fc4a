/// @file EmitDirectTest.cpp
/// @brief Tests of the direct program printer: every op printed exactly
/// once under its own IR line (the fused write-back included), the shapes
/// of the four collectives, a deleted notify refused by the verifier (and
/// by the printer), shapes without a CUDA form are errors naming the op.
#include <catch2/catch.hpp>


#include "SampleInput.h"
#include "codegen/EmitDirect.h"
#include "codegen/FromIR.h"
#include "ir/Mutation.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::codegen;
using purlin::codegen::test::leaf;
using purlin::codegen::test::opsOf;
using purlin::codegen::test::runnable;

namespace {

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

} // namespace

TEST_CASE("the direct printer cites every IR op once, by its IR line", "[codegen][direct]") {
  for (const auto &c : runnable()) {
    INFO(c->name);
    // Two ranks: every collective has a direct program (the reductions only there).
    ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), 2);
    REQUIRE(v.ir().hasDirect());
    const auto ops = opsOf(v.ir().direct);
    DirectCode code = printDirectProgram(c->name, v.ir().direct);
    test::checkCitations(code.text, ops);
    CHECK(code.ops.size() == ops.size());
    CHECK(code.reduces == (c->op == ConsumeOp::Reduce));
    CHECK(has(code.text, "__global__ void __launch_bounds__(kDirectMaxThreads) " + c->name + "_directKernel("));
  }
}

TEST_CASE("the printed direct code has each collective's data movement", "[codegen][direct]") {
  auto cs = runnable();
  auto print = [&](std::size_t i, int n) {
    ir::VerifiedIR v = ir::lowerVerified(*cs[i], test::samplePolicy(), n);
    return printDirectProgram(cs[i]->name, v.ir().direct).text;
  };
  const std::string ag = print(1, 4), a2a = print(3, 4), rs = print(0, 2), ar = print(2, 2);
  // Every byte moves through the Atom's operations (docs/atom.md), none in atom::detail.
  CHECK(has(ag, "allGather_Atom::copyToMany(d, in + b, len, s);"));
  CHECK(has(ag, "if (dst != in + b) d.p[d.n++] = dst;"));  // in place
  CHECK(has(a2a, "allToAll_Atom::copyPairs(pr, len, s);"));
  for (const std::string* text : {&ag, &a2a, &rs, &ar}) CHECK_FALSE(has(*text, "detail::"));
  CHECK(has(rs, "const int q = 1 - r;"));
  CHECK(has(rs, "atom::AtomFor<reduceScatter_Atom, Pair>::template reducePair<reduceScatter_Reductions>(red, landed + o, nullptr, a, b, len, s);"));
  CHECK(has(rs, "const Reduction red = kernelReduction<Pair>(pl.dtype, pl.op);"));
  CHECK(has(rs, "template <int Pair = kAnyPair>"));  // every pair, or one specialized pair
  CHECK_FALSE(has(rs, "RedOp Op"));
  CHECK_FALSE(has(rs, "backIndex"));
  CHECK(has(ar, "atom::AtomFor<allReduce_Atom, Pair>::template reducePair<allReduce_Reductions>(red, landed + o, backDst + o, a, b, len, s);"));
  CHECK(has(ar, "is fused into"));
  CHECK(has(ar, "waitSignal(dc, backIndex(p, c), last)"));
}

TEST_CASE("a mutated direct program is refused by the verifier and by the printer", "[codegen][direct]") {
  auto cs = runnable();
  for (std::size_t i : {std::size_t(1), std::size_t(2)}) {
    INFO(cs[i]->name);
    ir::VerifiedIR v = ir::lowerVerified(*cs[i], test::samplePolicy(), 2);
    int putId = -1;
    ir::forEachOp(v.ir().direct.roles[0].body, [&](const ir::Op &o) {
      if (putId < 0 && o.kind == ir::OpKind::Notify && o.sig == ir::Sig::PUT) putId = o.id;
    });
    REQUIRE(putId >= 0);
    ir::CollectiveIR mutant = ir::withoutOp(v.ir(), putId);
    CHECK_THROWS_AS(ir::VerifiedIR::check(mutant), ir::IRError);
    CHECK_THROWS_AS(printDirectProgram("x", mutant.direct), EmitError);
  }
  // A copy to the peers in another order has no printed form.
  ir::VerifiedIR ag = ir::lowerVerified(*cs[1], test::samplePolicy(), 4);
  ir::CollectiveIR odd = ag.ir();
  odd.direct.roles[0].body[2].op.domain = ir::Domain::Ring;
  try {
    printDirectProgram("allGather", odd.direct);
    FAIL("a copy over r+1..r-1 printed");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()).find("direct program: %") == 0);
    CHECK(has(e.what(), "the copy writes every rank's output, k in r+1..r (mod n)"));
  }
}

TEST_CASE("the provider prints the programs its policy takes: pull-only, push-only, direct at n = 2",
          "[codegen][direct][throughput]") {
  auto cs = runnable();
  const Collective &rs = *cs[0];
  for (Transfer t : {Transfer::Pull, Transfer::Push}) {
    Policy pol = test::samplePolicy();
    for (int m = kMinWorld; m <= kMaxWorld; ++m) pol.world[m].throughput.transfer = t;
    EmitCollective ec;
    ec.name = rs.name;
    REQUIRE_FALSE(irProvider(2)(rs, pol, ec).has_value());
    printPrograms(ec);
    REQUIRE(ec.throughput);
    CHECK(ec.throughput->hasPull == (t == Transfer::Pull));
    CHECK(ec.throughput->hasPush == (t == Transfer::Push));
    // The reduction's direct program exists at n = 2 only: found there even
    // when the shown world size (n = 8 for a pull-only policy) has none.
    REQUIRE(ec.direct);
    CHECK(ec.directWorld == 2);
  }
  // Direct off everywhere: no direct program, hasDirect false in the .cu.
  Policy off = test::samplePolicy();
  for (int m = kMinWorld; m <= kMaxWorld; ++m) off.world[m].direct.enabled = false;
  EmitCollective ec;
  ec.name = rs.name;
  REQUIRE_FALSE(irProvider(2)(rs, off, ec).has_value());
  printPrograms(ec);
  CHECK_FALSE(ec.direct);
}

TEST_CASE("the direct printer fuses the write-back only where the IR records it", "[codegen][direct][lowering]") {
  auto cs = runnable();
  ir::VerifiedIR ar = ir::lowerVerified(*cs[2], test::samplePolicy(), 2);
  ir::CollectiveIR unfused = ar.ir();
  ir::forEachOp(unfused.direct.roles[0].body, [&](ir::Op &o) { o.fusedInto = -1; });
  try {
    printDirectProgram("allReduce", unfused.direct);
    FAIL("printed a fused write-back the IR does not record");
  } catch (const EmitError &e) {
    CHECK(std::string(e.what()).find("fuseWriteBack") != std::string::npos);
  }
}
