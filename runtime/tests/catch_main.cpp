/// @file catch_main.cpp
/// @brief The Catch2 (v2) main of the runtime's CPU unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
