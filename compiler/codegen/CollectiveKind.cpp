/// @file CollectiveKind.cpp
/// @brief sizeArgs: the host API's size parameters (the runtime's rule,
/// snac::def::sizeArgs, from the layouts of collectives.def).
#include "codegen/CollectiveKind.h"

namespace purlin::codegen {

// CollectiveKind and snac::def::Any list collectives.def's rows in its order.
#define PURLIN_LEAF(Name, ...) static_assert(int(CollectiveKind::Name) == int(snac::def::Any::Name));
#define PURLIN_COMPOSE(Name, ...) static_assert(int(CollectiveKind::Name) == int(snac::def::Any::Name));
#include "purlin/collectives.def"

SizeArgs sizeArgs(CollectiveKind k) {
  return k == CollectiveKind::Unknown ? SizeArgs::Count : snac::def::sizeArgs(snac::def::Any(int(k)));
}

} // namespace purlin::codegen
