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

/// What ended a wait early (WaitError::kind; docs/runtime.md "Failure model").
enum class WaitErrorKind : uint32_t {
  Signal = 0,    ///< checked mode: a signal wait timed out
  Packet = 1,    ///< checked mode: a packet-slot poll timed out
  Counter = 2,   ///< checked mode: a counter wait timed out
  Aborted = 3,   ///< this rank's Communicator::abort()
  PeerFailed = 4,///< a peer's failure reached this rank (signal = the peer)
  Mismatch = 5,  ///< checked mode: a peer's call differs (signal = the peer; expected = this rank's call hash, observed = the peer's)
  Refused = 6,   ///< this rank refused a call of its own accord (Communicator::refuseCall; the reason is on that rank)
  PacketMismatch = 7,  ///< a latency packet group's header names another call or flow (signal = the source rank; expected and observed headers, protocol.h packetHeader)
  ArrivalMismatch = 8, ///< a direct program's ARRIVED_TAG names another call or output (signal = the source rank; expected and observed headers)
  BadCounts = 9,       ///< a V call's counts in device memory break its bound or buffers (signal = the entry, docs/device-counts.md; expected = the limit, observed = the value)
};

/// The first failure a rank's kernels met. `failed` is written last: 1
/// once the record is complete.
struct WaitError {
  uint32_t failed;      ///< 0 = no error; 1 = recorded
  int32_t rank;         ///< rank that waited
  uint32_t signal;      ///< signal index (packet index for polls; the peer for PeerFailed and the mismatches)
  uint32_t kind;        ///< WaitErrorKind
  uint64_t expected;
  uint64_t observed;
};

/// One rank's host-mapped status word (pinned host memory the kernels see
/// through a device pointer): the host raises `abortRequested`
/// (Communicator::abort) with a plain store, every spin-wait polls it; the
/// kernels copy their first failure into `error`, which the host reads
/// without any CUDA call (Communicator::asyncError).
struct HostStatus {
  uint32_t abortRequested;
  uint32_t reserved;
  WaitError error;
  /// Communicator::refuseCall: the FAILED value it copies into every rank's
  /// signal (pinned, so the copies read it when the stream reaches them).
  uint64_t refusalCode;
};

/// Per-CTA epoch slots (docs/snac-protocol.md "Per-CTA epochs"): a kernel
/// of a collective has at most this many CTAs (purlin/limits.h).
inline constexpr int kMaxEpochSlots = limits::kMaxEpochSlots;

/// Copy-engine form of the direct ReduceScatter / AllReduce
/// (docs/snac-protocol.md "Direct program"): most chunks of one partition.
inline constexpr int kMaxEngineChunks = 64;

/// The byte ranges of a V collective's call whose counts are in device
/// memory (docs/device-counts.md): what Plan::txOff/txLen/rxOff/rxLen hold
/// for a call with host counts. The call's counts kernel
/// (snac/device_counts.cuh) writes them, its program reads them; all zero
/// when the counts were refused on any rank (the program then moves
/// nothing).
struct CallRanges {
  std::size_t txOff[kMaxRanks], txLen[kMaxRanks], rxOff[kMaxRanks], rxLen[kMaxRanks];
};

/// Device-local state of one rank: never touched by peers.
struct DeviceState {
  uint32_t failed;           ///< 0 until a wait of this rank gave up (claimed by atomicCAS: one record per rank)
  uint32_t reserved;
  /// Read only when a wait has spun ~1024 polls (SpinBound::look) or gives
  /// up, so they live here rather than in the kernels' DeviceComm
  /// parameter: a larger parameter cost the latency kernels (see DeviceComm).
  HostStatus *host;          ///< this rank's host-mapped status (device pointer)
  uint64_t timeoutNs;        ///< checked mode: nanoseconds (%globaltimer) before a wait gives up; 0 = unbounded
  uint64_t reserved2;        ///< keeps counters 32-byte aligned
  uint32_t counters[4096];   ///< last-arriver counters, indexed by the collective's role/slot
  /// Per-CTA epochs, all equal between calls (initialised to 1; epochs[0] =
  /// calls completed + 1, for host readers after a synchronization): CTA i
  /// of a call reads epochs[i]; at its end it writes e+1 to every slot j = i
  /// (mod gridDim).
  uint64_t epochs[kMaxEpochSlots];
  /// The ranges of the current device-count call (CallRanges).
  CallRanges ranges;
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
  /// 1 in checked mode (CommOptions::checked): a wait whose value is
  /// there still gives up if this rank's kernels failed (checkedFailed).
  /// The rest of the failure model's state (the host-mapped status, the
  /// timeout) is in DeviceState, read only on the slow path.
  uint32_t checked = 0;
  uint32_t reserved = 0;
};

} // namespace purlin
