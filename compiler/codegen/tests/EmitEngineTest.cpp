/// @file EmitEngineTest.cpp
/// @brief Tests of the copy-engine form printer: every op printed exactly
/// once under its own IR line, host order kept (each event wait after the
/// record it pairs with), the primitives each op kind maps to, a deleted
/// op changes the printed code, and ops without a printed form are errors
/// naming the op.
#include <catch2/catch.hpp>


#include "SampleInput.h"
#include "codegen/EmitEngine.h"
#include "codegen/FromIR.h"
#include "ir/Mutation.h"
#include "ir/Printer.h"

using namespace purlin;
using namespace purlin::codegen;
using purlin::codegen::test::opsOf;
using purlin::codegen::test::runnable;

namespace {

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

EngineCode printed(const Collective &c, int n) {
  ir::VerifiedIR v = ir::lowerVerified(c, test::samplePolicy(), n);
  REQUIRE(v.ir().hasEngine());
  return printEngineProgram(c.name, v.ir().kind, v.ir().engine);
}

} // namespace

TEST_CASE("the copy-engine printer cites every IR op once, by its IR line", "[codegen][engine]") {
  for (const auto &c : runnable()) {
    INFO(c->name);
    ir::VerifiedIR v = ir::lowerVerified(*c, test::samplePolicy(), 2);
    REQUIRE(v.ir().hasEngine());
    const auto ops = opsOf(v.ir().engine);
    EngineCode code = printEngineProgram(c->name, v.ir().kind, v.ir().engine);
    test::checkCitations(code.text, ops);
    CHECK(code.ops.size() == ops.size());
    CHECK(code.host == c->name + "_engine");
    CHECK(has(code.text, "void " + c->name + "_engine(const Plan& pl, const DeviceComm& dc, const DirectPeers& peers,"));
  }
}

TEST_CASE("the printed copy-engine form keeps host order and maps each op to its primitive", "[codegen][engine]") {
  auto cs = runnable();  // reduceScatter, allGather, allReduce, allToAll
  const std::string rs = printed(*cs[0], 2).text, ag = printed(*cs[1], 4).text, ar = printed(*cs[2], 2).text,
                    a2a = printed(*cs[3], 3).text;
  // AllGather: the own block on the branch between fork and join, the
  // peers' blocks by the copy engines on the stream, PUT in the finish kernel.
  const auto fork = ag.find("g.record(GraphStream::Stream, g.fork()"), forked = ag.find("g.wait(GraphStream::Branch, g.fork()");
  REQUIRE(fork != std::string::npos);
  REQUIRE(forked != std::string::npos);
  CHECK(fork < forked);
  CHECK(has(ag, "g.copy(GraphStream::Branch, out + pl.rxOff[r], in, pl.txLen[r]"));
  CHECK(has(ag, "g.copy(GraphStream::Stream, peers.out[k] + pl.rxOff[r], in, pl.txLen[r]"));
  CHECK(has(ag, "const int k = (r + m) % n;"));
  CHECK(has(ag, "arch::stReleaseSys(dc.signals[k] + putIndex(r, 0), signalValue(e, 0));"));
  CHECK(has(ag, "ctaEndCall(dc, e);"));
  CHECK(has(a2a, "in + pl.txOff[k], pl.txLen[k]"));
  // ReduceScatter: per engine chunk, copy + flag on the branch, the push
  // edge, the reduce kernel on the stream; the finish kernel resets the flags.
  CHECK(has(rs, "const std::size_t chunk = engineChunkBytes(false, len, done, c);"));
  CHECK(has(rs, "g.copy(GraphStream::Branch, (peers.out[k]) + done, (in + pl.txOff[k]) + done, chunk"));
  CHECK(has(rs, "g.writeFlag(GraphStream::Branch, dc.signals[k] + enginePutIndex(c)"));
  CHECK(has(rs, "g.launch(GraphStream::Stream, reduceScatter_engine_reduce<>, pl.directCtas, "
                "kDirectEngineReduceThreads, \"kernel reduce (%"));
  CHECK(has(rs, "w = w && waitSignal(dc, enginePutIndex(c), 1);"));
  CHECK(has(rs, "reduceScatter_Atom::template reducePair<reduceScatter_Reductions>(red, landed, nullptr, a, x, len, s);"));
  CHECK_FALSE(has(rs, "detail::"));
  CHECK(has(rs, "own + kEnginePutBase + i) = 0;"));
  CHECK(has(rs, "copy-engine reduction needs two ranks with equal partitions"));
  CHECK_FALSE(has(rs, "engineBackIndex"));
  // AllReduce: two halves, the chunk events, the copy-back and E_BACK waits.
  CHECK(has(ar, "engineChunkBytes(true, len, done, c)"));
  CHECK(has(ar, "g.record(GraphStream::Stream, g.chunk(c, "));
  CHECK(has(ar, "g.wait(GraphStream::Branch, g.chunk(c, "));
  CHECK(has(ar, "g.writeFlag(GraphStream::Branch, dc.signals[k] + engineBackIndex(c)"));
  CHECK(has(ar, "w = w && waitSignal(dc, engineBackIndex(c), 1);"));
  CHECK(ar.find("g.record(GraphStream::Stream, g.chunk(c, ") < ar.find("g.wait(GraphStream::Branch, g.chunk(c, "));
}

TEST_CASE("a deleted copy-engine op changes the printed code; the verifier refuses it first", "[codegen][engine]") {
  auto cs = runnable();
  ir::VerifiedIR v = ir::lowerVerified(*cs[2], test::samplePolicy(), 2);
  const ir::CollectiveIR &ir = v.ir();
  int flag = -1;
  ir::forEachOp(ir.engine.roles[0].body, [&](const ir::Op &o) {
    if (flag < 0 && o.kind == ir::OpKind::Notify && o.sig == ir::Sig::E_PUT) flag = o.id;
  });
  REQUIRE(flag >= 0);
  ir::CollectiveIR m = ir::withoutOp(ir, flag);
  const std::string before = printEngineProgram("x", ir.kind, ir.engine).text;
  const std::string after = printEngineProgram("x", m.kind, m.engine).text;
  CHECK(before != after);
  CHECK_FALSE(has(after, "enginePutIndex(c), \"%" + std::to_string(flag) + "\""));
  CHECK_FALSE(ir::verify(m).ok());
}

TEST_CASE("copy-engine ops without a printed form are errors naming the op", "[codegen][engine]") {
  auto cs = runnable();
  ir::VerifiedIR v = ir::lowerVerified(*cs[0], test::samplePolicy(), 2);
  ir::Program p = v.ir().engine;
  // A host copy turned into a reduction has no copy-engine form.
  ir::forEachOp(p.roles[0].body, [&](ir::Op &o) {
    if (o.host && o.kind == ir::OpKind::Copy) o.kind = ir::OpKind::Reduce;
  });
  try {
    (void)printEngineProgram("x", v.ir().kind, p);
    FAIL("expected an EmitError");
  } catch (const EmitError &e) {
    CHECK(has(e.what(), "direct program (copy engine): %"));
  }
}

TEST_CASE("an ARRIVED notify or wait per chunk is refused, naming the op: its tag has one slot per CTA",
          "[codegen][engine]") {
  auto cs = runnable();
  ir::VerifiedIR v = ir::lowerVerified(*cs[0], test::samplePolicy(), 2);
  for (ir::OpKind kind : {ir::OpKind::Notify, ir::OpKind::Wait}) {
    ir::Program p = v.ir().engine;
    bool changed = false;
    ir::forEachOp(p.roles[0].body, [&](ir::Op &o) {
      if (o.kind == kind && o.sig == ir::Sig::ARRIVED) o.slotSpace = ir::SlotSpace::Chunk, changed = true;
    });
    REQUIRE(changed);
    try {
      (void)printEngineProgram("x", v.ir().kind, p);
      FAIL("expected an EmitError");
    } catch (const EmitError &e) {
      INFO(e.what());
      CHECK(has(e.what(), "direct program (copy engine): %"));
      CHECK(has(e.what(), "ARRIVED"));
      if (kind == ir::OpKind::Wait) CHECK(has(e.what(), "not per chunk"));
    }
  }
}
