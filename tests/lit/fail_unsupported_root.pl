// AllGather with a producer root is not supported (only Gather, Root::consumer).
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_unsupported_root.pl:[[@LINE+2]]:9: error: 'ns::rootedAG': unsupported collective (copy, packed -> scattered, Root::producer)
namespace ns {
  using rootedAG = SNAC<Atom, Policy, copy, packed, scattered, Root::producer>;
}
// CHECK-NOT: error
