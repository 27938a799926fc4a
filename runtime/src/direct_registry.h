/// @file direct_registry.h
/// @brief DirectRegistry (internal to Communicator): the collective exchanges
/// behind Communicator::registerDirect (one captured call) and
/// Communicator::registerBuffer (a user buffer, for eager calls), and the
/// cache of peers' allocations mapped into this process, counted by who
/// holds them (docs/runtime.md "Graph capture and the direct program",
/// "Registered buffers").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"
#include "purlin/types.h"
#include "vmm_share.h"

namespace purlin::detail {

class DirectRegistry {
public:
  /// `pid` and `nonce` identify this process (peers in the same process use
  /// plain pointers: IPC cannot open a handle of its own process; their
  /// allocations are held and counted like mappings all the same, so that
  /// release refuses while a live graph writes into them).
  DirectRegistry(int rank, int size, int device, int32_t pid, uint64_t nonce);
  ~DirectRegistry();  ///< closes every mapping (device must still exist)
  DirectRegistry(const DirectRegistry &) = delete;
  DirectRegistry &operator=(const DirectRegistry &) = delete;

  /// Collective (two bootstrap rounds when every rank is eligible, one
  /// otherwise). Returns true on every rank or on none; on true,
  /// peersOut[p] is rank p's `out` as mapped here (peersOut[rank] = out)
  /// and *engine (when given) the AND of every rank's *engine.
  /// `captureStream` (a cudaStream_t being captured, or null): the graph it
  /// captures into holds the peer mappings this call uses (a CUDA user
  /// object); they stay open while that graph or an executable of it
  /// lives, and become closable once all are destroyed. Mappings whose
  /// graphs were all destroyed are closed here (before the exchange).
  bool exchange(Bootstrap &bootstrap, void *out, std::size_t outBytes, bool eligible,
                std::byte *peersOut[kMaxRanks], bool *engine = nullptr, void *captureStream = nullptr);

  /// Collective: waits for this device, closes every peer mapping that no
  /// registration and no live graph holds, and returns once every rank has
  /// (so owners may then free buffers no live graph captured).
  /// Throws Error(CudaError) naming a rank whose close failed.
  void release(Bootstrap &bootstrap);
  /// Collective (Communicator::registerBuffer): registers [ptr, ptr+bytes)
  /// on every rank and returns its handle (the same on every rank). Throws
  /// Error(InvalidArgument) on every rank when any rank's buffer does not
  /// qualify (null, zero bytes, not inside one IPC-exportable cudaMalloc
  /// allocation, overlapping one of its registrations) or the ranks'
  /// sizes differ, naming the rank; Error(CudaError) when a mapping failed.
  uint64_t registerBuffer(Bootstrap &bootstrap, void *ptr, std::size_t bytes);
  /// Collective: waits for this device, drops registration `handle` on
  /// every rank (closing peer mappings nothing else holds) and returns once
  /// every rank has. Throws Error(InvalidArgument) on every rank when a rank
  /// does not know the handle or the ranks pass different handles.
  void deregisterBuffer(Bootstrap &bootstrap, uint64_t handle);
  /// Local: when [out, out+outBytes) lies inside one registration, sets
  /// peersOut[p] to rank p's buffer at the same offset from the start of
  /// that registration (peersOut[rank] = out), *place (if given) to the
  /// registration's handle and that offset, and returns true.
  bool registeredPeers(const void *out, std::size_t outBytes, std::byte *peersOut[kMaxRanks],
                       RegisteredPlace *place = nullptr) const;
  /// Registrations currently held.
  std::size_t registrationCount() const {
    std::shared_lock<std::shared_mutex> lock(registeredMutex_);
    return registered_.size();
  }

  /// Peer allocations currently mapped or, for peers of this process,
  /// held (for tests and diagnostics).
  std::size_t mappedCount() const { return mapped_.size(); }
  /// Of those, the ones a live graph holds.
  std::size_t graphHeldCount() const;
  /// Exchanges that returned true so far.
  std::size_t acceptedCount() const { return accepted_; }
  /// CUDA user objects created so far to hold mappings (one per capture).
  std::size_t graphHoldObjects() const { return holdObjects_; }

private:
  using Key = std::pair<int, uint64_t>;  ///< (peer rank, peer's buffer id)
  /// A peer allocation mapped here, held by the graphs that captured calls
  /// on it (counted by their user objects' destructors, which CUDA runs on
  /// its own thread: an atomic shared with them, so it outlives the
  /// registry), by captured calls whose graph could not hold it (until
  /// release), and by registrations; closed when nothing holds it.
  struct Mapping {
    void *base = nullptr;
    bool ipc = true;  ///< opened by cudaIpcOpenMemHandle (false: a peer of this process, its own pointer)
    std::size_t vmmSpan = 0;  ///< nonzero: another process's cuMem chunks imported here (vmm_share.h)
    bool captured = false;
    int registrations = 0;
    std::shared_ptr<std::atomic<int>> graphs = std::make_shared<std::atomic<int>>(0);
  };
  /// One registered buffer: its range here and every rank's as seen here.
  struct Registration {
    uint64_t handle = 0;
    uintptr_t begin = 0;
    std::size_t bytes = 0;
    std::byte *peer[kMaxRanks] = {};
    std::vector<Key> holds;  ///< mappings this registration holds a count of
  };
  int rank_, size_, device_;
  int32_t pid_;
  uint64_t nonce_;
  std::map<Key, Mapping> mapped_;
  std::map<uintptr_t, Registration> registered_;  ///< by begin
  /// registered_: changed (registerBuffer, deregisterBuffer: one at a time,
  /// under the communicator's mutex) exclusively, looked up by launches on
  /// any thread (registeredPeers) shared; never held across an exchange.
  mutable std::shared_mutex registeredMutex_;
  uint64_t nextHandle_ = 1;
  std::size_t accepted_ = 0;

  /// Maps (or finds) peer p's allocation `bufferId`; nullptr on failure.
  void *map(int p, uint64_t bufferId, const void *ipcHandle);
  /// Peer p's allocation `bufferId` as reached here: mapped (map) for a
  /// peer in another process, its own pointer `base` for one in this
  /// process (pid, nonce), entered in mapped_ either way so that graphs,
  /// captured calls and registrations hold it alike; nullptr on failure.
  /// `vmm`: the peer's cuMem export (then `ipcHandle` is unused).
  void *peerAllocation(int p, int32_t pid, uint64_t nonce, uint64_t bufferId, uint64_t base, const void *ipcHandle,
                       const VmmExport *vmm);
  /// Why the last mapping of a peer's buffer failed (for the error message).
  std::string mapError_;
  /// Closes mappings that nothing holds; false if a close failed.
  bool closeUnheld();
  /// Makes the graph `captureStream` captures into hold the mappings of
  /// `keys` (a user object); false if CUDA refused (then nothing is held).
  /// One user object per capture: a later call of the same capture adds
  /// its keys to the first call's object (a graph launch pays for its
  /// user objects; a captured decode step holds many calls).
  bool holdInGraph(void *captureStream, const std::vector<Key> &keys);
  /// The user object's payload of the capture in progress (capture id
  /// `holdCapture_`), while that capture lasts; its graph cannot be
  /// destroyed before the capture ends, so the payload lives while the id
  /// can still be seen.
  unsigned long long holdCapture_ = 0;
  void *holdPayload_ = nullptr;
  std::size_t holdObjects_ = 0;
  /// Collective: every rank synchronizes its device; true iff all did.
  bool synchronizeAll(Bootstrap &bootstrap);
};

} // namespace purlin::detail
