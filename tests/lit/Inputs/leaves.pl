// Included by include.pl: two leaf collectives in a namespace.
#pragma once
namespace lib {
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using allGather     = SNAC<Atom, Policy, copy, packed, scattered>;
}
