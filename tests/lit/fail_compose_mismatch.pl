// compose<F, G> needs F's output layout to be G's input layout.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
using allToAll  = SNAC<Atom, Policy, copy, scattered, transposed>;
using allGather = SNAC<Atom, Policy, copy, packed, scattered>;
// CHECK: fail_compose_mismatch.pl:[[@LINE+3]]:7: error: 'bad': compose<allToAll, allGather> needs allToAll's output layout (transposed) to be allGather's input layout (packed)
// CHECK-NEXT: using bad = compose<allToAll, allGather>;
// CHECK-NEXT: {{^      \^~~$}}
using bad = compose<allToAll, allGather>;
// CHECK-NOT: error
