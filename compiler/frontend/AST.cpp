/// @file AST.cpp
/// @brief Names of the AST enums, as written in a .pl file.
#include "purlin/AST.h"

namespace purlin {

const char *toString(ConsumeOp op) {
  switch (op) {
  case ConsumeOp::Copy: return "copy";
  case ConsumeOp::Reduce: return "reduce";
  }
  return "?";
}

const char *toString(Layout l) {
  switch (l) {
  case Layout::Packed: return "packed";
  case Layout::Scattered: return "scattered";
  case Layout::Transposed: return "transposed";
  case Layout::PackedV: return "packedV";
  case Layout::ScatteredV: return "scatteredV";
  case Layout::TransposedV: return "transposedV";
  }
  return "?";
}

const char *toString(Root r) {
  switch (r) {
  case Root::None: return "none";
  case Root::Producer: return "producer";
  case Root::Consumer: return "consumer";
  }
  return "?";
}

const char *toString(AtomKind a) {
  switch (a) {
  case AtomKind::Native: return "Atom";
  case AtomKind::Generic: return "Generic";
  case AtomKind::Ampere: return "Ampere";
  case AtomKind::Hopper: return "Hopper";
  case AtomKind::Blackwell: return "Blackwell";
  }
  return "?";
}

bool isVariable(Layout l) {
  return l == Layout::PackedV || l == Layout::ScatteredV || l == Layout::TransposedV;
}

} // namespace purlin
