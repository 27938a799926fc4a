// AllGatherV: AllGather where each rank's contribution has its own size,
// given at run time (counts[n]); the output is packed in rank order.
using allGatherV = SNAC<Atom, Policy, copy, packedV, scatteredV>;
