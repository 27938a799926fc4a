/// @file SemaTest.cpp
/// @brief Unit tests of sema (classify, checkModule) on hand-built Modules,
/// and of the front end on small in-memory .pl buffers.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "Parser.h"
#include "PolicyLoader.h"
#include "Sema.h"

#include <sstream>

using namespace purlin;

namespace {

std::shared_ptr<Collective> leaf(const std::string &name, ConsumeOp op, Layout in, Layout out,
                                 Root root = Root::None, unsigned line = 1) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->loc = {"t.pl", line, 7};
  c->op = op;
  c->in = in;
  c->out = out;
  c->root = root;
  return c;
}

std::shared_ptr<Collective> compose(const std::string &name, std::shared_ptr<const Collective> f,
                                    std::shared_ptr<const Collective> g, unsigned line = 9) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->loc = {"t.pl", line, 7};
  c->isCompose = true;
  c->op = f->op;
  c->in = f->in;
  c->out = g->out;
  c->root = f->root != Root::None ? f->root : g->root;
  c->children = {f, g};
  return c;
}

/// Runs sema on `m` with the sm_90 defaults; returns the diagnostics text.
std::string check(const Module &m, bool &ok, const PolicySet &p = defaultPolicies(Arch::Sm90)) {
  std::ostringstream os;
  Diagnostics d(os);
  ok = checkModule(m, p, "the built-in sm_90 defaults", d);
  CHECK(ok == (d.errorCount() == 0));
  return os.str();
}

Module moduleOf(std::vector<std::shared_ptr<const Collective>> cs) {
  Module m;
  m.file = "t.pl";
  m.collectives = std::move(cs);
  return m;
}

const auto RS = leaf("reduceScatter", ConsumeOp::Reduce, Layout::Scattered, Layout::Packed);
const auto AG = leaf("allGather", ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
const auto SC = leaf("scatter", ConsumeOp::Copy, Layout::Scattered, Layout::Packed, Root::Producer);
const auto GA = leaf("gather", ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::Consumer);

} // namespace

TEST_CASE("classify knows the eleven collectives") {
  CHECK(classify(*RS) == CollectiveKind::ReduceScatter);
  CHECK(classify(*AG) == CollectiveKind::AllGather);
  CHECK(classify(*SC) == CollectiveKind::Scatter);
  CHECK(classify(*GA) == CollectiveKind::Gather);
  CHECK(classify(*leaf("a", ConsumeOp::Copy, Layout::Scattered, Layout::Transposed)) == CollectiveKind::AllToAll);
  CHECK(classify(*leaf("a", ConsumeOp::Copy, Layout::PackedV, Layout::ScatteredV)) == CollectiveKind::AllGatherV);
  CHECK(classify(*leaf("a", ConsumeOp::Reduce, Layout::ScatteredV, Layout::PackedV)) ==
        CollectiveKind::ReduceScatterV);
  CHECK(classify(*leaf("a", ConsumeOp::Copy, Layout::ScatteredV, Layout::TransposedV)) ==
        CollectiveKind::AllToAllV);
  CHECK(classify(*compose("ar", RS, AG)) == CollectiveKind::AllReduce);
  CHECK(classify(*compose("bc", SC, AG)) == CollectiveKind::Broadcast);
  CHECK(classify(*compose("rd", RS, GA)) == CollectiveKind::Reduce);
  CHECK(classify(*compose("x", AG, RS)) == CollectiveKind::Unknown);
  CHECK(classify(*leaf("x", ConsumeOp::Reduce, Layout::Packed, Layout::Scattered)) == CollectiveKind::Unknown);
  CHECK(classify(*leaf("x", ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::Producer)) == CollectiveKind::Unknown);
}

TEST_CASE("valid modules pass") {
  bool ok = false;
  std::string out = check(moduleOf({RS, AG, compose("allReduce", RS, AG)}), ok);
  CHECK(ok);
  CHECK(out.empty());
}

TEST_CASE("an empty module is an error") {
  bool ok = true;
  std::string out = check(moduleOf({}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("t.pl: error: no collective declared") != std::string::npos);
}

TEST_CASE("compose layout mismatch is reported at the alias") {
  bool ok = true;
  auto a2a = leaf("allToAll", ConsumeOp::Copy, Layout::Scattered, Layout::Transposed);
  std::string out = check(moduleOf({a2a, AG, compose("bad", a2a, AG, 4)}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("t.pl:4:7: error: 'bad': compose<allToAll, allGather> needs allToAll's output layout "
                 "(transposed) to be allGather's input layout (packed)") != std::string::npos);
}

TEST_CASE("unsupported composition with matching layouts") {
  bool ok = true;
  std::string out = check(moduleOf({compose("x", AG, RS)}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("unsupported composition compose<allGather, reduceScatter>") != std::string::npos);
}

TEST_CASE("V and fixed layouts mixed") {
  bool ok = true;
  std::string out = check(moduleOf({leaf("x", ConsumeOp::Copy, Layout::PackedV, Layout::Scattered, Root::None, 3)}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("t.pl:3:7: error: 'x': layouts packedV -> scattered mix") != std::string::npos);
}

TEST_CASE("unsupported leaf combination") {
  bool ok = true;
  std::string out = check(moduleOf({leaf("x", ConsumeOp::Reduce, Layout::Packed, Layout::Scattered)}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("'x': unsupported collective (reduce, packed -> scattered, Root::none)") != std::string::npos);
}

TEST_CASE("unknown atom, policy type, missing policy, not a collective") {
  bool ok = true;
  auto a = leaf("a", ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
  a->unknownAtom = "int";
  CHECK(check(moduleOf({a}), ok).find("unknown datapath 'int'") != std::string::npos);
  CHECK_FALSE(ok);

  auto p = leaf("p", ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
  p->unknownPolicy = "float";
  CHECK(check(moduleOf({p}), ok).find("'float' in the Policy position is not a policy") != std::string::npos);
  CHECK_FALSE(ok);

  auto d = leaf("d", ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
  d->policy = "decode";
  CHECK(check(moduleOf({d}), ok).find("policy 'decode' is not defined in the built-in sm_90 defaults") !=
        std::string::npos);
  CHECK_FALSE(ok);
  PolicySet withDecode = defaultPolicies(Arch::Sm90);
  withDecode.policies["decode"] = withDecode.policies.at("Policy");
  check(moduleOf({d}), ok, withDecode);
  CHECK(ok);

  auto bad = std::make_shared<Collective>();
  bad->name = "int";
  bad->notACollective = true;
  bad->loc = {"t.pl", 2, 30};
  std::string out = check(moduleOf({AG, compose("c", bad, AG, 5)}), ok);
  CHECK_FALSE(ok);
  CHECK(out.find("t.pl:5:7: error: 'c': argument F of compose, 'int', is not a collective") != std::string::npos);
}

TEST_CASE("a bad child is reported once, not again by its compose") {
  bool ok = true;
  auto x = leaf("x", ConsumeOp::Reduce, Layout::Packed, Layout::Scattered, Root::None, 1);
  std::ostringstream os;
  Diagnostics d(os);
  ok = checkModule(moduleOf({x, AG, compose("c", x, AG)}), defaultPolicies(Arch::Sm90), "defaults", d);
  CHECK_FALSE(ok);
  CHECK(d.errorCount() == 1);
}

TEST_CASE("front end: aliases, aliases of aliases, namespaces, policies") {
  std::ostringstream os;
  Diagnostics d(os);
  auto m = parseBuffer("mem.pl", R"(
struct decode : Policy {};
namespace ns {
using rs = SNAC<Hopper, decode, reduce, scattered, packed>;
}
using ag = SNAC<Atom, Policy, copy, packed, scattered>;
using ar = compose<ns::rs, ag>;
using ar2 = ar;
using notOne = int;
using reduce = compose<ns::rs, SNAC<Atom, Policy, copy, packed, scattered, Root::consumer>>;
)",
                       d);
  INFO(os.str());
  REQUIRE(m);
  REQUIRE(m->collectives.size() == 5);
  CHECK(m->declaredPolicies == std::vector<std::string>{"decode"});
  const Collective &rs = *m->collectives[0];
  CHECK(rs.name == "ns::rs");
  CHECK(rs.atom == AtomKind::Hopper);
  CHECK(rs.policy == "decode");
  CHECK(rs.loc.line == 4);
  CHECK(rs.loc.col == 7);
  const Collective &ar = *m->collectives[2];
  CHECK(ar.isCompose);
  CHECK(ar.children[0].get() == m->collectives[0].get());
  CHECK(ar.in == Layout::Scattered);
  CHECK(ar.out == Layout::Scattered);
  CHECK(classify(ar) == CollectiveKind::AllReduce);
  CHECK(m->collectives[3]->name == "ar2");
  CHECK(classify(*m->collectives[3]) == CollectiveKind::AllReduce);
  const Collective &red = *m->collectives[4];
  CHECK(red.name == "reduce");
  CHECK(classify(red) == CollectiveKind::Reduce);
  CHECK(red.root == Root::Consumer);
  CHECK(red.children[1]->loc.line == 10);
}

TEST_CASE("front end: Clang errors pass through with locations") {
  std::ostringstream os;
  Diagnostics d(os);
  auto m = parseBuffer("mem.pl", "using x = SNAC<Atom, Policy, copy, packd, scattered>;\n", d);
  CHECK_FALSE(m);
  CHECK(d.errorCount() >= 1);
  CHECK(os.str().find("mem.pl:1:36: error: use of undeclared identifier 'packd'") != std::string::npos);
}

TEST_CASE("front end: every datapath of vocabulary.def is a datapath in a .pl, by its spelling") {
  // The DSL header (dsl/purlin.h) spells the datapath types; the parser maps
  // them by vocabulary.def's rows, as purlinc's emitter and the Atom do.
  int rows = 0;
  auto check = [&](const char *dsl, AtomKind kind) {
    INFO(dsl);
    std::ostringstream os;
    Diagnostics d(os);
    auto m = parseBuffer("dp.pl", std::string("using x = SNAC<") + dsl + ", Policy, copy, packed, scattered>;\n", d);
    INFO(os.str());
    REQUIRE(m);
    REQUIRE(m->collectives.size() == 1);
    CHECK(m->collectives[0]->atom == kind);
    CHECK(std::string(toString(kind)) == dsl);
    ++rows;
  };
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) check(#dsl, AtomKind::Name);
#include "purlin/vocabulary.def"
  CHECK(rows >= 6);  // the macro expanded: Atom, Generic, Ampere, Hopper, Blackwell, HopperTma, ...
  CHECK(std::string(toString(AtomKind::HopperTma)) == "HopperTma");
}
