/// @file Policy.h
/// @brief Codesign policies: the numbers SNAC runs with (CTAs per role,
/// chunking, Atom pipeline, latency/throughput crossover), by world size.
///
/// Policies are loaded from JSON (schema: docs/policy.md) or taken from the
/// built-in defaults for sm_80, sm_90 and sm_100. A .pl names policies by
/// type (`Policy` or `struct decode : Policy {};`); every name used must be
/// present in the PolicySet.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "purlin/limits.h"
#include "purlin/reduction.h"

namespace purlin {

enum class Arch { Sm80, Sm90, Sm100 };
/// "sm_80", "sm_90", "sm_100" (also purlinc's --arch and policy JSON's "arch").
inline const char *toString(Arch a) {
  switch (a) {
  case Arch::Sm80: return "sm_80";
  case Arch::Sm90: return "sm_90";
  case Arch::Sm100: return "sm_100";
  }
  return "?";
}

/// Throughput transfers pull (consumers read peers' staging; the paper's
/// choice) or push (producers write into peers' staging).
enum class Transfer { Pull, Push };

/// The Atom's pipeline (paper §3.3, Eq. 3: capacity Q = CTAs * S * B). One
/// setting per policy (it is a compile-time parameter of the generated
/// kernels), not per world size.
struct AtomPolicy {
  int pipelineStages = 0;  ///< pipeline depth S
  int stageBytes = 0;      ///< bytes per pipeline stage B
};

// The knobs of one world size, by section: the rows of
// purlin/policy_knobs.def (JSON key, range, what 0 means) of that section
// (purlin/PolicyFields.inc).

/// Latency program (paper §3.2, "Specializing for latency"): full/empty
/// packet groups; `maxBytes` is the crossover.
struct LatencyPolicy {
#define PURLIN_POLICY_KEEP_latency(x) x
#include "purlin/PolicyFields.inc"
};

/// Throughput program (paper §3.2, Algorithm 1, §3.3). Push lanes are
/// bound as snac::pushLanes (2 only where a lane is whole warps and gets
/// half the Atom's pipeline stages).
struct ThroughputPolicy {
#define PURLIN_POLICY_KEEP_throughput(x) x
#include "purlin/PolicyFields.inc"
};

/// The direct program (docs/snac-protocol.md, "Direct program"): no
/// staging, every byte written straight into the peers' output buffers.
/// The runtime takes it only for calls captured into a CUDA graph (or with
/// a registered output) whose message is at least `minBytes` and whose
/// buffers qualify on every rank.
struct DirectPolicy {
  bool enabled = true;  ///< false: never use the direct program (WorldConsts::directCtas = -1)
#define PURLIN_POLICY_KEEP_direct(x) x
#include "purlin/PolicyFields.inc"
};

/// The knobs for one world size.
struct WorldPolicy {
  LatencyPolicy latency;
  ThroughputPolicy throughput;
  DirectPolicy direct;     ///< added after throughput: older aggregate initializers still compile
};

constexpr int kMinWorld = 2;
constexpr int kMaxWorld = 8;

/// The pairs a policy without `reductions.specialize` specializes.
inline constexpr uint64_t kDefaultSpecializedPairs = pairBit(DType::BF16, RedOp::Sum);

/// The programs whose kernels a specialized pair gets (bits of
/// `reductions.specializePrograms`), by their names in a policy.
enum SpecializedProgram : unsigned { kSpecializeLatency = 1u, kSpecializeThroughput = 2u, kSpecializeDirect = 4u };
inline constexpr const char *kSpecializedProgramNames[] = {"latency", "throughput", "direct"};
/// The default: all three. Measured at 256 MiB, two ranks sharing an H100
/// (bench/results/2026-12-07-s19-device, `st8`): the kernels of every pair
/// run the specialized pairs' eager ReduceScatter 1.09x (up to 1.10x)
/// slower than their own throughput kernels, AllReduce 1.00x (up to
/// 1.02x); the direct program's within 0.99-1.04x. A policy that names
/// fewer builds faster (AllReduce's pairs unit: about 2.5 s of nvcc less
/// with "latency" alone).
inline constexpr unsigned kDefaultSpecializedPrograms = kSpecializeLatency | kSpecializeThroughput | kSpecializeDirect;

/// The (dtype, op) pairs a reduction's programs compile (bits of the
/// runtime's DType and RedOp indices, purlin/types.def): purlinc's
/// instantiation table lists the reduction classes (purlin/reduction.h)
/// that cover them (a class also runs the other pairs it covers: avg with
/// sum, min with max, i8 product with u8 product); a call whose pair's
/// class is not compiled is refused with Unsupported.
/// Default: every pair.
/// `specialize`: the pairs (bits of purlin/reduction.h's pairIndex) whose
/// reduction kernels are also compiled for that pair alone (one class, the
/// op a constant). Default: bf16 sum (measured: the generic latency
/// kernels are 6-11% slower for small messages; each specialized pair
/// costs compile time). The class of every pair
/// named must be compiled by the masks.
/// `specializePrograms`: which of those kernels a specialized pair gets
/// (SpecializedProgram bits; the others run its calls in the kernels of
/// every pair). Default: kDefaultSpecializedPrograms.
struct ReductionPolicy {
  unsigned dtypes = kAllDTypesMask;
  unsigned ops = kAllOpsMask;
  uint64_t specialize = kDefaultSpecializedPairs;
  unsigned specializePrograms = kDefaultSpecializedPrograms;
};

/// One named policy.
struct Policy {
  std::string name;
  uint64_t stagingBytes = 0;   ///< bytes of one staging half (two halves per GPU, by epoch parity)
  AtomPolicy atom;
  ReductionPolicy reductions;
  std::array<WorldPolicy, kMaxWorld + 1> world{}; ///< indexed by world size 2..8

  const WorldPolicy &forWorld(int n) const { return world.at(n); }
};

/// All policies available to one compilation, for one target arch.
struct PolicySet {
  Arch arch = Arch::Sm90;
  std::map<std::string, Policy> policies;  ///< always contains "Policy"
};

} // namespace purlin
