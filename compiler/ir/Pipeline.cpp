/// @file Pipeline.cpp
/// @brief lower(): runs the passes of Passes.h in order.
#include "ir/Pipeline.h"

#include "ir/CallPlan.h"
#include "ir/Derive.h"
#include "ir/KernelIR.h"
#include "ir/Lowering.h"
#include "ir/DerivePush.h"
#include "ir/Passes.h"
#include "ir/Printer.h"

namespace purlin::ir {

const std::vector<std::string> &passNames() {
  static const std::vector<std::string> names = {"derive", "derivePlan", "bindPolicy", "insertSlotReuseGuards",
                                                 "insertDoneAcks", "shareLoads", "specializeTwoRanks",
                                                 "fuseWriteBack", "verify", "lowerPacketWarps",
                                                 "lowerThroughputRoles", "lowerDirectCtas", "lowerHostGraph"};
  return names;
}

namespace {
/// The kernel IR the printers print from, after the SNAC IR's last pass
/// (docs/snac-ir.md "Kernel IR"): the latency program's packet warps, the
/// throughput program's roles, the direct program's direct CTAs and its
/// copy-engine form's host graph, or why there are none.
void dumpKernels(const CollectiveIR &ir, std::ostream &os) {
  os << "// IR after lowerPacketWarps\n";
  try {
    os << kernel::toText(lowerPacketWarps(ir.latency, isVariable(ir.in) || isVariable(ir.out)));
  } catch (const IRError &e) {
    os << "kernel latency: none (" << e.message << ")\n";
  }
  os << "// IR after lowerThroughputRoles\n";
  try {
    os << kernel::toText(lowerThroughputRoles(ir.throughput));
  } catch (const IRError &e) {
    os << "kernel throughput: none (" << e.message << ")\n";
  }
  os << "// IR after lowerDirectCtas\n";
  if (!ir.hasDirect()) {
    os << "kernel direct: none (no direct program: " << (ir.directWhyNot.empty() ? "not derived" : ir.directWhyNot)
       << ")\n";
  } else {
    try {
      os << kernel::toText(lowerDirectCtas(ir.direct));
    } catch (const IRError &e) {
      os << "kernel direct: none (" << e.message << ")\n";
    }
  }
  os << "// IR after lowerHostGraph\n";
  if (!ir.hasEngine()) {
    os << "kernel copy engine: none (no copy-engine form)\n";
  } else {
    try {
      os << kernel::toText(lowerHostGraph(ir.engine));
    } catch (const IRError &e) {
      os << "kernel copy engine: none (" << e.message << ")\n";
    }
  }
}
} // namespace

CollectiveIR lower(const Collective &c, const Policy &policy, int n, const PipelineOptions &opts) {
  auto dump = [&](const char *pass, const CollectiveIR &ir) {
    if (opts.printAfterAll) *opts.printAfterAll << "// IR after " << pass << "\n" << toText(ir);
  };
  // derive() rejects an out-of-range n before the policy is consulted.
  Transfer transfer = n >= kMinWorld && n <= kMaxWorld ? policy.forWorld(n).throughput.transfer : Transfer::Pull;
  CollectiveIR ir = derive(c, n, transfer);
  dump("derive", ir);
  derivePlan(ir);
  dump("derivePlan", ir);
  bindPolicy(ir, policy);
  dump("bindPolicy", ir);
  insertSlotReuseGuards(ir);
  dump("insertSlotReuseGuards", ir);
  insertDoneAcks(ir);
  dump("insertDoneAcks", ir);
  // Lowering decisions, on the final op ids (Lowering.h).
  shareLoads(ir);
  dump("shareLoads", ir);
  specializeTwoRanks(ir);
  dump("specializeTwoRanks", ir);
  fuseWriteBack(ir);
  dump("fuseWriteBack", ir);
  if (opts.verify) {
    Report rep = verify(ir);
    if (!rep.ok()) throw IRError{"'" + c.name + "': the SNAC verifier rejects the derived program:\n" + rep.text()};
    dump("verify", ir);
    if (opts.printAfterAll) dumpKernels(ir, *opts.printAfterAll);
  }
  return ir;
}

int worldShowing(Kind k, const Policy &policy, Transfer t, int shown) {
  auto binds = [&](int n) { return boundTransfer(k, policy.forWorld(n).throughput.transfer) == t; };
  if (shown >= kMinWorld && shown <= kMaxWorld && binds(shown)) return shown;
  for (int n = kMinWorld; n <= kMaxWorld; ++n)
    if (binds(n)) return n;
  return 0;
}

VerifiedIR VerifiedIR::check(CollectiveIR ir) {
  Report rep = verify(ir);
  if (!rep.ok()) throw IRError{"'" + ir.name + "': the SNAC verifier rejects the program:\n" + rep.text()};
  return VerifiedIR(std::make_shared<const CollectiveIR>(std::move(ir)));
}

VerifiedIR lowerVerified(const Collective &c, const Policy &policy, int n, const PipelineOptions &opts) {
  PipelineOptions o = opts;
  o.verify = false;  // check() runs it on the object it keeps
  CollectiveIR ir = lower(c, policy, n, o);
  VerifiedIR v = VerifiedIR::check(std::move(ir));
  if (opts.printAfterAll) {
    *opts.printAfterAll << "// IR after verify\n" << toText(v.ir());
    dumpKernels(v.ir(), *opts.printAfterAll);
  }
  return v;
}

} // namespace purlin::ir
