// AllToAllV: AllToAll with run-time sizes per (source, destination) pair
// (sendCounts[n], recvCounts[n]).
using allToAllV = SNAC<Atom, Policy, copy, scatteredV, transposedV>;
