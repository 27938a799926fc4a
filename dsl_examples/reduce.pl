// Reduce: the root receives the elementwise reduction of every rank's
// input. Composed as ReduceScatter (rank k reduces partition k) then Gather
// (the root assembles the reduced partitions), one kernel (paper Listing 4).
// `reduce` is also the consume op: the alias below is declared after its
// last use as an op, so both meanings coexist (see docs/dsl.md).
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using gather        = SNAC<Atom, Policy, copy,   packed,    scattered, Root::consumer>;

// (scattered -> packed) o (packed -> scattered)
using reduce = compose<reduceScatter, gather>; // scattered -> scattered
