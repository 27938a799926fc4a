/// @file TestMain.cpp
/// @brief Catch2 main of the IR tests; IRError messages show in failures.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "ir/IR.h"

CATCH_TRANSLATE_EXCEPTION(purlin::ir::IRError &e) { return e.message; }
