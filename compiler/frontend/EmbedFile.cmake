# cmake -DIN=<file> -DOUT=<file.inc> -P EmbedFile.cmake
# Writes IN's text as one C++ raw string literal into OUT.
file(READ ${IN} content)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nR\"purlin_vocab(${content})purlin_vocab\"\n")
