/// @file limits.h
/// @brief The limits the runtime's kernels and protocol impose on a policy,
/// defined once for the runtime (static_asserts, the launcher) and purlinc
/// (its policy loader refuses what the runtime would refuse). Plain C++
/// constants: no CUDA needed.
#pragma once

namespace purlin::limits {

/// Per-CTA epoch slots (docs/snac-protocol.md "Per-CTA epochs"): a kernel
/// of a collective has at most this many CTAs (latency; stage + consume +
/// gather of the throughput program; direct).
inline constexpr int kMaxEpochSlots = 128;
/// Atom pipeline stages (atom/pipeline.cuh).
inline constexpr int kMaxPipelineStages = 16;
/// An Atom stage is a positive multiple of this many bytes.
inline constexpr int kStageBytesUnit = 512;
/// Shared memory one CTA may use (sm_90's opt-in maximum): bounds
/// pipeline stages x stage bytes.
inline constexpr long kMaxAtomWorkspaceBytes = 227L * 1024;
/// Most threads per direct CTA (its kernel's launch bound).
inline constexpr int kMaxDirectThreads = 512;
/// Most threads per throughput CTA (its kernel's launch bound: at most 128
/// registers per thread, so that a CTA of this size can be resident; the
/// reduction class loops it calls are compiled under the same bound).
inline constexpr int kMaxThroughputThreads = 512;

} // namespace purlin::limits
