/// @file ThroughputKernel.cpp
/// @brief ctasField, roleFn, printPushCta, printThroughputKernel (see
/// ThroughputKernel.h).
#include "codegen/ThroughputKernel.h"

#include <sstream>

#include "codegen/EmitLatency.h"
#include "codegen/Spelling.h"

namespace purlin::codegen {

namespace {

std::string ctasFieldOf(const ir::Role &role) {
  const std::string f = role.ctasFrom.substr(role.ctasFrom.find_last_of('.') + 1);
  if (f != "stageCtas" && f != "consumeCtas" && f != "gatherCtas")
    throw EmitError("throughput program: role " + role.name + " takes its CTAs from " + role.ctasFrom);
  return "pl." + f;
}

/// "const int begin0 = 0, begin1 = begin0 + pl.stageCtas, ...;": the first
/// CTA of each role (roles take consecutive CTA ranges in program order).
std::string roleBegins(const std::vector<ir::Role> &roles, const std::string &pad) {
  std::string s = pad + "const int begin0 = 0";
  for (std::size_t i = 1; i < roles.size(); ++i)
    s += ", begin" + std::to_string(i) + " = begin" + std::to_string(i - 1) + " + " + ctasFieldOf(roles[i - 1]);
  return s + ";\n";
}

} // namespace

std::string ctasField(const ir::Role &role) { return ctasFieldOf(role); }

std::string roleFn(const std::string &id, bool push, const ir::Role &role) {
  return id + (push ? "_push_" : "_pull_") + role.name;
}

std::string printPushCta(const std::string &id, const ir::Program &push) {
  std::ostringstream o;
  o << "/// A CTA of the push program: role by CTA range, LS lanes per " << push.roles[0].name
    << " CTA, LC per other CTA\n"
    << "/// (Plan::lanes, Plan::consumeLanes; the kernel instantiates 2 only where LaneAtomOf allows).\n"
    << "template <class AtomT, int LS, int LC>\n"
    << "__device__ void " << id << "_pushCta(const TpContext& cx, const std::byte* in, std::byte* out, int b) {\n"
    << "  const Plan& pl = cx.pl;\n"
    << roleBegins(push.roles, "  ");
  for (std::size_t i = 0; i < push.roles.size(); ++i) {
    const ir::Role &role = push.roles[i];
    const std::string L = i == 0 ? "LS" : "LC", begin = "begin" + std::to_string(i);
    const bool lastRole = i + 1 == push.roles.size();
    o << "  " << (i ? "} else " : "") << (lastRole ? "{" : "if (b < begin" + std::to_string(i + 1) + ") {") << "  // "
      << role.name << "\n"
      << "    const Lane<" << L << "> ln = Lane<" << L << ">::make(cx.ws, AtomT::kWorkspaceBytes);\n"
      << "    " << roleFn(id, true, role) << "<typename LaneAtomOf<AtomT, " << L << ">::type, " << L
      << ">(cx, ln, in, out, (b - " << begin << ") * " << L << " + ln.lane, " << ctasField(role) << " * " << L
      << ");\n";
  }
  o << "  }\n";
  o << "}\n\n";
  return o.str();
}

std::string pushLaneCondition(const PushLaneShape &shape) {
  return "pl.lanes == " + std::to_string(shape.first) + " && pl.consumeLanes == " + std::to_string(shape.second);
}

std::string pushLaneShapesText(const std::vector<PushLaneShape> &shapes) {
  std::string s;
  for (const PushLaneShape &l : shapes)
    s += (s.empty() ? "(" : ", (") + std::to_string(l.first) + ", " + std::to_string(l.second) + ")";
  return s;
}

std::string printThroughputKernel(const std::string &id, const ir::Program *pull, const ir::Program *push,
                                  const std::vector<PushLaneShape> &pushLanes, bool variable) {
  std::ostringstream k;
  // The CTA body: the kernel below and the device API's NAME_device (EmitDeviceEntry.cpp).
  k << "/// The throughput program's CTA body (every thread of every CTA; grid = plan.ctas(), the\n"
    << "/// roles' CTA ranges in order; block = plan.threads; `workspace`: AtomT::kWorkspaceBytes of\n"
    << "/// dynamic shared memory): the throughput kernel below and the device API's " << id << "_device\n"
    << "/// (docs/device-api.md). Returns the call's epoch.\n"
    << "template <class AtomT>\n"
    << "__device__ __forceinline__ uint64_t " << id
    << "_throughputCta(const DeviceComm& dc, const Plan& pl, const std::byte* in, std::byte* out, std::byte* workspace) {\n"
    << "  const uint64_t e = ctaBeginCall(dc);\n";
  if (variable)
    k << "  __shared__ PlanStorage resolved;  // a device-count call's plan with its ranges (docs/device-counts.md)\n"
      << "  const TpContext cx{dc, ctaResolvedPlan(dc, pl, resolved), e, workspace};\n";
  else
    k << "  const TpContext cx{dc, pl, e, workspace};\n";
  k << "  const int b = int(blockIdx.x);\n"
    << "  if (pl.push) {\n";
  if (push && pushLanes.empty())
    throw EmitError("throughput program: a push program, but no push CTA shape to instantiate");
  if (push) {
    bool twoLanes = false;
    for (const PushLaneShape &l : pushLanes) twoLanes |= l.first == 2 || l.second == 2;
    k << "    // The push CTA shapes (stage lanes, consume lanes) the policy binds (snac::pushLanes): "
      << pushLaneShapesText(pushLanes)
      << ".\n"
      << "    // The launch refuses another (" << id << "_enqueueFor).\n";
    if (twoLanes)
      k << "    static_assert(LaneAtomOf<AtomT, 2>::supported, \"the policy binds 2 push lanes: its Atom's stages split in two\");\n";
    for (std::size_t i = 0; i < pushLanes.size(); ++i)
      k << "    " << (i ? "else " : "") << "if (" << pushLaneCondition(pushLanes[i]) << ") " << id << "_pushCta<AtomT, "
        << pushLanes[i].first << ", " << pushLanes[i].second << ">(cx, in, out, b);\n";
    k << "    else __trap();  // a shape the launch refuses\n";
  } else {
    k << "    __trap();  // no world size of this policy takes the push transfer (launch refuses such a plan)\n";
  }
  if (pull) {
    k << "  } else {\n" << roleBegins(pull->roles, "    ");
    for (std::size_t i = 0; i < pull->roles.size(); ++i) {
      const ir::Role &role = pull->roles[i];
      const bool lastRole = i + 1 == pull->roles.size();
      k << "    " << (i ? "else " : "") << (lastRole ? "" : "if (b < begin" + std::to_string(i + 1) + ") ")
        << roleFn(id, false, role) << "<AtomT>(cx, in, out, b - begin" << i << ", " << ctasField(role)
        << ");\n";
    }
  } else {
    k << "  } else {\n"
      << "    __trap();  // no world size of this policy takes the pull transfer (launch refuses such a plan)\n";
  }
  k << "  }\n"
    << "  ctaEndCall(dc, e);\n"
    << "  return e;\n"
    << "}\n\n";
  k << "/// The throughput kernel: grid = plan.ctas() (the roles' CTA ranges in order), block =\n"
    << "/// plan.threads (<= limits::kMaxThroughputThreads), dynamic shared memory = AtomT::kWorkspaceBytes. Every CTA must be\n"
    << "/// resident at once (they wait on each other: launch sizes the grid to fit). In a\n"
    << "/// compilation pass for an architecture older than the datapath needs, the kernel traps.\n"
    << "template <class AtomT>\n"
    << "__global__ void __launch_bounds__(limits::kMaxThroughputThreads) " << id + "_throughputKernel" << "(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {\n"
    << "  extern __shared__ __align__(128) std::byte atomWorkspace[];\n"
    << "  if constexpr (!atom::kAtomCompiled<AtomT>) {\n"
    << "    __trap();  // this pass's architecture is older than the datapath needs\n"
    << "  } else {\n"
    << "    (void)" << id << "_throughputCta<AtomT>(dc, pl, in, out, atomWorkspace);\n"
    << "  }\n"
    << "}\n";
  return k.str();
}

} // namespace purlin::codegen
