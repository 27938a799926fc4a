// An out-of-range value cast to a vocabulary enum is rejected.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_invalid_enum.pl:[[@LINE+1]]:7: error: 'x': invalid consume op (expected copy or reduce)
using x = SNAC<Atom, Policy, static_cast<ConsumeOp>(7), packed, scattered>;
// CHECK-NOT: error
