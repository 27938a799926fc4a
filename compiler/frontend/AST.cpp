/// @file AST.cpp
/// @brief Names of the AST enums, as written in a .pl file.
#include "purlin/AST.h"

namespace purlin {

const char *toString(ConsumeOp op) { return dslName(op); }
const char *toString(Layout l) { return dslName(l); }
const char *toString(Root r) { return dslName(r); }

const char *toString(AtomKind a) { return dslName(a); }

} // namespace purlin
