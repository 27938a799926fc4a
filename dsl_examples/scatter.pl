// Scatter: the root (a run-time argument) holds n partitions; rank k
// receives partition k. Only the root produces (Root::producer).
using scatter = SNAC<Atom, Policy, copy, scattered, packed, Root::producer>;
