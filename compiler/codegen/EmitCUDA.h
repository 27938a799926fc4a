/// @file EmitCUDA.h
/// @brief The CUDA emitter: per .pl file a fixed set of files, deterministic
/// (same EmitInput -> byte-identical text), so that the kernels compile in
/// parallel and launchers link them instead of compiling them again
/// (docs/codegen.md, "Files"):
///   NAME.h            the host API (C++ and C ABI) declarations;
///   NAME.plan.h       per collective the rules of its call plan
///                     (NAME_PlanRules), printed from the IR's plan ops;
///   NAME.programs.h   per collective its policy struct, SNAC type, the
///                     instantiation table (one accessor per kernel that
///                     exists) and NAME_Programs, as snac::launch takes it;
///   NAME.device.cuh   the device code printed from the verified SNAC IR;
///   NAME.cu           the host API definitions (snac::launch);
///   NAME.<unit>.cu    the kernel units: each defines the accessors of its
///                     rows of the table (KernelUnit), so nvcc compiles each
///                     kernel in exactly one of them.
#pragma once

#include <optional>
#include <string>

#include "codegen/EmitModel.h"

namespace purlin::codegen {

/// The header text (API declarations; includable from C and C++).
std::string emitHeader(const EmitInput &input);

/// NAME.plan.h: the call plans' rules (host C++ only).
std::string emitPlanHeader(const EmitInput &input);
/// NAME.programs.h: policies, types, instantiation table, Programs.
std::string emitProgramsHeader(const EmitInput &input);
/// NAME.device.cuh: the device code printed from the IR.
std::string emitDeviceCode(const EmitInput &input);
/// NAME.cu: the host API definitions.
std::string emitSource(const EmitInput &input);
/// NAME.<unit>.cu: the kernel unit `unit` (a comment only when no row of
/// the table is in it).
std::string emitKernelUnit(const EmitInput &input, KernelUnit unit);

/// Every file (every collective of collectives.def runs; a program the
/// printers have no form for was reported when the input was built).
EmitOutput emitCUDA(const EmitInput &input);

/// Where the files go for `-o <cuPath>`: cuPath itself; the others are its
/// path without the extension (the whole path if it has none) plus ".h",
/// ".plan.h", ".programs.h", ".device.cuh" and ".<unit>.cu".
OutputPaths outputPaths(const std::string &cuPath);

/// Writes `text` to `path`; on failure returns a message naming the path
/// and the OS error, else nullopt.
std::optional<std::string> writeFile(const std::string &path, const std::string &text);

} // namespace purlin::codegen
