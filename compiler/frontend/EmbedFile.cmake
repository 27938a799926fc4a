# cmake -DIN=<file> -DOUT=<file.inc> [-DDEF=<file.def>] -P EmbedFile.cmake
# Writes IN's text as one C++ raw string literal into OUT; each line
# `#include "purlin/vocabulary.def"` of IN is replaced by DEF's text, so the
# embedded header needs no include path.
file(READ ${IN} content)
if(DEF)
  file(READ ${DEF} def)
  string(REPLACE "#include \"purlin/vocabulary.def\"\n" "${def}" content "${content}")
endif()
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nR\"purlin_vocab(${content})purlin_vocab\"\n")
