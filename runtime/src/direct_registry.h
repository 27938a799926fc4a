/// @file direct_registry.h
/// @brief DirectRegistry (internal to Communicator): the collective exchange
/// behind Communicator::registerDirect, and the cache of peers' output
/// allocations mapped into this process (docs/runtime.md "Graph capture and
/// the direct program").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "purlin/host/bootstrap.h"
#include "purlin/types.h"

namespace purlin::detail {

class DirectRegistry {
public:
  /// `pid` and `nonce` identify this process (peers in the same process use
  /// plain pointers: IPC cannot open a handle of its own process).
  DirectRegistry(int rank, int size, int device, int32_t pid, uint64_t nonce);
  ~DirectRegistry();  ///< closes every mapping (device must still exist)
  DirectRegistry(const DirectRegistry &) = delete;
  DirectRegistry &operator=(const DirectRegistry &) = delete;

  /// Collective (two bootstrap rounds when every rank is eligible, one
  /// otherwise). Returns true on every rank or on none; on true,
  /// peersOut[p] is rank p's `out` as mapped here (peersOut[rank] = out)
  /// and *engine (when given) the AND of every rank's *engine.
  bool exchange(Bootstrap &bootstrap, void *out, std::size_t outBytes, bool eligible,
                std::byte *peersOut[kMaxRanks], bool *engine = nullptr);

  /// Collective: waits for this device, closes every peer mapping, and
  /// returns once every rank has (so owners may then free their buffers).
  /// Throws Error(CudaError) naming a rank whose close failed.
  void release(Bootstrap &bootstrap);
  /// Peer allocations currently mapped (for tests and diagnostics).
  std::size_t mappedCount() const { return mapped_.size(); }
  /// Exchanges that returned true so far.
  std::size_t acceptedCount() const { return accepted_; }

private:
  int rank_, size_, device_;
  int32_t pid_;
  uint64_t nonce_;
  /// (peer rank, peer's buffer id) -> base of the peer allocation mapped here.
  std::map<std::pair<int, uint64_t>, void *> mapped_;
  std::size_t accepted_ = 0;
};

} // namespace purlin::detail
