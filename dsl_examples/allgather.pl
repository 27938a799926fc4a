// AllGather: every rank contributes one packed buffer; every rank receives
// all contributions in rank order (a scattered output, n x the input).
using allGather = SNAC<Atom, Policy, copy, packed, scattered>;
