// Explicit datapaths in the Atom position, user policies, inline SNAC in a
// compose, and the paper's Listing 1 `using enum` lines.
// RUN: %purlinc %s --emit=ast --policy %examples/policies/h200.json | FileCheck %s
using enum ConsumeOp;
using enum DataLayout;
struct decode : Policy {};
struct prefill : Policy {};
using agGeneric = SNAC<Generic, Policy, copy, packed, scattered>;
using agAmpere = SNAC<Ampere, decode, copy, packed, scattered>;
using rsHopper = SNAC<Hopper, prefill, reduce, scattered, packed>;
using rsBlackwell = SNAC<Blackwell, Policy, reduce, scattered, packed>;
using arInline = compose<rsHopper, SNAC<Hopper, prefill, copy, packed, scattered>>;
// CHECK:      Policy 'decode'
// CHECK-NEXT: Policy 'prefill'
// CHECK-NEXT: SNAC 'agGeneric' [AllGather] atom Generic, policy Policy,
// CHECK-NEXT: SNAC 'agAmpere' [AllGather] atom Ampere, policy decode,
// CHECK-NEXT: SNAC 'rsHopper' [ReduceScatter] atom Hopper, policy prefill,
// CHECK-NEXT: SNAC 'rsBlackwell' [ReduceScatter] atom Blackwell, policy Policy,
// CHECK-NEXT: Compose 'arInline' [AllReduce] {{.*}} @{{.*}}datapaths.pl:12:7
// CHECK-NEXT:   SNAC 'rsHopper'
// CHECK-NEXT:   SNAC 'SNAC<Hopper, prefill, copy, packed, scattered>' [AllGather] {{.*}} @{{.*}}datapaths.pl:12:36
