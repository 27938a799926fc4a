/// @file workspace.h
/// @brief Layout of one rank's symmetric workspace (one allocation, the same
/// on every rank): signals, packet halves, staging halves, device state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "purlin/device_comm.h"

namespace purlin {

struct CommOptions;

/// Signal index regions of the SNAC protocol (docs/snac-protocol.md).
inline constexpr std::size_t kSignalSlots = 1024;
inline constexpr std::size_t kSignalStaged = 0;
inline constexpr std::size_t kSignalReduced = 8192;
inline constexpr std::size_t kSignalConsumed = 16384;
inline constexpr std::size_t kSignalGathered = 24576;
inline constexpr std::size_t kSignalDone = 32768;
inline constexpr std::size_t kSignalArrived = 33792;  // direct program: 3 regions of kMaxRanks*kMaxEpochSlots
inline constexpr std::size_t kSignalPut = kSignalArrived + kMaxRanks * kMaxEpochSlots;
inline constexpr std::size_t kSignalBack = kSignalPut + kMaxRanks * kMaxEpochSlots;
inline constexpr std::size_t kSignalEngine = kSignalBack + kMaxRanks * kMaxEpochSlots;  // 36864: E_PUT, E_BACK
inline constexpr std::size_t kNumSignals = kSignalEngine + 2 * kMaxEngineChunks;        // 36992
/// Every region starts at a multiple of this.
inline constexpr std::size_t kWorkspaceAlign = 256;

/// Byte offsets of the regions inside one workspace allocation. All offsets
/// are multiples of kWorkspaceAlign; regions do not overlap; `totalBytes`
/// is the allocation size (a multiple of kWorkspaceAlign).
struct WorkspaceLayout {
  std::size_t numSignals = 0;
  std::size_t signalsOffset = 0;     ///< uint64_t[numSignals]
  std::size_t signalsBytes = 0;
  std::size_t packetsOffset = 0;     ///< Packet[2][packetHalfBytes/16]
  std::size_t packetHalfBytes = 0;   ///< one half; half h at packetsOffset + h*packetHalfBytes
  std::size_t stagingOffset = 0;     ///< byte[2][stagingHalfBytes]
  std::size_t stagingHalfBytes = 0;  ///< one half; half h at stagingOffset + h*stagingHalfBytes
  std::size_t stateOffset = 0;       ///< DeviceState
  std::size_t stateBytes = 0;
  std::size_t totalBytes = 0;
  /// Bytes that must be zero at creation: signals, packets and state (all
  /// but staging). The regions are [0, stagingOffset) and [stateOffset, totalBytes).
};

/// Rounds `bytes` up to a multiple of `align` (a power of two).
constexpr std::size_t alignUp(std::size_t bytes, std::size_t align) {
  return (bytes + align - 1) & ~(align - 1);
}

/// Computes the layout for `options` and `worldSize`. Half sizes are rounded
/// up to kWorkspaceAlign. Throws Error(InvalidArgument) if worldSize is not
/// in [1, kMaxRanks], a half size is 0, or the total overflows.
WorkspaceLayout computeLayout(const CommOptions &options, int worldSize);

} // namespace purlin
