/// @file EmitInstances.h
/// @brief The instantiation table of one collective: which kernels purlinc
/// printed, with which template arguments, and which reduction classes
/// (purlin/reduction.h) its reduce sites dispatch over, derived from the
/// declaration and the policy's reduction masks. Printed into the .cu
/// (comments plus the NAME_Reductions class set every reduce site takes)
/// and by `purlinc --emit=instances`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/EmitModel.h"

namespace purlin::codegen {

/// The reduction classes collective `c` compiles: those covering the
/// policy's dtype x op masks for a reduction, none for a copy.
uint64_t reductionClassesOf(const EmitCollective &c);

/// The (dtype, op) pairs (purlin/reduction.h pair indices) that get kernels
/// of their own: the policy's `reductions.specialize` for a reduction,
/// none for a copy.
std::vector<int> specializedPairsOf(const EmitCollective &c);
/// "pairIndex(DType::BF16, RedOp::Sum)": a pair as the generated code spells it.
std::string pairSpelling(int pair);

/// The table as comment lines ("// ...") followed by the definition of
/// NAME_Reductions (`id` = the flat identifier).
std::string printInstantiationTable(const EmitCollective &c, const std::string &id);

} // namespace purlin::codegen
