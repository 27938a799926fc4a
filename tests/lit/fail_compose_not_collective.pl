// Both arguments of compose must be collectives.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
using allGather = SNAC<Atom, Policy, copy, packed, scattered>;
using notOne = int;
// CHECK: fail_compose_not_collective.pl:[[@LINE+1]]:7: error: 'bad': argument F of compose, 'notOne', is not a collective (an alias of SNAC<...> or compose<...>)
using bad = compose<notOne, allGather>;
// CHECK-NOT: error
