// compose<F, G> runs as one kernel with one policy and one datapath: F and G
// naming different policies or datapaths is an error (G's used to be dropped).
// RUN: not %purlinc %s --emit=ast --policy %examples/policies/h200.json 2>&1 | FileCheck %s
struct decode : Policy {};
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGatherD    = SNAC<Atom, decode, copy,   packed,    scattered>;
using allGatherG    = SNAC<Generic, Policy, copy, packed,   scattered>;
using allGather     = SNAC<Atom, Policy, copy,   packed,    scattered>;
// CHECK: fail_compose_policy.pl:[[@LINE+3]]:7: error: 'byPolicy': compose<reduceScatter, allGatherD> runs as one kernel with one policy and one datapath; reduceScatter uses policy Policy, allGatherD uses policy decode
// CHECK-NEXT: using byPolicy = compose<reduceScatter, allGatherD>;
// CHECK-NEXT: {{^      \^~~~~~~~$}}
using byPolicy = compose<reduceScatter, allGatherD>;
// CHECK: fail_compose_policy.pl:[[@LINE+1]]:7: error: 'byAtom': compose<reduceScatter, allGatherG> runs as one kernel with one policy and one datapath; reduceScatter uses datapath Atom, allGatherG uses datapath Generic
using byAtom = compose<reduceScatter, allGatherG>;
using fine = compose<reduceScatter, allGather>;
// CHECK-NOT: error
