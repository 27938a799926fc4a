/// @file VocabularyHeader.cpp
/// @brief The DSL vocabulary header embedded in purlinc (generated include).
#include "Parser.h"

namespace purlin {

const char *vocabularyHeader() {
  static const char *const text =
#include "VocabularyHeader.inc"
      ;
  return text;
}

} // namespace purlin
