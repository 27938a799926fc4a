// A policy named in the .pl must exist in the policy set: `decode` is not
// in the built-in defaults, but it is in policies/h200.json.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// RUN: %purlinc %s --emit=ast --policy %examples/policies/h200.json | FileCheck %s --check-prefix=OK
struct decode : Policy {};
// CHECK: fail_missing_policy.pl:[[@LINE+2]]:7: error: 'ag': policy 'decode' is not defined in the built-in sm_90 defaults
// OK: SNAC 'ag' [AllGather] atom Atom, policy decode, copy, packed -> scattered
using ag = SNAC<Atom, decode, copy, packed, scattered>;
// CHECK-NOT: error
