// ReduceScatter: every rank's input is scattered into n partitions; rank k
// receives the elementwise reduction (sum/max/min, chosen at run time) of
// partition k of every input, packed.
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
