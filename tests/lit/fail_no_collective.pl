// A file with declarations but no collective is an error.
// RUN: not %purlinc %s --emit=ast 2>&1 | FileCheck %s
// CHECK: fail_no_collective.pl: error: no collective declared (a collective is an alias of SNAC<...> or compose<...>)
using notACollective = int;
struct decode : Policy {};
