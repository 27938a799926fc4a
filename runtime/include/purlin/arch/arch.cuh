/// @file arch.cuh
/// @brief All raw PTX wrappers (common, sm80, sm90, sm100); each wrapper
/// checks at compile time that the current pass targets an architecture
/// that has its instruction.
#pragma once

#include "purlin/arch/common.cuh"
#include "purlin/arch/sm80.cuh"
#include "purlin/arch/sm90.cuh"
#include "purlin/arch/sm100.cuh"
