// Compiled by cxx_compile.test: the header, then .pl files, then checks on
// the declarations' static members.
#include <purlin/dsl/purlin.h>
#include "allreduce.pl"
namespace r {
#include "reduce.pl"
}
using purlin::dsl::DataLayout;
static_assert(allReduce::in == DataLayout::scattered && allReduce::out == DataLayout::scattered);
static_assert(allReduce::op == purlin::dsl::ConsumeOp::reduce);
static_assert(r::reduce::root == purlin::dsl::Root::consumer);
static_assert(r::reduce::isCompose && !allGather::isCompose);
int main() { return 0; }
