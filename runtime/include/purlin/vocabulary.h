/// @file vocabulary.h
/// @brief The SNAC vocabulary's enums and their .pl spellings, from
/// vocabulary.def: plain C++ shared by purlinc and the runtime
/// (snac::Consume, snac::Layout and snac::Root name the same enums).
#pragma once

namespace purlin {

/// How a rank consumes peers' data: copy into place, or combine elementwise.
enum class ConsumeOp {
#define PURLIN_CONSUME_OP(Name, dsl) Name,
#include "purlin/vocabulary.def"
};

/// A buffer layout (paper §3.1). The V forms take partition sizes at run time.
enum class Layout {
#define PURLIN_LAYOUT(Name, dsl) Name,
#include "purlin/vocabulary.def"
};

/// The V forms (PackedV, ScatteredV, TransposedV): partition sizes given
/// at run time.
constexpr bool isVariable(Layout l) { return l == Layout::PackedV || l == Layout::ScatteredV || l == Layout::TransposedV; }

/// Which ranks take part as producers or consumers (paper Appendix A.1).
enum class Root {
#define PURLIN_ROOT(Name, dsl) Name,
#include "purlin/vocabulary.def"
};

/// The datapath of a declaration's Atom position (docs/atom.md): Native is
/// `Atom` in a .pl (the target architecture's own, resolved per compilation
/// pass), the others force one.
enum class DatapathKind {
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) Name,
#include "purlin/vocabulary.def"
};
/// The spelling in a .pl file: "copy", "scattered", "producer", "Atom", ...
constexpr const char *dslName(ConsumeOp v) {
  switch (v) {
#define PURLIN_CONSUME_OP(Name, dsl) case ConsumeOp::Name: return #dsl;
#include "purlin/vocabulary.def"
  }
  return "?";
}
constexpr const char *dslName(Layout v) {
  switch (v) {
#define PURLIN_LAYOUT(Name, dsl) case Layout::Name: return #dsl;
#include "purlin/vocabulary.def"
  }
  return "?";
}
constexpr const char *dslName(Root v) {
  switch (v) {
#define PURLIN_ROOT(Name, dsl) case Root::Name: return #dsl;
#include "purlin/vocabulary.def"
  }
  return "?";
}
constexpr const char *dslName(DatapathKind v) {
  switch (v) {
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) case DatapathKind::Name: return #dsl;
#include "purlin/vocabulary.def"
  }
  return "?";
}

/// The enumerator's own name: "Copy", "Scattered", "Producer", ... (as the
/// generated code spells snac::Layout::Scattered).
constexpr const char *enumName(ConsumeOp v) {
  switch (v) {
#define PURLIN_CONSUME_OP(Name, dsl) case ConsumeOp::Name: return #Name;
#include "purlin/vocabulary.def"
  }
  return "?";
}
constexpr const char *enumName(Layout v) {
  switch (v) {
#define PURLIN_LAYOUT(Name, dsl) case Layout::Name: return #Name;
#include "purlin/vocabulary.def"
  }
  return "?";
}
constexpr const char *enumName(Root v) {
  switch (v) {
#define PURLIN_ROOT(Name, dsl) case Root::Name: return #Name;
#include "purlin/vocabulary.def"
  }
  return "?";
}
/// The runtime's tag: "Native", "Hopper", ... (atom::Hopper).
constexpr const char *enumName(DatapathKind v) {
  switch (v) {
#define PURLIN_DATAPATH(Name, dsl, MinArch, NativeOn) case DatapathKind::Name: return #Name;
#include "purlin/vocabulary.def"
  }
  return "?";
}

} // namespace purlin
