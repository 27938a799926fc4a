/// @file Options.h
/// @brief purlinc's command-line options, shared by the driver and the
/// back-end entry point (runBackend).
#pragma once

#include "purlin/Policy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace purlin {

/// How far the pipeline runs (`--emit=`).
enum class EmitKind { AST, IR, IRJson, Cuda, Instances, Api };

struct Options {
  std::string input;                     ///< the .pl file
  std::string output;                    ///< -o; empty = stdout (cuda: header, then .cu)
  std::string policyFile;                ///< --policy; empty = built-in defaults
  Arch arch = Arch::Sm90;                ///< --arch
  EmitKind emit = EmitKind::Cuda;        ///< --emit (default: cuda)
  std::vector<std::string> collectives;  ///< --collective (repeatable); empty = all
  bool printIRAfterAll = false;          ///< --print-ir-after-all
  /// --simulate=RANKS[,BYTES...]: run the CPU simulator for RANKS ranks on
  /// each message size in BYTES.
  std::optional<int> simulateRanks;
  std::vector<uint64_t> simulateBytes;
};

} // namespace purlin
