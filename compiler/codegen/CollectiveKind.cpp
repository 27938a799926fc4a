/// @file CollectiveKind.cpp
/// @brief sizeArgs: the host API's size parameters, from the layouts of the
/// kind's definition (collectives.def).
#include "codegen/CollectiveKind.h"

namespace purlin::codegen {

SizeArgs sizeArgs(CollectiveKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs)                                                          \
  case CollectiveKind::Name:                                                                             \
    return Layout::Out == Layout::TransposedV ? SizeArgs::SendRecvCounts                                  \
           : isVariable(Layout::In) || isVariable(Layout::Out) ? SizeArgs::Counts                         \
                                                                 : SizeArgs::Count;
#include "purlin/collectives.def"
  default: // compositions take the sizes of their first stage's input
    return isCompose(k) ? sizeArgs(firstStage(k)) : SizeArgs::Count;
  }
}

} // namespace purlin::codegen
