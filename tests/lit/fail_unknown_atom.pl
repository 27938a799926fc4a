// The Atom position takes Atom, Generic, Ampere, Hopper or Blackwell.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
struct Volta {};
// CHECK: fail_unknown_atom.pl:[[@LINE+3]]:7: error: 'ag': unknown datapath 'Volta' in the Atom position; expected Atom, Generic, Ampere, Hopper or Blackwell
// CHECK-NEXT: using ag = SNAC<Volta, Policy, copy, packed, scattered>;
// CHECK-NEXT: {{^      \^~$}}
using ag = SNAC<Volta, Policy, copy, packed, scattered>;
// CHECK-NOT: error
