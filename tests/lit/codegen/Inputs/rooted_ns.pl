// Two compositions in one file, in a namespace, with an alias of an alias
// (tests/lit/codegen/rooted_compositions.test).
namespace coll {
using scatter       = SNAC<Atom, Policy, copy, scattered, packed, Root::producer>;
using allGather     = SNAC<Atom, Policy, copy, packed, scattered>;
using reduceScatter = SNAC<Atom, Policy, reduce, scattered, packed>;
using gather        = SNAC<Atom, Policy, copy, packed, scattered, Root::consumer>;
using bcast  = compose<scatter, allGather>;
using reduceToRoot = compose<reduceScatter, gather>;
}
using weights = coll::bcast; // an alias of an alias
