// Clang's own errors pass through with their locations, source line, caret.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_clang_error.pl:[[@LINE+3]]:44: error: use of undeclared identifier 'packd'
// CHECK-NEXT: using allGather = SNAC<Atom, Policy, copy, packd, scattered>;
// CHECK-NEXT: {{^                                           \^~~~~$}}
using allGather = SNAC<Atom, Policy, copy, packd, scattered>;
