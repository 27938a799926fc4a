/// @file workspace.cpp
/// @brief computeLayout: region offsets of one rank's symmetric workspace.
#include "purlin/host/workspace.h"

#include <limits>
#include <string>

#include "purlin/host/communicator.h"
#include "purlin/host/error.h"

namespace purlin {
namespace {

/// a + b, throwing InvalidArgument on overflow of size_t.
std::size_t checkedAdd(std::size_t a, std::size_t b, const char *what) {
  if (a > std::numeric_limits<std::size_t>::max() - b)
    PURLIN_THROW(Status::InvalidArgument,
                 std::string("workspace size overflows while adding ") + what);
  return a + b;
}

std::size_t roundedHalf(std::size_t bytes, const char *name) {
  if (bytes == 0)
    PURLIN_THROW(Status::InvalidArgument,
                 std::string("CommOptions::") + name + " must be > 0");
  if (bytes > std::numeric_limits<std::size_t>::max() / 4)
    PURLIN_THROW(Status::InvalidArgument,
                 std::string("CommOptions::") + name + " = " +
                     std::to_string(bytes) + " is too large");
  return alignUp(bytes, kWorkspaceAlign);
}

} // namespace

WorkspaceLayout computeLayout(const CommOptions &options, int worldSize) {
  if (worldSize < 1 || worldSize > kMaxRanks)
    PURLIN_THROW(Status::InvalidArgument,
                 "world size " + std::to_string(worldSize) +
                     " is outside [1, " + std::to_string(kMaxRanks) + "]");
  WorkspaceLayout l;
  l.numSignals = kNumSignals;
  l.packetHalfBytes = roundedHalf(options.packetHalfBytes, "packetHalfBytes");
  l.stagingHalfBytes = roundedHalf(options.stagingHalfBytes, "stagingHalfBytes");

  l.signalsOffset = 0;
  l.signalsBytes = alignUp(l.numSignals * sizeof(uint64_t), kWorkspaceAlign);
  l.packetsOffset = l.signalsOffset + l.signalsBytes;
  std::size_t end = checkedAdd(l.packetsOffset, 2 * l.packetHalfBytes, "packet halves");
  l.stagingOffset = end;
  end = checkedAdd(end, 2 * l.stagingHalfBytes, "staging halves");
  l.stateOffset = end;
  l.stateBytes = alignUp(sizeof(DeviceState), kWorkspaceAlign);
  l.totalBytes = checkedAdd(end, l.stateBytes, "device state");
  return l;
}

/// Names signal index `s` by its protocol region (docs/snac-protocol.md).
std::string describeSignal(uint32_t s) {
  const char *names[] = {"STAGED", "REDUCED", "CONSUMED", "GATHERED"};
  if (s < kSignalDone) {
    uint32_t region = s / 8192, src = (s % 8192) / kSignalSlots,
             slot = s % kSignalSlots;
    return std::to_string(s) + " (" + names[region] + " src " +
           std::to_string(src) + " slot " + std::to_string(slot) + ")";
  }
  if (s < kSignalDone + kMaxRanks)
    return std::to_string(s) + " (DONE src " + std::to_string(s - kSignalDone) + ")";
  if (s >= kSignalEngine && s < kSignalEngine + 2 * kMaxEngineChunks) {
    const char *engine[] = {"E_PUT", "E_BACK"};
    const std::size_t rel = s - kSignalEngine;
    return std::to_string(s) + " (" + engine[rel / kMaxEngineChunks] + " chunk " +
           std::to_string(rel % kMaxEngineChunks) + ")";
  }
  if (s >= kSignalArrived && s < kSignalEngine) {
    const char *direct[] = {"ARRIVED", "PUT", "BACK"};
    const std::size_t per = std::size_t(kMaxRanks) * kMaxEpochSlots, rel = s - kSignalArrived;
    return std::to_string(s) + " (" + direct[rel / per] + " src " +
           std::to_string(rel % per / kMaxEpochSlots) + " cta " +
           std::to_string(rel % kMaxEpochSlots) + ")";
  }
  if (s == kSignalFailed)
    return std::to_string(s) + " (FAILED)";
  if (s == snac::kGridBarrierIndex)
    return std::to_string(s) + " (GRID: the device API's grid barrier)";
  if (s >= snac::kVerdictBase && s < snac::kGridBarrierIndex)
    return std::to_string(s) + " (VERDICT parity " + std::to_string((s - snac::kVerdictBase) / kMaxRanks) + " src " +
           std::to_string((s - snac::kVerdictBase) % kMaxRanks) + ")";
  if (s >= snac::kArrivedTagBase && s < snac::kVerdictBase) {
    const std::size_t rel = s - snac::kArrivedTagBase;
    return std::to_string(s) + " (ARRIVED_TAG src " + std::to_string(rel / kMaxEpochSlots) + " cta " +
           std::to_string(rel % kMaxEpochSlots) + ")";
  }
  if (s >= kSignalCallCheck && s < snac::kArrivedTagBase)
    return std::to_string(s) + " (CALL parity " + std::to_string((s - kSignalCallCheck) / kMaxRanks) + " src " +
           std::to_string((s - kSignalCallCheck) % kMaxRanks) + ")";
  return std::to_string(s);
}

} // namespace purlin
