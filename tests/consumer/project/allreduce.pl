// AllReduce as the paper's Listing 1 composes it (a consumer's own copy).
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather = SNAC<Atom, Policy, copy, packed, scattered>;
using allReduce = compose<reduceScatter, allGather>;
