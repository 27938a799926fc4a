// Declarations used by the tuner's CTest: the policy JSON written by
// make_policy.py must compile these with purlinc --policy.
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather     = SNAC<Atom, Policy, copy,   packed,    scattered>;
using allReduce     = compose<reduceScatter, allGather>;
using allToAll      = SNAC<Atom, Policy, copy,   scattered, transposed>;
