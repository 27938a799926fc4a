/// @file device_comm.h
/// @brief DeviceComm: the plain struct a kernel receives by value, holding
/// every rank's symmetric workspace as mapped into this rank, plus this
/// rank's device-local state. Built by purlin::Communicator.
///
/// Workspace of one rank (one allocation, same layout on every rank; offsets
/// computed by purlin::WorkspaceLayout, runtime/include/purlin/host/workspace.h):
///
///   signals   uint64_t[numSignals]        peers write (release; E_* flags: stream memory ops), owner polls (acquire)
///   packets   Packet[2][packetHalfBytes/16] by epoch parity; peers push, owner polls
///   staging   byte[2][stagingHalfBytes]   by epoch parity; owner stages, peers pull
///   local     DeviceState                 epoch, counters, error record; owner only
#pragma once

#include "purlin/limits.h"
#include "purlin/types.h"

namespace purlin {

/// One 16-byte slot of a latency packet region: two 8-byte words, written by
/// one lane with one store of two 8-byte elements. 32 slots make a packet
/// group (63 payload words and a collector word; bit 63 of each word is its
/// full bit): runtime/include/purlin/snac/packet_group.cuh.
struct alignas(16) Packet {
  uint64_t word0;
  uint64_t word1;
};
static_assert(sizeof(Packet) == 16, "a packet slot is one 16-byte store");

/// Checked mode: the first spin-wait that expires records what it waited on.
struct WaitError {
  uint32_t failed;      ///< 0 = no error; 1 = a wait timed out
  int32_t rank;         ///< rank that waited
  uint32_t signal;      ///< signal index (or packet index for polls)
  uint32_t kind;        ///< 0 = signal wait, 1 = packet poll, 2 = counter
  uint64_t expected;
  uint64_t observed;
};

/// Per-CTA epoch slots (docs/snac-protocol.md "Per-CTA epochs"): a kernel
/// of a collective has at most this many CTAs (purlin/limits.h).
inline constexpr int kMaxEpochSlots = limits::kMaxEpochSlots;

/// Copy-engine form of the direct ReduceScatter / AllReduce
/// (docs/snac-protocol.md "Direct program"): most chunks of one partition.
inline constexpr int kMaxEngineChunks = 64;

/// Device-local state of one rank: never touched by peers.
struct DeviceState {
  WaitError error;           ///< checked mode
  uint32_t counters[4096];   ///< last-arriver counters, indexed by the collective's role/slot
  /// Per-CTA epochs, all equal between calls (initialised to 1; epochs[0] =
  /// calls completed + 1, for host readers after a synchronization): CTA i
  /// of a call reads epochs[i]; at its end it writes e+1 to every slot j = i
  /// (mod gridDim).
  uint64_t epochs[kMaxEpochSlots];
};

struct DeviceComm {
  int rank = 0;
  int size = 0;
  uint64_t *signals[kMaxRanks] = {};   ///< signals of rank p, as mapped here
  Packet *packets[kMaxRanks] = {};     ///< packet region of rank p (2 halves)
  std::byte *staging[kMaxRanks] = {};  ///< staging region of rank p (2 halves)
  DeviceState *state = nullptr;        ///< this rank's local state
  std::size_t numSignals = 0;
  std::size_t packetHalfBytes = 0;
  std::size_t stagingHalfBytes = 0;
  uint64_t spinLimit = 0;              ///< checked mode: polls before a wait gives up (packet slots: two loads per poll); 0 = unbounded
};

} // namespace purlin
