/// @file workspace.h
/// @brief Layout of one rank's symmetric workspace (one allocation, the same
/// on every rank): signals, packet halves, staging halves, device state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "purlin/device_comm.h"
#include "purlin/snac/protocol.h"

namespace purlin {

struct CommOptions;

/// Signal index regions of the SNAC protocol, as host sizes: defined once,
/// in purlin/snac/protocol.h (docs/snac-protocol.md).
inline constexpr std::size_t kSignalSlots = snac::kSlotsPerSource;
inline constexpr std::size_t kSignalStaged = snac::kStagedBase;
inline constexpr std::size_t kSignalReduced = snac::kReducedBase;
inline constexpr std::size_t kSignalConsumed = snac::kConsumedBase;
inline constexpr std::size_t kSignalGathered = snac::kGatheredBase;
inline constexpr std::size_t kSignalDone = snac::kDoneBase;
inline constexpr std::size_t kSignalArrived = snac::kArrivedBase;  // direct program: ARRIVED, PUT, BACK
inline constexpr std::size_t kSignalEngine = snac::kEnginePutBase;  // E_PUT, E_BACK
inline constexpr std::size_t kSignalFailed = snac::kFailedIndex;
inline constexpr std::size_t kSignalCallCheck = snac::kCallCheckBase;
inline constexpr std::size_t kNumSignals = snac::kNumSignals;
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

/// Names signal index `s` by its protocol region (docs/snac-protocol.md),
/// for messages: "1027 (STAGED src 1 slot 3)", "36992 (FAILED)", "36994
/// (CALL parity 0 src 1)"; just the number outside every region.
std::string describeSignal(uint32_t s);

} // namespace purlin
