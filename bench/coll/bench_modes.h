/// @file bench_modes.h
/// @brief The series coll_bench can time (bench/README.md "Series"): how
/// NCCL is set up (NcclMode) and how Purlin is called (PurlinMode), with
/// the names used on the command line and in results.csv, and the legend
/// text of each. Header only (CPU unit test: coll_shape_test).
#pragma once

#include <initializer_list>
#include <string>

namespace purlin::bench {

/// NCCL at its best needs its own allocation and set-up per mode.
enum class NcclMode {
  None,            ///< no NCCL (one-GPU dry runs: checks use the device reference only)
  Default,         ///< cudaMalloc buffers, default communicator
  LegacyRegister,  ///< NCCL_LEGACY_CUDA_REGISTER=1 (set before the communicator is created)
  Symmetric,       ///< ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC), ncclAlltoAll
  CopyEngine,      ///< Symmetric plus CTAPolicy = NCCL_CTA_POLICY_ZERO (copy-engine AllGather / AlltoAll)
};

/// How Purlin's calls are made (and so which program they can take).
enum class PurlinMode {
  None,        ///< not timed
  Graph,       ///< captured in a CUDA graph: the direct program where eligible
  Staged,      ///< captured, CommOptions::direct = false: every call staged
  Eager,       ///< eager calls on unregistered buffers: staged
  Registered,  ///< eager calls on a registered output (Communicator::registerBuffer): direct where eligible
};

inline const char *modeName(NcclMode m) {
  switch (m) {
    case NcclMode::None: return "none";
    case NcclMode::Default: return "default";
    case NcclMode::LegacyRegister: return "legacy-register";
    case NcclMode::Symmetric: return "symmetric";
    case NcclMode::CopyEngine: return "copy-engine";
  }
  return "?";
}

inline const char *modeName(PurlinMode m) {
  switch (m) {
    case PurlinMode::None: return "none";
    case PurlinMode::Graph: return "graph";
    case PurlinMode::Staged: return "staged";
    case PurlinMode::Eager: return "eager";
    case PurlinMode::Registered: return "registered";
  }
  return "?";
}

/// Parses a mode by its name; false for anything else.
template <class Mode> bool parseMode(const std::string &s, Mode &out, std::initializer_list<Mode> all) {
  for (Mode m : all)
    if (s == modeName(m)) return out = m, true;
  return false;
}
inline bool parseNcclMode(const std::string &s, NcclMode &out) {
  return parseMode(s, out, {NcclMode::None, NcclMode::Default, NcclMode::LegacyRegister, NcclMode::Symmetric,
                            NcclMode::CopyEngine});
}
inline bool parsePurlinMode(const std::string &s, PurlinMode &out) {
  return parseMode(s, out, {PurlinMode::None, PurlinMode::Graph, PurlinMode::Staged, PurlinMode::Eager,
                            PurlinMode::Registered});
}

/// Eager modes time calls issued one by one; the others replay a graph.
/// Both libraries of one run are timed the same way.
inline bool eagerTiming(PurlinMode m) { return m == PurlinMode::Eager || m == PurlinMode::Registered; }
/// NCCL modes whose buffers come from ncclMemAlloc and are registered as windows.
inline bool symmetricWindows(NcclMode m) { return m == NcclMode::Symmetric || m == NcclMode::CopyEngine; }

/// The series name written into results.csv: "<library>-<mode>-<timing>"
/// with timing "graph" or "eager", plus "-sep" in the PDL-neutral mode.
inline std::string seriesName(const char *library, const char *mode, bool eager, bool separator) {
  return std::string(library) + "-" + mode + "-" + (eager ? "eager" : "graph") + (separator ? "-sep" : "");
}

/// What a series is, for a plot legend.
inline std::string legendOf(NcclMode m) {
  switch (m) {
    case NcclMode::None: return "no NCCL";
    case NcclMode::Default: return "NCCL, cudaMalloc buffers, default";
    case NcclMode::LegacyRegister: return "NCCL, NCCL_LEGACY_CUDA_REGISTER=1";
    case NcclMode::Symmetric: return "NCCL, ncclMemAlloc + symmetric windows";
    case NcclMode::CopyEngine: return "NCCL, symmetric windows + NCCL_CTA_POLICY_ZERO";
  }
  return "?";
}
inline std::string legendOf(PurlinMode m) {
  switch (m) {
    case PurlinMode::None: return "no Purlin";
    case PurlinMode::Graph: return "Purlin, CUDA graph (direct program where eligible)";
    case PurlinMode::Staged: return "Purlin, CUDA graph, staged only";
    case PurlinMode::Eager: return "Purlin, eager, unregistered (staged)";
    case PurlinMode::Registered: return "Purlin, eager, registered output";
  }
  return "?";
}

} // namespace purlin::bench
