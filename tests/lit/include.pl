// #include of another .pl, namespaces, aliases of aliases, comments.
// RUN: %purlinc %s --emit=ast | FileCheck %s
#include "Inputs/leaves.pl"
/* a block comment */ namespace user {
using allReduce = compose<lib::reduceScatter, lib::allGather>;
}
using ar = user::allReduce; // an alias of an alias is a collective too
// CHECK:      SNAC 'lib::reduceScatter' [ReduceScatter] {{.*}} @{{.*}}Inputs/leaves.pl:4:7
// CHECK-NEXT: SNAC 'lib::allGather' [AllGather] {{.*}} @{{.*}}Inputs/leaves.pl:5:7
// CHECK-NEXT: Compose 'user::allReduce' [AllReduce] reduce, scattered -> scattered, root none @{{.*}}include.pl:5:7
// CHECK-NEXT:   SNAC 'lib::reduceScatter'
// CHECK-NEXT:   SNAC 'lib::allGather'
// CHECK-NEXT: Compose 'ar' [AllReduce] {{.*}} @{{.*}}include.pl:7:7
