// AllReduce: every rank receives the elementwise reduction of all inputs.
// Composed as ReduceScatter (scattered -> packed) then AllGather
// (packed -> scattered) in one kernel; AllGather consumes ReduceScatter's
// packed intermediate in place (paper Listing 1).
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather     = SNAC<Atom, Policy, copy,   packed,    scattered>;

// (scattered -> packed) o (packed -> scattered), in execution order.
using allReduce = compose<reduceScatter, allGather>; // scattered -> scattered
