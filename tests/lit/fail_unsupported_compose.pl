// Layouts match (scattered -> packed -> scattered) but AllGather then
// ReduceScatter is not a supported composition.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather     = SNAC<Atom, Policy, copy, packed, scattered>;
// CHECK: fail_unsupported_compose.pl:[[@LINE+1]]:7: error: 'backwards': unsupported composition compose<allGather, reduceScatter> (AllGather then ReduceScatter); supported: compose<ReduceScatter, AllGather> (AllReduce)
using backwards = compose<allGather, reduceScatter>;
// CHECK-NOT: error
