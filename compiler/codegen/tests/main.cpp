/// @file main.cpp
/// @brief Catch2 v2 main of the codegen tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
