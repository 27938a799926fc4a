// V and fixed layouts cannot be mixed in one transformation.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_mixed_v.pl:[[@LINE+1]]:7: error: 'mixed': layouts packedV -> scattered mix a variable (V) and a fixed layout
using mixed = SNAC<Atom, Policy, copy, packedV, scattered>;
// CHECK-NOT: error
