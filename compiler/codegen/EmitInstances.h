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
#include "purlin/reduction.h"

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

/// "bf16_sum": a pair in an accessor's name.
std::string pairTag(int pair);

/// One row of the instantiation table: a kernel that exists, compiled
/// once per architecture in one kernel unit, and the host accessor that
/// names it (declared in NAME.programs.h, defined in the unit, so a
/// launcher reaches the kernel without compiling it).
struct KernelRow {
  enum class Program { Latency, Throughput, Direct } program = Program::Latency;
  /// Latency: how the lanes move words (packet::WordForm, packet_lane.cuh):
  /// whole aligned words (Plan::words8), any length, or Plan::words8 read
  /// at run time (one body for both).
  enum class Words { Partial, Whole, Either } words = Words::Partial;
  /// Latency of a reduction: the rank counts the kernel serves
  /// (packet::RankForm): any (its body picks the two-rank form by Plan::n),
  /// two only, or three and more only.
  enum class Ranks { Any, Two, Many } ranks = Ranks::Any;
  int pair = kAnyPair;     ///< purlin/reduction.h pair index, or kAnyPair: every pair
  KernelUnit unit = KernelUnit::Latency;
  std::string accessor;    ///< "allReduce_latencyKernel_two_W8_any"
  /// "allReduce_latencyKernel<packet::WordForm::Whole, packet::RankForm::Two, kAnyPair>" (NAME.device.cuh)
  std::string kernel;
  std::string type;        ///< "snac::ProgramKernel" or "snac::DirectKernel"
};
/// The rows of collective `c` (flat identifier `id`): latency, throughput
/// and direct (when printed), for every pair (kAnyPair, in the family's
/// unit) and each specialized pair (in KernelUnit::Pairs). Latency: the
/// whole-word and the partial-word form (W8, W4) of a copy and of a
/// specialized pair; for every pair of a reduction, those two for two
/// ranks and one kernel for three and more ranks with the word form read
/// at run time, so that the heaviest body (every class's reduction over up
/// to kMaxRanks ranks) is compiled once, not once per word form.
std::vector<KernelRow> kernelRowsOf(const EmitCollective &c, const std::string &id);
/// "NAME_Atom": the one Atom type the throughput kernels are compiled for.
std::string atomTypeName(const std::string &id);

/// The table as comment lines ("// ...") followed by the definition of
/// NAME_Reductions (`id` = the flat identifier) and the declarations of
/// the rows' accessors, each naming its unit's file (`in`'s names).
std::string printInstantiationTable(const EmitInput &in, const EmitCollective &c, const std::string &id);

} // namespace purlin::codegen
