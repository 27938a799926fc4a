/// @file EmitModel.h
/// @brief The CUDA emitter's input: per collective, what the generated code
/// instantiates (Transform/Compose stages, datapath, policy constants) and
/// the IR facts its comments cite (programs, roles, op ids).
///
/// Filled from the front end's Module and the PolicySet by buildEmitInput
/// (FromModule.h), the verified SNAC IR by an IRProvider (FromIR.h) and the
/// device code by printPrograms (FromIR.h); tests fill it directly.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "codegen/CollectiveKind.h"
#include "codegen/EmitDirect.h"
#include "codegen/EmitEngine.h"
#include "codegen/EmitLatency.h"
#include "codegen/EmitThroughput.h"
#include "ir/Pipeline.h"
#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::codegen {

/// The kernel units: which generated .cu compiles a kernel of the
/// instantiation table. Each program family of every pair has its own,
/// and the specialized pairs' kernels one more, so the heavy ones (the
/// throughput kernel of every pair, with its reduction class loops) do not
/// wait for the others.
enum class KernelUnit { Latency, Throughput, Direct, Pairs };
inline constexpr int kNumKernelUnits = 4;
/// "latency", "throughput", "direct", "pairs": the unit's file is NAME.<this>.cu.
inline const char *unitName(KernelUnit u) {
  switch (u) {
  case KernelUnit::Latency: return "latency";
  case KernelUnit::Throughput: return "throughput";
  case KernelUnit::Direct: return "direct";
  case KernelUnit::Pairs: return "pairs";
  }
  return "?";
}

/// One SNAC stage: `Transform<Op, In, Out, Root>` in the runtime.
struct StageSpec {
  ConsumeOp op = ConsumeOp::Copy;
  Layout in = Layout::Packed;
  Layout out = Layout::Packed;
  Root root = Root::None;
};

/// One role of one IR program, as a comment of the generated code cites it.
struct RoleNote {
  std::string role;     ///< "latency", "stage", "consume", "gather", ...
  std::string ctas;     ///< where its CTA count comes from, e.g. "world[n].stageCtas"
  std::string opIds;    ///< the IR printer's op ids, e.g. "%3..%7" (may be empty)
  std::string summary;  ///< one line: what the role's ops do
};

/// One IR program (latency or throughput) of a collective.
struct ProgramNote {
  std::string name;               ///< "latency" or "throughput"
  std::string when;               ///< dispatch condition, e.g. "bytes <= world[n].latencyMaxBytes"
  std::vector<RoleNote> roles;
};

/// One collective to emit.
struct EmitCollective {
  std::string name;               ///< alias name as declared, maybe qualified ("ns::allReduce")
  CollectiveKind kind = CollectiveKind::Unknown;
  unsigned line = 0;              ///< line of the alias in the .pl
  AtomKind atom = AtomKind::Native;
  std::vector<StageSpec> stages;  ///< 1 for a SNAC, {F, G} for a compose
  std::vector<std::string> stageNames; ///< names of F and G for a compose (comments)
  Policy policy;                  ///< the policy named in the declaration
  std::vector<ProgramNote> programs; ///< from the SNAC IR (may be empty)
  /// The verified SNAC IR the device code is printed from (ir::lowerVerified).
  std::optional<ir::VerifiedIR> ir;
  /// The verified IR of the world sizes showing the pull and the push
  /// throughput program (ir::worldShowing; push absent when no world size
  /// of the policy binds it): the throughput device code is printed from them.
  std::optional<ir::VerifiedIR> pullIR, pushIR;
  /// The push CTA shapes (stage lanes, consume lanes) the policy binds at
  /// the world sizes taking the push transfer, ascending: the throughput
  /// kernel instantiates these only (empty without a push program).
  std::vector<PushLaneShape> pushLanes;
  /// The verified IR the direct program is printed from: pullIR's or
  /// pushIR's when it has one, else the first world size deriving one.
  std::optional<ir::VerifiedIR> directIR;
  /// The latency program's device code, printed from `ir` (printPrograms).
  std::optional<LatencyCode> latency;
  /// The throughput programs' device code, printed from pullIR/pushIR.
  std::optional<ThroughputCode> throughput;
  /// The direct program's kernel form, printed from directIR; absent when
  /// no world size derives one (the launcher then never takes the direct
  /// program).
  std::optional<DirectCode> direct;
  /// The direct program's copy-engine form, printed from the same directIR.
  std::optional<EngineCode> engine;
  int directWorld = 0;  ///< the world size of the IR `direct` and `engine` were printed from
};

/// One .pl file's worth of output.
struct EmitInput {
  std::string sourceName;         ///< the .pl's file name (no directory), cited in comments
  std::string cuName;             ///< file name of the .cu, e.g. "allreduce.cu"
  std::string headerName;         ///< file name the .cu includes, e.g. "allreduce.h"
  std::string planName;           ///< "allreduce.plan.h" (EmitCUDA.h)
  std::string programsName;       ///< "allreduce.programs.h" (EmitCUDA.h)
  std::string deviceName;         ///< "allreduce.device.cuh"
  std::array<std::string, kNumKernelUnits> unitNames; ///< "allreduce.latency.cu", ... (KernelUnit order)
  Arch arch = Arch::Sm90;         ///< target arch: resolves AtomKind::Native, names the policy set
  std::vector<EmitCollective> collectives; ///< in source order
};

/// The files the emitter writes per .pl file (EmitCUDA.h).
struct EmitOutput {
  std::string cu;        ///< NAME.cu: host API definitions
  std::string h;         ///< NAME.h: host API declarations
  std::string plan;      ///< NAME.plan.h
  std::string programs;  ///< NAME.programs.h
  std::string device;    ///< NAME.device.cuh
  std::array<std::string, kNumKernelUnits> units; ///< NAME.<unit>.cu, KernelUnit order
};

/// Their paths for one `-o` (outputPaths).
struct OutputPaths {
  std::string cu, h, plan, programs, device;
  std::array<std::string, kNumKernelUnits> units;
};

} // namespace purlin::codegen
