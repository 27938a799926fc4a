// The Policy position takes Policy or a struct deriving from it.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
struct notAPolicy {};
// CHECK: fail_unknown_policy_type.pl:[[@LINE+1]]:7: error: 'ag': 'notAPolicy' in the Policy position is not a policy
using ag = SNAC<Atom, notAPolicy, copy, packed, scattered>;
// CHECK-NOT: error
