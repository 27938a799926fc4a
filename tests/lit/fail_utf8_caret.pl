// The caret counts code points, not bytes, before the location.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
struct decode : Policy {};
// CHECK: fail_utf8_caret.pl:[[@LINE+3]]:16: error: 'ag': policy 'decode' is not defined
// CHECK-NEXT: /* é */ using ag
// CHECK-NEXT: {{^              \^~$}}
/* é */ using ag = SNAC<Atom, decode, copy, packed, scattered>;
