// Gather: every rank contributes one packed buffer; only the root receives
// all contributions in rank order (Root::consumer).
using gather = SNAC<Atom, Policy, copy, packed, scattered, Root::consumer>;
