// AllToAll: rank p's input holds one partition per destination; rank r
// receives partition r of every source, in source-rank order (transposed).
using allToAll = SNAC<Atom, Policy, copy, scattered, transposed>;
