// reduce packed -> scattered is not one of the supported collectives.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_unsupported.pl:[[@LINE+1]]:7: error: 'odd': unsupported collective (reduce, packed -> scattered, Root::none); supported: copy packed -> scattered (AllGather; Root::consumer: Gather)
using odd = SNAC<Atom, Policy, reduce, packed, scattered>;
// CHECK-NOT: error
