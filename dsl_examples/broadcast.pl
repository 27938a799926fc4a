// Broadcast: every rank receives the root's whole input. Composed as
// Scatter (the root's partition k goes to rank k) then AllGather (every
// rank assembles all partitions), one kernel (paper Listing 4).
using scatter   = SNAC<Atom, Policy, copy, scattered, packed, Root::producer>;
using allGather = SNAC<Atom, Policy, copy, packed, scattered>;

// (scattered -> packed) o (packed -> scattered)
using broadcast = compose<scatter, allGather>; // scattered -> scattered
