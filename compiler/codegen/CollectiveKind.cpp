/// @file CollectiveKind.cpp
/// @brief sizeArgs: the host API's size parameters (the runtime's rule,
/// snac::def::sizeArgs, from the layouts of collectives.def).
#include "codegen/CollectiveKind.h"

namespace purlin::codegen {

SizeArgs sizeArgs(CollectiveKind k) {
  return k == CollectiveKind::Unknown ? SizeArgs::Count : snac::def::sizeArgs(defOf(k));
}

} // namespace purlin::codegen
