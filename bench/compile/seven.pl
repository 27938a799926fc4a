// The seven-collective file of issue 33's budget (bench/compile/compile_times.sh):
// what a user of tensor-parallel and MoE inference declares in one file.
// The four unrooted collectives, a broadcast and a reduce composed under
// the user's own names, and an AllToAllV.
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather     = SNAC<Atom, Policy, copy,   packed,    scattered>;
using allReduce     = compose<reduceScatter, allGather>;
using allToAll      = SNAC<Atom, Policy, copy, scattered, transposed>;
using fanOut        = SNAC<Atom, Policy, copy, scattered, packed, Root::producer>;
using spread        = compose<fanOut, allGather>;
using collect       = SNAC<Atom, Policy, copy, packed, scattered, Root::consumer>;
using sumTo         = compose<reduceScatter, collect>;
using dispatchV     = SNAC<Atom, Policy, copy, scatteredV, transposedV>;
