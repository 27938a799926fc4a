// ReduceScatterV: ReduceScatter with run-time partition sizes (counts[n]):
// rank k receives the reduction of partition k (counts[k] elements) of
// every input.
using reduceScatterV = SNAC<Atom, Policy, reduce, scatteredV, packedV>;
