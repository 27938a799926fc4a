/// @file communicator.h
/// @brief purlin::Communicator: created collectively by all ranks of one
/// NVLink domain; owns this rank's symmetric workspace and the mappings of
/// every peer's workspace; hands kernels a DeviceComm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "purlin/device_comm.h"
#include "purlin/host/bootstrap.h"
#include "purlin/host/error.h"
#include "purlin/host/workspace.h"

namespace purlin {

/// Sizes and modes of a communicator. Every rank must pass equal options
/// (checked at creation: a mismatch throws Error(InvalidArgument)).
struct CommOptions {
  std::size_t stagingHalfBytes = 256u << 20; ///< bytes of one staging half (two halves, by epoch parity)
  std::size_t packetHalfBytes = 16u << 20;   ///< bytes of one packet half
  /// Checked mode: every spin-wait gives up after waitTimeoutUs (by the
  /// GPU's %globaltimer), every call is compared across ranks on the device
  /// (kind, counts, dtype, op, root: a mismatch fails every rank with a
  /// message instead of corrupting or hanging), and eager calls must stay
  /// on one stream. Costs one round trip between the ranks per call.
  bool checked = false;
  uint64_t waitTimeoutUs = 10'000'000;       ///< checked mode: microseconds before a wait gives up (> 0)
  /// Let calls captured in a CUDA graph (registerDirect) and eager calls
  /// on registered buffers (registerBuffer) take the direct program (no
  /// staging). false: every call stages, captured, registered or not.
  bool direct = true;
  /// Log, once per distinct call shape, what the call runs and why (the
  /// program, transfer, CTAs, chunk, and the crossover, packet window or
  /// capture that decided it) on stderr, like NCCL_DEBUG=INFO
  /// (snac::describePlan). Also on with PURLIN_LOG_PLANS=1 in the
  /// environment. Local: ranks may differ (not part of the equality check).
  bool logPlans = false;
  /// Where logged plan lines go: "" = stderr, else this file, appended to
  /// (ranks may share one: each line is one write).
  std::string planLogPath;
};

/// Where an eager call's output lies in a registration
/// (Communicator::registeredPeers): registrations are collective, so the
/// handle names the same registration on every rank.
struct RegisteredPlace {
  uint64_t handle = 0;
  std::size_t offset = 0;  ///< of the output from the registration's start
};

/// One rank's membership in a communicator.
///
/// Creation is collective: every rank of `bootstrap` constructs its
/// Communicator (in its own thread or process) with its own CUDA device. On
/// return every peer's workspace is mapped here and zeroed (signals, packets,
/// state; every epoch slot = 1). Destruction is local (no collective), but a rank
/// must not destroy its communicator while peers may still access its
/// workspace (synchronize kernels first, e.g. with a bootstrap barrier).
/// Calls on one communicator must be ordered on one stream (like NCCL).
///
/// Threads (docs/runtime.md "Threads"), as NCCL: a communicator is used by
/// one thread at a time; collectives, registration and release from two
/// threads must be serialized by the application (registerBuffer,
/// deregisterBuffer, registerDirect, releaseDirect and checkDeviceErrors
/// also take a mutex of the communicator, so a mistake there is a wait,
/// not a race). abort() and asyncError() may be called from any thread at
/// any time (a watchdog).
///
/// Failure (docs/runtime.md "Failure model"): a wait that gives up (a
/// checked-mode timeout, abort(), a call mismatch) fails the communicator
/// on every rank: each rank's kernels stop waiting within about a
/// millisecond and every later call returns the failure's status. Nothing
/// is written outside the workspace and the buffers the caller passed.
///
/// `bootstrap` must outlive the communicator: capturing a collective in a
/// CUDA graph uses it again (registerDirect).
class Communicator {
public:
  /// Throws purlin::Error (CudaError, BootstrapError, InvalidArgument) saying
  /// what failed and where; everything allocated so far is released.
  Communicator(Bootstrap &bootstrap, int cudaDevice, CommOptions options = {});
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const;
  int size() const;
  int device() const;
  const CommOptions &options() const;
  const WorkspaceLayout &layout() const;
  /// Passed by value to kernels; valid as long as this communicator lives.
  const DeviceComm &deviceComm() const;
  /// This rank's host-mapped status (abort flag and failure record; host
  /// address): what abort() and asyncError() use. For tests and tools.
  HostStatus *hostStatus() const;
  /// Base address of rank `peer`'s workspace as mapped in this process.
  void *peerWorkspace(int peer) const;
  /// The most ranks of this communicator that share one GPU (by device
  /// UUID, exchanged at creation): 1 when every rank has a GPU of its own.
  /// The same on every rank. When it is above 1 the launcher sizes every
  /// program so that the CTAs of that many ranks are resident on one GPU
  /// together (their CTAs wait on each other), or refuses the call.
  int ranksPerDevice() const;
  /// Multiprocessors of this rank's GPU. Ranks that share GPUs must have
  /// GPUs of one model (same SM count and compute capability; checked at
  /// creation), so this is the same on every rank whenever it matters.
  int multiprocessors() const;

  /// The communicator's failure so far, like ncclCommGetAsyncError: reads
  /// this rank's host-mapped status (no CUDA call, never waits; any thread).
  /// Ok while no wait of this rank's kernels gave up and abort() was not
  /// called; otherwise, with the reason in *message (if given):
  ///  - Timeout: a checked-mode wait lasted waitTimeoutUs ("rank R timed
  ///    out waiting on signal S (REGION src P slot K) (expected X,
  ///    observed Y)"; packet polls say "packet slot S");
  ///  - Aborted: abort() on this rank, or a peer's abort reached it;
  ///  - RemoteError: a peer failed (it timed out, or saw a call mismatch),
  ///    and this rank's kernels stopped waiting on it;
  ///  - InvalidArgument: checked mode, a peer's call differed from this
  ///    rank's (kind, counts, dtype, op or root);
  ///  - the status of this rank's own refusal (refuseCall), with its reason;
  ///    a peer's refusal shows as RemoteError ("rank R refused a call").
  /// The outcome of a collective is known once its stream has been
  /// synchronized: a failure recorded after that shows up here later. A
  /// failure is permanent: every later collective returns it; destroy the
  /// communicator and create a new one.
  Status asyncError(std::string *message = nullptr) const;
  /// Throws Error(status, message) if asyncError() is not Ok.
  void checkDeviceErrors();
  /// Aborts this rank's membership, like ncclCommAbort: sets the
  /// host-mapped flag every spin-wait polls, so each wait of this rank's
  /// kernels (running or launched later) gives up within ~1024 polls, and
  /// the first that does tells every peer (FAILED signal), whose waits give
  /// up too. A peer waiting on this rank while no kernel of this rank runs
  /// (this rank never made the call) needs its own abort() or checked-mode
  /// timeout, as with NCCL; a call this rank refused told the peers itself
  /// (refuseCall). Later collectives return Status::Aborted.
  /// No CUDA call: returns at once; any thread, any time; idempotent.
  /// Destroying the communicator afterwards does not wait on a hung peer.
  void abort() noexcept;
  /// A call this rank refuses on grounds of its own (its pointers, its
  /// stream, an AllToAllV row, a CUDA error) while its peers may be making
  /// it: their kernels of that call would wait on this rank, and its next
  /// call would pair with their pending one (docs/runtime.md "A refusal on
  /// one rank"). So the refusal fails the communicator on every rank:
  /// refuseCall records `why` (asyncError() returns `status` with it from
  /// now on, so every later call of this rank is refused at once) and
  /// enqueues on `stream` (a cudaStream_t; in stream order, after this
  /// rank's earlier calls) copies of failureCode(rank, Refused) into every
  /// rank's FAILED signal: the peers' waits on this rank give up
  /// (RemoteError, "rank R refused a call") and their later calls are
  /// refused. The launcher calls it; so does a binding that refuses a call
  /// before reaching it (Python's tensor checks, purlin_comm_refuse_call).
  /// Never throws; returns `status`. A second refusal keeps the first reason.
  Status refuseCall(Status status, const std::string &why, void *stream) noexcept;
  /// Non-empty once the communicator failed (asyncError() != Ok): why.
  std::string broken() const;
  /// Checked mode: an eager call on another stream than the previous eager
  /// call is refused (InvalidArgument) instead of racing it. Sets the
  /// stream and returns true when the check passes (always outside
  /// checked mode).
  bool sameStream(const void *stream);

  /// Registration of one captured call for the direct program
  /// (docs/runtime.md "Graph capture and the direct program"). Collective:
  /// every rank calls it for the same call (the launcher does, for each call
  /// captured into a CUDA graph that may take the direct program; so every
  /// rank must capture the same collectives). Gathers every rank's
  /// `eligible` and the identity of the allocation holding [out,
  /// out+outBytes); if all ranks are eligible and every peer's allocation
  /// could be mapped here (CUDA IPC, cached per peer allocation for the
  /// communicator's life), sets peersOut[p] to rank p's output as mapped here
  /// and returns true; otherwise false. The answer is the same on every rank.
  /// `engine` (optional, in/out): whether this rank can take the direct
  /// program's copy-engine form for this call; on true, the AND over all
  /// ranks (so every rank picks the same form).
  /// Returns false without any exchange when CommOptions::direct is false
  /// (equal on all ranks). Throws Error(BootstrapError) if the exchange
  /// fails (e.g. a peer did not capture the call: bootstrap timeout).
  /// `captureStream` (the cudaStream_t being captured; the launcher
  /// passes it): the graph being captured holds the peer mappings this call
  /// uses, through a CUDA user object, so they stay open while that graph
  /// or any executable of it lives (a replay never writes through a closed
  /// mapping, even after releaseDirect), and are closed by the next
  /// registerDirect or releaseDirect once all are destroyed. Without it,
  /// they are held until releaseDirect.
  bool registerDirect(void *out, std::size_t outBytes, bool eligible, std::byte *peersOut[kMaxRanks],
                      bool *engine = nullptr, void *captureStream = nullptr);
  /// Collective: closes every peer output mapping made by registerDirect
  /// that neither a registered buffer (registerBuffer) nor a live graph
  /// holds (after synchronizing this rank's device) and returns once every
  /// rank has. Call it after destroying the graphs that captured direct
  /// calls and before any rank frees (or reuses for another allocation) an
  /// output buffer such a call used: CUDA requires importers to close an
  /// IPC mapping before the owner frees the memory. A graph still alive
  /// keeps its mappings (its replays stay valid), so its buffers must stay
  /// allocated. Destroying the communicator closes them all (locally):
  /// destroy the graphs first.
  void releaseDirect();
  /// Registered buffers (docs/runtime.md "Registered buffers"), like
  /// ncclCommRegister: collective, every rank registers its own buffer of
  /// the same size, in the same order. Afterwards an eager (not captured)
  /// call whose output lies inside the registration takes the direct
  /// program where the collective's plan rules want it (Rules::direct) and this rank's
  /// buffers allow it (directEligible), exactly as a captured call would:
  /// no staging copy. Contract (as for NCCL's symmetric windows): for such
  /// a call every rank passes an output at the same offset inside the same
  /// registration, input and output addresses with the same 16-byte
  /// alignment, and the same in-place form (in place on every rank or on
  /// none: an in-place reduction stages), so every rank takes the same
  /// program; a peer writes only
  /// inside this rank's registered range. Returns the registration's handle
  /// (the same on every rank). The buffer must stay allocated until
  /// deregisterBuffer returns on every rank. Throws Error(InvalidArgument)
  /// on every rank when a rank's range is null, empty, not inside one
  /// cudaMalloc allocation (IPC-exportable), overlaps one of its
  /// registrations, or the sizes differ; Error(CudaError) when a peer's
  /// buffer cannot be mapped; Error(BootstrapError) when the exchange fails.
  uint64_t registerBuffer(void *ptr, std::size_t bytes);
  /// Collective: synchronizes this rank's device, drops registration
  /// `handle` and closes the peer mappings only it held; returns once every
  /// rank has, after which each rank may free its buffer. Throws
  /// Error(InvalidArgument) on every rank if a rank does not hold `handle`
  /// or the ranks pass different handles.
  void deregisterBuffer(uint64_t handle);
  /// Registrations currently held.
  std::size_t registeredBuffers() const;
  /// Eager calls that took the direct program through a registration so
  /// far (the launcher counts them: countRegisteredCall).
  std::size_t registeredCalls() const;
  void countRegisteredCall();
  /// Local: if [out, out+outBytes) lies inside a registration, sets
  /// peersOut[p] to rank p's buffer at the same offset, *place (if given)
  /// to the registration's handle and the offset, and returns true.
  bool registeredPeers(const void *out, std::size_t outBytes, std::byte *peersOut[kMaxRanks],
                       RegisteredPlace *place = nullptr) const;

  /// Peer output allocations mapped by registerDirect so far (and not closed).
  std::size_t directMappings() const;
  /// Of those, the ones a live captured graph holds.
  std::size_t directGraphHeld() const;
  /// CUDA user objects created so far to hold them: one per capture, however
  /// many direct calls it captured (a graph launch pays for its objects).
  std::size_t directGraphHoldObjects() const;
  /// Calls registerDirect accepted (true) so far.
  std::size_t directRegistrations() const;
  /// Whether plans are logged (CommOptions::logPlans or PURLIN_LOG_PLANS=1).
  bool logPlans() const;
  /// True the first time `shapeKey` (snac::planShapeKey) is seen on this
  /// communicator: the launcher logs that call's plan. Called for every
  /// planned call while plans are logged (lastPlan follows it).
  bool firstOfShape(uint64_t shapeKey);
  /// The launcher's memo of occupancy queries (ranks sharing a GPU,
  /// snac/resident.cuh): CTAs per multiprocessor of `kernel` with `threads`
  /// threads and `smem` bytes of dynamic shared memory on this rank's GPU,
  /// as cudaOccupancyMaxActiveBlocksPerMultiprocessor answered the first
  /// time; -1 before setOccupancy. Queried once per communicator, not per
  /// call. Thread-safe.
  int occupancy(const void *kernel, int threads, std::size_t smem) const;
  void setOccupancy(const void *kernel, int threads, std::size_t smem, int ctasPerSm) const;

private:
  /// Runs a host exchange over the bootstrap; a bootstrap failure (or an
  /// abort) is recorded, so that asyncError() reports BootstrapError.
  template <class F> auto exchanging(F &&exchange) -> decltype(exchange());

public:
  /// The plan line of the call planned last ("" before the first; logPlans
  /// only): what it runs and why, whether its shape was new (logged now)
  /// or seen before (logged then). The benchmark records it beside each
  /// row.
  const std::string &lastPlan() const;
  /// Records `line` as the line of shape `shapeKey` (after firstOfShape
  /// found it new; lastPlan() is then this line) and writes
  /// "purlin: rank R: <call>: <line>" to the plan log
  /// (CommOptions::planLogPath, else stderr).
  void logPlan(uint64_t shapeKey, const std::string &call, std::string line);
  /// A private stream and two events (timing disabled) with which the
  /// launcher forks a captured call's local copy off the capturing stream
  /// and joins it back (the copy-engine form of the direct program).
  /// Handles are void* to keep this header free of CUDA types.
  void *captureSideStream() const;
  void *captureForkEvent() const;
  void *captureJoinEvent() const;
  /// Events i < kCaptureChunkEvents (timing disabled) for per-chunk edges
  /// from the capturing stream to the side stream (the copy-engine
  /// AllReduce: chunk i's copy back waits for chunk i's reduce kernel);
  /// nullptr for other i.
  void *captureChunkEvent(int i) const;
  static constexpr int kCaptureChunkEvents = 2;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace purlin
