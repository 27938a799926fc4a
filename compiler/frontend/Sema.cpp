/// @file Sema.cpp
/// @brief purlinc's own semantic checks (the supported collectives are
/// runtime/include/purlin/collectives.def, read through purlin/Collectives.h;
/// diagnostics in DiagnosticKinds.def).
#include "Sema.h"

#include <map>

namespace purlin {


namespace {

using CK = CollectiveKind;
using L = Layout;

constexpr const char *kSupportedLeaves =
    "copy packed -> scattered (AllGather; Root::consumer: Gather), reduce scattered -> packed "
    "(ReduceScatter), copy scattered -> transposed (AllToAll), copy scattered -> packed with "
    "Root::producer (Scatter), and the V forms of AllGather, ReduceScatter and AllToAll";
constexpr const char *kSupportedCompositions =
    "compose<ReduceScatter, AllGather> (AllReduce), compose<Scatter, AllGather> (Broadcast), "
    "compose<ReduceScatter, Gather> (Reduce)";

std::string describe(const Collective &c) {
  const CollectiveKind k = classify(c);
  if (k != CollectiveKind::Unknown)
    return toString(k);
  return std::string(toString(c.op)) + " " + toString(c.in) + " -> " + toString(c.out);
}

class Checker {
public:
  Checker(const Module &m, const PolicySet &p, const std::string &src, Diagnostics &d)
      : module_(m), policies_(p), source_(src), diags_(d) {}

  bool run() {
    if (module_.collectives.empty()) {
      diags_.report(DiagKind::NoCollective, Location{module_.file, 0, 0});
      return false;
    }
    if (module_.collectives.size() > kMaxCollectivesPerFile)
      return fail(DiagKind::TooManyCollectives, Location{module_.file, 0, 0}, module_.collectives.size(),
                  kMaxCollectivesPerFile);
    bool ok = true;
    for (const auto &c : module_.collectives)
      ok &= checkName(*c) && check(*c, c->name);
    return ok;
  }

private:
  /// The alias name is spelled into every generated identifier of the
  /// collective (NAME, purlin_NAME, NAME_Policy, ...): bounded in length.
  /// (Names the generated header cannot use: codegen/GeneratedNames.cpp.)
  bool checkName(const Collective &c) {
    if (c.name.size() > kMaxAliasNameLength)
      return fail(DiagKind::AliasNameTooLong, c.loc, c.name.substr(0, 32), c.name.size(), kMaxAliasNameLength);
    return true;
  }

  /// Checks `c` once; `alias` is the name reported (an anonymous child's
  /// problems are reported with its spelling, at its own location).
  bool check(const Collective &c, const std::string &alias) {
    if (auto it = done_.find(&c); it != done_.end())
      return it->second;
    bool ok = c.isCompose ? checkCompose(c, alias) : checkLeaf(c, alias);
    done_[&c] = ok;
    return ok;
  }

  bool checkLeaf(const Collective &c, const std::string &alias) {
    const Location &at = c.loc;
    if (!c.invalidArgument.empty())
      return fail(DiagKind::InvalidArgument, at, alias, c.invalidArgument);
    if (!c.unknownAtom.empty())
      return fail(DiagKind::UnknownAtom, at, alias, c.unknownAtom);
    if (!c.unknownPolicy.empty())
      return fail(DiagKind::UnknownPolicyType, at, alias, c.unknownPolicy);
    if (!policies_.policies.count(c.policy))
      return fail(DiagKind::MissingPolicy, at, alias, c.policy, source_);
    if (isVariable(c.in) != isVariable(c.out))
      return fail(DiagKind::MixedVariableLayouts, at, alias, toString(c.in), toString(c.out));
    if (classify(c) == CollectiveKind::Unknown)
      return fail(DiagKind::UnsupportedCollective, at, alias, toString(c.op), toString(c.in),
                  toString(c.out), toString(c.root), kSupportedLeaves);
    return true;
  }

  bool checkCompose(const Collective &c, const std::string &alias) {
    for (size_t i = 0; i < c.children.size(); ++i)
      if (c.children[i]->notACollective)
        return fail(DiagKind::ComposeNotCollective, c.loc, alias, i == 0 ? "F" : "G", c.children[i]->name);
    const Collective &f = *c.children[0], &g = *c.children[1];
    // A named child reports its own errors at its own alias; an anonymous
    // (inline) child is checked here.
    bool childrenOk = true;
    for (const Collective *ch : {&f, &g})
      childrenOk &= check(*ch, ch->name);
    if (!childrenOk)
      return false;
    if (f.out != g.in)
      return fail(DiagKind::ComposeLayoutMismatch, c.loc, alias, f.name, g.name, toString(f.out),
                  toString(g.in));
    // The fused kernel has one policy and one datapath (the Parser gives
    // the compose F's): G may not name others, or they would be dropped.
    if (f.policy != g.policy)
      return fail(DiagKind::ComposePolicyMismatch, c.loc, alias, f.name, g.name, f.policy, g.policy);
    if (f.atom != g.atom)
      return fail(DiagKind::ComposeDatapathMismatch, c.loc, alias, f.name, g.name, toString(f.atom),
                  toString(g.atom));
    if (classify(c) == CollectiveKind::Unknown)
      return fail(DiagKind::UnsupportedComposition, c.loc, alias, f.name, g.name, describe(f), describe(g),
                  kSupportedCompositions);
    return true;
  }

  template <class... Args> bool fail(DiagKind k, const Location &at, const Args &...args) {
    diags_.report(k, at, args...);
    return false;
  }

  const Module &module_;
  const PolicySet &policies_;
  const std::string &source_;
  Diagnostics &diags_;
  std::map<const Collective *, bool> done_;
};

} // namespace


bool checkModule(const Module &m, const PolicySet &policies, const std::string &policySource,
                 Diagnostics &diags) {
  return Checker(m, policies, policySource, diags).run();
}

} // namespace purlin
