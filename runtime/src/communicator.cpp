/// @file communicator.cpp
/// @brief Communicator creation (allocate, zero, exchange, map peers, agree),
/// destruction, and the checked-mode error report.
///
/// Creation runs two bootstrap rounds so that all ranks fail together instead
/// of waiting on a rank that already gave up:
///   1. every rank tries its local setup (device, allocation, zeroing, IPC
///      handle) and gathers {ok or error message, identity, options, handle};
///   2. every rank maps its peers and gathers {ok or error message}; this round
///      is also the barrier after which peers' workspaces are known zeroed and
///      mapped everywhere.
#include "purlin/host/communicator.h"
#include "purlin/host/device_queues.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <exception>
#include <mutex>
#include <random>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>

#include "bounded_sync.h"
#include "device_scope.h"
#include "direct_registry.h"
#include "purlin/host/kernel_modules.h"
#include "purlin/host/plan_lines.h"
#include "purlin/snac/protocol.h"

namespace purlin {
namespace {

constexpr uint32_t kInfoMagic = 0x504c4e43; // "PLNC"
constexpr uint64_t kMaxWaitTimeoutUs = 86'400'000'000ull;  // one day
constexpr std::size_t kMessageBytes = 240;

/// Outcome of one rank's step, gathered so every rank can report it.
struct StepResult {
  int32_t status = 0; ///< purlin::Status
  char message[kMessageBytes] = {};
};

/// What rank r publishes in round 1.
struct PeerInfo {
  uint32_t magic = kInfoMagic;
  int32_t rank = -1;
  int32_t device = -1;
  int32_t pid = 0;
  uint64_t processNonce = 0; ///< with pid: identifies a process, no hostname needed
  uint64_t base = 0;         ///< workspace address in the owning process
  uint64_t stagingHalfBytes = 0, packetHalfBytes = 0, waitTimeoutUs = 0, totalBytes = 0;
  int32_t checked = 0;
  int32_t direct = 0;
  int32_t multiprocessors = 0, ccMajor = 0, ccMinor = 0;
  int32_t deviceQueues = 0;    ///< purlin::deviceQueues() of the rank's process
  unsigned char uuid[16] = {}; ///< cudaDeviceProp::uuid of the rank's GPU
  cudaIpcMemHandle_t handle{};
  StepResult result;
};

/// A random number fixed for the life of this process.
uint64_t processNonce() {
  static const uint64_t nonce = [] {
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid());
  }();
  return nonce;
}

StepResult failure(Status s, const char *what) {
  StepResult r;
  r.status = static_cast<int32_t>(s);
  std::strncpy(r.message, what, kMessageBytes - 1);
  return r;
}

/// Runs `step`, capturing its purlin::Error (or any exception) as a result;
/// the original exception is kept in `error` to rethrow on this rank.
template <class F> StepResult attempt(F &&step, std::exception_ptr &error) {
  try {
    step();
    return {};
  } catch (const Error &e) {
    error = std::current_exception();
    return failure(e.status(), e.what());
  } catch (const std::exception &e) {
    error = std::current_exception();
    return failure(Status::Internal, e.what());
  }
}

/// After a gather of results: rethrows this rank's own error, or throws on
/// behalf of the first peer that failed.
void agree(int rank, const StepResult *results, std::size_t stride, int size,
           const std::exception_ptr &own, const char *step) {
  if (own)
    std::rethrow_exception(own);
  for (int p = 0; p < size; ++p) {
    auto *r = reinterpret_cast<const StepResult *>(
        reinterpret_cast<const char *>(results) + stride * p);
    if (r->status != 0 && p != rank) {
      std::string msg(r->message, strnlen(r->message, kMessageBytes));
      throw Error(static_cast<Status>(r->status),
                  "rank " + std::to_string(rank) + ": communicator creation failed (" +
                      step + ") because rank " + std::to_string(p) + " failed: " + msg);
    }
  }
}


} // namespace

struct Communicator::Impl {
  int rank = 0, size = 0, device = -1;
  CommOptions options;
  WorkspaceLayout layout;
  DeviceComm comm;
  void *base = nullptr;                 ///< this rank's workspace
  cudaStream_t stream = nullptr;        ///< private, non-blocking
  cudaStream_t side = nullptr;          ///< capture fork target (captureSideStream)
  cudaEvent_t fork = nullptr, join = nullptr;
  cudaEvent_t chunk[kCaptureChunkEvents] = {};  ///< captureChunkEvent
  std::vector<void *> peerBase;         ///< workspace of rank p as mapped here
  std::vector<void *> opened;           ///< IPC mappings to close
  HostStatus *hostStatus = nullptr;     ///< pinned, mapped: abort flag and failure record (host address)
  HostStatus *hostDevice = nullptr;     ///< the same, as the device sees it
  std::mutex mutex;                     ///< registration and release (held across their exchanges)
  mutable std::mutex brokenMutex;       ///< `broken` (never held across a wait: asyncError never blocks)
  mutable std::string broken;           ///< why collectives are refused ("" = usable)
  std::string bootstrapFailure;         ///< under brokenMutex: the first failed host exchange ("" = none)
  Status refusalStatus = Status::Ok;    ///< under brokenMutex: refuseCall's status (Ok = no refusal)
  std::string refusal;                  ///< under brokenMutex: refuseCall's reason
  /// abort() and the host exchanges (exchanging): an exchange in flight
  /// when abort() runs is ended by aborting the bootstrap; otherwise the
  /// bootstrap, which the application may share, is left alone, and later
  /// exchanges are refused here. Sequentially consistent: one of the two
  /// sides sees the other.
  std::atomic<bool> abortedHost{false};
  std::atomic<int> exchangesInFlight{0};
  const void *lastStream = nullptr;     ///< checked mode: the stream of the previous eager call
  int ranksPerDevice = 1;               ///< most ranks on one GPU (by UUID)
  int multiprocessors = 0;              ///< SMs of this rank's GPU
  Bootstrap *bootstrap = nullptr;       ///< not owned; outlives the communicator
  bool logPlans = false;                ///< options.logPlans or PURLIN_LOG_PLANS=1
  detail::PlanLines planLines;          ///< firstOfShape, logPlan, lastPlan
  mutable std::mutex occupancyMutex;    ///< occupancy
  mutable std::map<std::tuple<const void *, int, std::size_t>, int> occupancy;  ///< occupancy
  std::size_t registeredCalls = 0;      ///< countRegisteredCall
  std::FILE *planLog = nullptr;         ///< CommOptions::planLogPath, opened at the first plan line
  bool planLogFailed = false;           ///< it could not be opened (said once; stderr then)
  std::unique_ptr<detail::DirectRegistry> direct; ///< peers' output mappings (registerDirect)

  ~Impl() {
    if (planLog) std::fclose(planLog);
    if (device >= 0 && base) {
      // This rank's kernels may still use the mappings closed below: wait
      // for the device first (as cudaFree would), bounded: a kernel still
      // waiting on a peer that is gone is aborted (synchronizeBounded).
      detail::QuietDeviceScope scope(device);
      (void)detail::synchronizeBounded([](void *) { (void)cudaDeviceSynchronize(); }, nullptr,
                                       hostStatus ? &hostStatus->abortRequested : nullptr,
                                       detail::destroyWaitMs(options), rank);
    }
    direct.reset();  // closes its IPC mappings on `device`
    if (device < 0)
      return;
    detail::QuietDeviceScope scope(device);
    for (void *p : opened)
      (void)cudaIpcCloseMemHandle(p);
    if (base)
      (void)cudaFree(base);
    if (hostStatus)
      (void)cudaFreeHost(hostStatus);
    if (stream)
      (void)cudaStreamDestroy(stream);
    if (side)
      (void)cudaStreamDestroy(side);
    if (fork)
      (void)cudaEventDestroy(fork);
    if (join)
      (void)cudaEventDestroy(join);
    for (cudaEvent_t e : chunk)
      if (e)
        (void)cudaEventDestroy(e);
    (void)cudaGetLastError();
  }

  /// Round 1, local part: allocate and zero the workspace, export it.
  void setupLocal(int cudaDevice, PeerInfo &info) {
    if (size < 1 || size > kMaxRanks)
      PURLIN_THROW(Status::InvalidArgument,
                   "world size " + std::to_string(size) + " is outside [1, " +
                       std::to_string(kMaxRanks) + "]");
    if (options.checked && (options.waitTimeoutUs == 0 || options.waitTimeoutUs > kMaxWaitTimeoutUs))
      PURLIN_THROW(Status::InvalidArgument,
                   "CommOptions: checked mode needs 0 < waitTimeoutUs <= " + std::to_string(kMaxWaitTimeoutUs) +
                       " (one day), not " + std::to_string(options.waitTimeoutUs));
    layout = computeLayout(options, size);
    int count = 0;
    PURLIN_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (cudaDevice < 0 || cudaDevice >= count)
      PURLIN_THROW(Status::InvalidArgument,
                   "rank " + std::to_string(rank) + ": CUDA device " +
                       std::to_string(cudaDevice) + " does not exist (" +
                       std::to_string(count) + " visible)");
    detail::DeviceScope scope(cudaDevice);
    device = cudaDevice;
    cudaDeviceProp prop{};
    PURLIN_CUDA_CHECK(cudaGetDeviceProperties(&prop, cudaDevice));
    static_assert(sizeof(prop.uuid) == sizeof(info.uuid), "device UUID is 16 bytes");
    std::memcpy(info.uuid, &prop.uuid, sizeof(info.uuid));
    info.deviceQueues = deviceQueues();
    info.multiprocessors = prop.multiProcessorCount;
    info.ccMajor = prop.major;
    info.ccMinor = prop.minor;
    multiprocessors = prop.multiProcessorCount;
    PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    PURLIN_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    PURLIN_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    for (cudaEvent_t &e : chunk)
      PURLIN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    PURLIN_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&hostStatus), sizeof(HostStatus),
                                    cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(hostStatus, 0, sizeof(HostStatus));
    PURLIN_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&hostDevice), hostStatus, 0));
    PURLIN_CUDA_CHECK(cudaMalloc(&base, layout.totalBytes));
    auto *bytes = static_cast<std::byte *>(base);
    PURLIN_CUDA_CHECK(cudaMemsetAsync(bytes, 0, layout.stagingOffset, stream));
    PURLIN_CUDA_CHECK(cudaMemsetAsync(bytes + layout.stateOffset, 0, layout.stateBytes, stream));
    static const std::vector<uint64_t> firstEpochs(kMaxEpochSlots, 1);  // per-CTA epochs
    PURLIN_CUDA_CHECK(cudaMemcpyAsync(bytes + layout.stateOffset + offsetof(DeviceState, epochs),
                                      firstEpochs.data(), sizeof(uint64_t) * kMaxEpochSlots,
                                      cudaMemcpyHostToDevice, stream));
    // The failure model's slow-path state (SpinBound::look reads it).
    const uint64_t timeoutNs = options.checked ? options.waitTimeoutUs * 1000 : 0;
    PURLIN_CUDA_CHECK(cudaMemcpyAsync(bytes + layout.stateOffset + offsetof(DeviceState, host), &hostDevice,
                                      sizeof hostDevice, cudaMemcpyHostToDevice, stream));
    PURLIN_CUDA_CHECK(cudaMemcpyAsync(bytes + layout.stateOffset + offsetof(DeviceState, timeoutNs), &timeoutNs,
                                      sizeof timeoutNs, cudaMemcpyHostToDevice, stream));
    PURLIN_CUDA_CHECK(cudaStreamSynchronize(stream));
    // Before any call of this communicator (purlin/host/kernel_modules.h).
    preloadKernelModules(cudaDevice);
    PURLIN_CUDA_CHECK(cudaIpcGetMemHandle(&info.handle, base));
    info.base = reinterpret_cast<uint64_t>(base);
    scope.release();
  }

  /// Round 1, check of what every rank published.
  void checkPeers(const std::vector<PeerInfo> &all) {
    const PeerInfo &me = all[rank];
    for (int p = 0; p < size; ++p) {
      const PeerInfo &o = all[p];
      if (o.magic != kInfoMagic || o.rank != p)
        PURLIN_THROW(Status::BootstrapError,
                     "rank " + std::to_string(rank) + ": rank " + std::to_string(p) +
                         " sent a malformed communicator record");
      if (o.stagingHalfBytes != me.stagingHalfBytes ||
          o.packetHalfBytes != me.packetHalfBytes || o.checked != me.checked ||
          o.waitTimeoutUs != me.waitTimeoutUs || o.totalBytes != me.totalBytes || o.direct != me.direct)
        PURLIN_THROW(Status::InvalidArgument,
                     "rank " + std::to_string(rank) + ": CommOptions differ from rank " +
                         std::to_string(p) + "'s (staging half " +
                         std::to_string(me.stagingHalfBytes) + " vs " +
                         std::to_string(o.stagingHalfBytes) + ", packet half " +
                         std::to_string(me.packetHalfBytes) + " vs " +
                         std::to_string(o.packetHalfBytes) + ", checked " +
                         std::to_string(me.checked) + " vs " + std::to_string(o.checked) +
                         ", direct " + std::to_string(me.direct) + " vs " +
                         std::to_string(o.direct) + "); all ranks must pass equal options");
    }
    // Ranks that share a GPU: the launcher sizes programs by the busiest
    // GPU's share, which every rank must compute alike (same GPU model).
    ranksPerDevice = 1;
    for (int p = 0; p < size; ++p) {
      int same = 0;
      for (int q = 0; q < size; ++q) same += std::memcmp(all[p].uuid, all[q].uuid, sizeof(all[p].uuid)) == 0;
      ranksPerDevice = std::max(ranksPerDevice, same);
    }
    if (ranksPerDevice > 1)
      for (int p = 0; p < size; ++p)
        if (all[p].multiprocessors != me.multiprocessors || all[p].ccMajor != me.ccMajor || all[p].ccMinor != me.ccMinor)
          PURLIN_THROW(Status::Unsupported,
                       "rank " + std::to_string(rank) + ": ranks share GPUs, and rank " + std::to_string(p) +
                           "'s GPU (" + std::to_string(all[p].multiprocessors) + " SMs, sm_" +
                           std::to_string(all[p].ccMajor) + std::to_string(all[p].ccMinor) + ") differs from this rank's (" +
                           std::to_string(me.multiprocessors) + " SMs, sm_" + std::to_string(me.ccMajor) +
                           std::to_string(me.ccMinor) + "); a communicator whose ranks share GPUs needs GPUs of one model");
    // And, in each process that holds several ranks on one GPU, enough
    // hardware work queues that their streams need not share one
    // (purlin/host/device_queues.h; ranks in different processes do not
    // share a process's queues): every rank decides alike.
    for (int p = 0; p < size; ++p) {
      int together = 0;  // ranks on p's GPU in p's process
      for (int q = 0; q < size; ++q)
        together += std::memcmp(all[p].uuid, all[q].uuid, sizeof(all[p].uuid)) == 0 && all[q].pid == all[p].pid &&
                    all[q].processNonce == all[p].processNonce;
      if (together > 1 && all[p].deviceQueues < 2 * together)
        PURLIN_THROW(Status::Unsupported,
                     "rank " + std::to_string(rank) + ": " + std::to_string(together) +
                         " ranks share a GPU in rank " + std::to_string(p) + "'s process, which feeds it through " +
                         std::to_string(all[p].deviceQueues) +
                         " hardware queues (CUDA_DEVICE_MAX_CONNECTIONS); ranks sharing a GPU in one process need at "
                         "least 2 each (" + std::to_string(2 * together) +
                         "), or their streams can share a queue where one rank's waiting kernel holds back the "
                         "peer kernel it waits for: leave the variable unset (the runtime then sets " +
                         std::to_string(kDeviceQueuesSet) + ") or set it to " + std::to_string(2 * together) + ".." +
                         std::to_string(kDeviceQueuesSet) + " before CUDA starts");
    }
  }

  /// Round 2, local part: map every peer's workspace into this process.
  void mapPeers(const std::vector<PeerInfo> &all) {
    detail::DeviceScope scope(device);
    peerBase.assign(size, nullptr);
    const PeerInfo &me = all[rank];
    for (int p = 0; p < size; ++p) {
      const PeerInfo &o = all[p];
      const std::string ctx = "rank " + std::to_string(rank) + " (device " +
                              std::to_string(device) + ") mapping rank " +
                              std::to_string(p) + " (device " +
                              std::to_string(o.device) + ")";
      if (p == rank) {
        peerBase[p] = base;
      } else if (o.pid == me.pid && o.processNonce == me.processNonce) {
        // Same process: IPC cannot open our own handles; use peer access.
        if (o.device != device) {
          int can = 0;
          PURLIN_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, o.device));
          if (!can)
            PURLIN_THROW(Status::Unsupported,
                         ctx + ": the devices cannot access each other (no P2P)");
          cudaError_t e = cudaDeviceEnablePeerAccess(o.device, 0);
          if (e == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();
          else
            checkCuda(e, (ctx + ": cudaDeviceEnablePeerAccess").c_str(), __FILE__, __LINE__);
        }
        peerBase[p] = reinterpret_cast<void *>(o.base);
      } else {
        void *ptr = nullptr;
        checkCuda(cudaIpcOpenMemHandle(&ptr, o.handle, cudaIpcMemLazyEnablePeerAccess),
                  (ctx + ": cudaIpcOpenMemHandle").c_str(), __FILE__, __LINE__);
        opened.push_back(ptr);
        peerBase[p] = ptr;
      }
    }
    comm.rank = rank;
    comm.size = size;
    for (int p = 0; p < size; ++p) {
      auto *b = static_cast<std::byte *>(peerBase[p]);
      comm.signals[p] = reinterpret_cast<uint64_t *>(b + layout.signalsOffset);
      comm.packets[p] = reinterpret_cast<Packet *>(b + layout.packetsOffset);
      comm.staging[p] = b + layout.stagingOffset;
    }
    comm.state = reinterpret_cast<DeviceState *>(static_cast<std::byte *>(base) +
                                                 layout.stateOffset);
    comm.numSignals = layout.numSignals;
    comm.packetHalfBytes = layout.packetHalfBytes;
    comm.stagingHalfBytes = layout.stagingHalfBytes;
    comm.checked = options.checked ? 1u : 0u;
    scope.release();
  }
};

Communicator::Communicator(Bootstrap &bootstrap, int cudaDevice,
                           CommOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl &m = *impl_;
  m.rank = bootstrap.rank();
  m.size = bootstrap.size();
  m.options = options;
  {
    const char *env = std::getenv("PURLIN_LOG_PLANS");
    m.logPlans = options.logPlans || (env && std::string(env) != "0" && std::string(env) != "");
  }

  PeerInfo mine;
  mine.rank = m.rank;
  mine.device = cudaDevice;
  mine.pid = static_cast<int32_t>(::getpid());
  mine.processNonce = processNonce();
  mine.stagingHalfBytes = options.stagingHalfBytes;
  mine.packetHalfBytes = options.packetHalfBytes;
  mine.waitTimeoutUs = options.waitTimeoutUs;
  mine.checked = options.checked ? 1 : 0;
  mine.direct = options.direct ? 1 : 0;
  m.bootstrap = &bootstrap;
  std::exception_ptr own;
  mine.result = attempt([&] { m.setupLocal(cudaDevice, mine); }, own);
  mine.totalBytes = m.layout.totalBytes;

  std::vector<PeerInfo> all(m.size);
  bootstrap.allGather(&mine, all.data(), sizeof(PeerInfo));
  agree(m.rank, &all[0].result, sizeof(PeerInfo), m.size, own, "local setup");
  StepResult step = attempt([&] {
    m.checkPeers(all);
    m.mapPeers(all);
  }, own);

  std::vector<StepResult> results(m.size);
  bootstrap.allGather(&step, results.data(), sizeof(StepResult));
  agree(m.rank, results.data(), sizeof(StepResult), m.size, own, "peer mapping");
  PURLIN_CUDA_CHECK(cudaSetDevice(m.device));
  m.direct = std::make_unique<detail::DirectRegistry>(m.rank, m.size, m.device, mine.pid,
                                                      mine.processNonce);
}

template <class F> auto Communicator::exchanging(F &&exchange) -> decltype(exchange()) {
  Impl &m = *impl_;
  m.exchangesInFlight.fetch_add(1);
  struct Leave {
    std::atomic<int> &count;
    ~Leave() { count.fetch_sub(1); }
  } leave{m.exchangesInFlight};
  if (m.abortedHost.load())
    throw Error(Status::Aborted, "rank " + std::to_string(m.rank) +
                                     ": the communicator was aborted on this rank; no host exchange runs");
  try {
    return exchange();
  } catch (const Error &e) {
    // A failed host exchange leaves the bootstrap unusable (its connections
    // closed): later calls are refused, and asyncError says why.
    if (e.status() == Status::BootstrapError || e.status() == Status::Aborted) {
      std::lock_guard<std::mutex> lock(impl_->brokenMutex);
      if (impl_->bootstrapFailure.empty()) impl_->bootstrapFailure = e.what();
    }
    throw;
  }
}

bool Communicator::registerDirect(void *out, std::size_t outBytes, bool eligible,
                                  std::byte *peersOut[kMaxRanks], bool *engine, void *captureStream) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  if (!m.options.direct || m.size < 2)
    return false;
  return exchanging([&] { return m.direct->exchange(*m.bootstrap, out, outBytes, eligible, peersOut, engine, captureStream); });
}

void Communicator::releaseDirect() {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.size < 2)
    return;
  exchanging([&] { m.direct->release(*m.bootstrap); });
}

uint64_t Communicator::registerBuffer(void *ptr, std::size_t bytes) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  return exchanging([&] { return m.direct->registerBuffer(*m.bootstrap, ptr, bytes); });
}

void Communicator::deregisterBuffer(uint64_t handle) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  exchanging([&] { m.direct->deregisterBuffer(*m.bootstrap, handle); });
}

std::size_t Communicator::registeredBuffers() const { return impl_->direct->registrationCount(); }
std::size_t Communicator::registeredCalls() const { return impl_->registeredCalls; }
void Communicator::countRegisteredCall() { ++impl_->registeredCalls; }

bool Communicator::registeredPeers(const void *out, std::size_t outBytes, std::byte *peersOut[kMaxRanks],
                                   RegisteredPlace *place) const {
  const Impl &m = *impl_;
  return m.options.direct && m.size > 1 && m.direct->registeredPeers(out, outBytes, peersOut, place);
}

std::size_t Communicator::directMappings() const { return impl_->direct->mappedCount(); }
std::size_t Communicator::directGraphHeld() const { return impl_->direct->graphHeldCount(); }
std::size_t Communicator::directGraphHoldObjects() const { return impl_->direct->graphHoldObjects(); }
std::size_t Communicator::directRegistrations() const { return impl_->direct->acceptedCount(); }
bool Communicator::logPlans() const { return impl_->logPlans; }
bool Communicator::firstOfShape(uint64_t shapeKey) { return impl_->planLines.note(shapeKey); }
int Communicator::occupancy(const void *kernel, int threads, std::size_t smem) const {
  std::lock_guard<std::mutex> lock(impl_->occupancyMutex);
  const auto it = impl_->occupancy.find({kernel, threads, smem});
  return it == impl_->occupancy.end() ? -1 : it->second;
}
void Communicator::setOccupancy(const void *kernel, int threads, std::size_t smem, int ctasPerSm) const {
  std::lock_guard<std::mutex> lock(impl_->occupancyMutex);
  impl_->occupancy[{kernel, threads, smem}] = ctasPerSm;
}
const std::string &Communicator::lastPlan() const { return impl_->planLines.last(); }
void Communicator::logPlan(uint64_t shapeKey, const std::string &call, std::string line) {
  Impl &m = *impl_;
  const std::string text = "purlin: rank " + std::to_string(m.rank) + ": " + call + ": " +
                           m.planLines.record(shapeKey, std::move(line)) + "\n";
  if (!m.options.planLogPath.empty() && !m.planLog && !m.planLogFailed) {
    m.planLog = std::fopen(m.options.planLogPath.c_str(), "a");
    m.planLogFailed = !m.planLog;
    if (!m.planLog)  // said once, then the lines go to stderr
      std::fprintf(stderr, "purlin: rank %d: cannot open the plan log '%s': %s; plan lines go to stderr\n", m.rank,
                   m.options.planLogPath.c_str(), std::strerror(errno));
    else
      std::setvbuf(m.planLog, nullptr, _IOFBF, 1 << 16);  // a line is one write: ranks may share the file
  }
  std::FILE *to = m.planLog ? m.planLog : stderr;
  std::fwrite(text.data(), 1, text.size(), to);
  std::fflush(to);
}
void *Communicator::captureSideStream() const { return impl_->side; }
void *Communicator::captureForkEvent() const { return impl_->fork; }
void *Communicator::captureJoinEvent() const { return impl_->join; }
void *Communicator::captureChunkEvent(int i) const {
  return i >= 0 && i < kCaptureChunkEvents ? impl_->chunk[i] : nullptr;
}

Communicator::~Communicator() = default;

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }
int Communicator::device() const { return impl_->device; }
int Communicator::ranksPerDevice() const { return impl_->ranksPerDevice; }
int Communicator::multiprocessors() const { return impl_->multiprocessors; }
const CommOptions &Communicator::options() const { return impl_->options; }
const WorkspaceLayout &Communicator::layout() const { return impl_->layout; }
const DeviceComm &Communicator::deviceComm() const { return impl_->comm; }
HostStatus *Communicator::hostStatus() const { return impl_->hostStatus; }

void *Communicator::peerWorkspace(int peer) const {
  if (peer < 0 || peer >= impl_->size)
    PURLIN_THROW(Status::InvalidArgument,
                 "peerWorkspace: rank " + std::to_string(peer) + " is outside [0, " +
                     std::to_string(impl_->size) + ")");
  return impl_->peerBase[peer];
}

namespace {
/// A packet group's or ARRIVED_TAG's header in a message: the call's epoch
/// (its low 31 bits) above the flow's 32-bit tag (protocol.h packetHeader).
std::string headerText(uint64_t h) {
  return "call " + std::to_string(h >> 32) + ", flow tag " + std::to_string(h & 0xffffffffu);
}

/// What a mismatch message says every rank must pass alike.
constexpr const char *kAlike = "kind, count or counts, dtype, op and root must be the same on every rank";

/// The status and message of a failure record (WaitError).
Status describeFailure(const WaitError &err, std::string &message) {
  const std::string who = "rank " + std::to_string(err.rank);
  switch (WaitErrorKind(err.kind)) {
  case WaitErrorKind::Signal:
  case WaitErrorKind::Packet:
  case WaitErrorKind::Counter: {
    // A packet slot's values are its two full bits (3 = both words full).
    const bool packet = WaitErrorKind(err.kind) == WaitErrorKind::Packet;
    std::string what = packet ? "packet slot " + std::to_string(err.signal) + " (full bits"
                       : WaitErrorKind(err.kind) == WaitErrorKind::Counter ? "counter " + std::to_string(err.signal) + " ("
                                                                           : "signal " + describeSignal(err.signal) + " (";
    message = who + " timed out waiting on " + what + (packet ? ": " : "") + "expected " +
              std::to_string(err.expected) + ", observed " + std::to_string(err.observed) + ")";
    return Status::Timeout;
  }
  case WaitErrorKind::Aborted:
    message = who + ": the communicator was aborted on this rank (Communicator::abort)";
    return Status::Aborted;
  case WaitErrorKind::Mismatch:
    message = who + ": rank " + std::to_string(err.signal) +
              " called a different collective (call hash " + std::to_string(err.observed) + ", this rank's " +
              std::to_string(err.expected) + "): " + kAlike +
              ", and an AllToAllV's sendCounts[q] on rank r the same as recvCounts[r] on rank q";
    return Status::InvalidArgument;
  case WaitErrorKind::PacketMismatch:
    message = who + ": a packet group from rank " + std::to_string(err.signal) + " was written by another call (" +
              headerText(err.observed) + "; this rank expected " + headerText(err.expected) +
              "): the ranks called different collectives, counts, dtypes, ops or roots, in this call or an earlier "
              "one; " + kAlike;
    return Status::InvalidArgument;
  case WaitErrorKind::ArrivalMismatch:
    message = who + ": rank " + std::to_string(err.signal) + "'s direct call differs from this rank's (" +
              headerText(err.observed) + "; this rank's " + headerText(err.expected) +
              "): " + kAlike +
              ", and an eager call's output in a registered buffer at the same offset of the same registration; no "
              "kernel wrote into a peer's output (a copy-engine call's copies still ran)";
    return Status::InvalidArgument;
  case WaitErrorKind::BadCounts: {
    // device_counts.cuh CountsEntry: which array and entry (signal = what * kMaxRanks + k).
    const uint32_t what = err.signal / uint32_t(kMaxRanks), k = err.signal % uint32_t(kMaxRanks);
    const std::string at = "[" + std::to_string(k) + "]";
    const char *arrays[] = {"counts (or sendCounts)", "sendDispls", "recvCounts", "recvDispls"};
    if (what < 4) {
      const bool displ = what == 1 || what == 3;
      message = who + ": its " + arrays[what] + at + " in device memory is " + std::to_string(err.observed) +
                (displ ? ", past the buffer's capacity (at most " : ", above maxCount (at most ") +
                std::to_string(err.expected) + (displ ? " for that block; in and out hold n*maxCount elements)" : ")");
    } else if (what == 4) {
      message = who + ": its sendCounts" + at + " = " + std::to_string(err.expected) + " but recvCounts" + at + " = " +
                std::to_string(err.observed) + " in device memory: this rank's block to itself has one size";
    } else {
      message = who + ": its recvDispls in device memory overlap the blocks from ranks " + std::to_string(k) + " and " +
                std::to_string(err.expected);
    }
    message += "; the call moved nothing on any rank (docs/device-counts.md)";
    return Status::InvalidArgument;
  }
  case WaitErrorKind::PeerFailed: {
    const auto origin = WaitErrorKind(err.expected);
    const std::string peer = "rank " + std::to_string(err.signal);
    if (origin == WaitErrorKind::Aborted) {
      message = who + ": " + peer + " aborted the communicator; this rank's waits gave up";
      return Status::Aborted;
    }
    if (origin == WaitErrorKind::Refused) {
      message = who + ": " + peer + " refused a call that this rank made (see its error); this rank's waits gave up";
      return Status::RemoteError;
    }
    message = who + ": " + peer + " failed (" +
              (origin == WaitErrorKind::Mismatch || origin == WaitErrorKind::PacketMismatch ||
                       origin == WaitErrorKind::ArrivalMismatch
                   ? std::string("its call differed from a peer's")
               : origin == WaitErrorKind::BadCounts
                   ? std::string("it or a peer refused the counts in device memory; the call moved nothing on any rank")
                   : std::string("a wait timed out")) +
              "; see its error); this rank's waits gave up";
    return Status::RemoteError;
  }
  case WaitErrorKind::Refused:  // recorded on the host (refuseCall), never by a wait
    message = who + ": refused a call (see that call's error)";
    return Status::InvalidArgument;
  }
  message = who + ": unknown failure record (kind " + std::to_string(err.kind) + ")";
  return Status::Internal;
}
} // namespace

Status Communicator::asyncError(std::string *message) const {
  const Impl &m = *impl_;
  if (m.hostStatus == nullptr)
    return Status::Ok;
  const volatile WaitError &rec = m.hostStatus->error;
  const bool recorded = rec.failed != 0;
  std::atomic_thread_fence(std::memory_order_acquire);
  const bool aborted = m.hostStatus->abortRequested != 0;
  std::string bootstrapFailure, refusal;
  Status refusalStatus = Status::Ok;
  {
    std::lock_guard<std::mutex> lock(m.brokenMutex);  // the reasons are copied only when they are reported
    refusalStatus = m.refusalStatus;
    if (refusalStatus != Status::Ok)
      refusal = m.refusal;
    else if (!recorded && !aborted)
      bootstrapFailure = m.bootstrapFailure;
  }
  if (!recorded && !aborted && bootstrapFailure.empty() && refusalStatus == Status::Ok)
    return Status::Ok;
  std::string why;
  Status s;
  if (refusalStatus != Status::Ok) {  // this rank's own refusal (refuseCall) comes first: it caused the rest
    s = refusalStatus;
    why = "rank " + std::to_string(m.rank) + " refused a call, which fails the communicator on every rank (" +
          refusal + ")";
  } else if (!recorded && !aborted) {  // a host exchange failed (the bootstrap is unusable)
    s = Status::BootstrapError;
    why = "rank " + std::to_string(m.rank) + ": a host exchange failed: " + bootstrapFailure;
  } else if (recorded) {
    WaitError err;
    err.failed = rec.failed;
    err.rank = rec.rank;
    err.signal = rec.signal;
    err.kind = rec.kind;
    err.expected = rec.expected;
    err.observed = rec.observed;
    s = describeFailure(err, why);
  } else {  // abort() before any kernel saw it
    s = Status::Aborted;
    why = "rank " + std::to_string(m.rank) + ": the communicator was aborted on this rank (Communicator::abort)";
  }
  {
    std::lock_guard<std::mutex> lock(m.brokenMutex);
    if (m.broken.empty())
      m.broken = why;
  }
  if (message)
    *message = why;
  return s;
}

void Communicator::checkDeviceErrors() {
  std::string why;
  const Status s = asyncError(&why);
  if (s != Status::Ok)
    throw Error(s, why);
}

void Communicator::abort() noexcept {
  Impl &m = *impl_;
  if (m.hostStatus == nullptr)
    return;
  {
    volatile uint32_t *flag = &m.hostStatus->abortRequested;
    if (*flag != 0)
      return;
    *flag = 1u;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  // No CUDA call and nothing written into a peer's workspace from here (a
  // peer may be destroying it): the first wait of this rank's kernels that
  // sees the flag tells every peer (recordWaitError). A host exchange in
  // progress on another thread (registration, release) gives up now, by
  // aborting the bootstrap (its peers' exchanges fail at once instead of
  // timing out); with none in progress the bootstrap, which the
  // application may use for other things, is left alone.
  m.abortedHost.store(true);
  if (m.bootstrap && m.exchangesInFlight.load() > 0) m.bootstrap->abort();
}

Status Communicator::refuseCall(Status status, const std::string &why, void *stream) noexcept {
  Impl &m = *impl_;
  if (status == Status::Ok)
    status = Status::InvalidArgument;
  try {
    {
      std::lock_guard<std::mutex> lock(m.brokenMutex);
      if (m.refusalStatus != Status::Ok)
        return status;  // told the peers already
      m.refusalStatus = status;
      m.refusal = why;
    }
    if (m.hostStatus == nullptr || m.size < 2)
      return status;
    // The FAILED value, copied by the stream from pinned memory into every
    // rank's signal (its own too: this rank's kernels already in flight on
    // other streams give up as well). Stream-ordered, so this rank's
    // earlier calls end first; captured into a graph when `stream` is
    // capturing (the replay then fails every rank).
    m.hostStatus->refusalCode = snac::failureCode(m.rank, uint32_t(WaitErrorKind::Refused));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    detail::QuietDeviceScope scope(m.device);
    auto *s = static_cast<cudaStream_t>(stream);
    for (int q = 0; q < m.size; ++q) {
      const cudaError_t e = cudaMemcpyAsync(m.comm.signals[q] + snac::kFailedIndex, &m.hostStatus->refusalCode,
                                            sizeof(uint64_t), cudaMemcpyHostToDevice, s);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        std::lock_guard<std::mutex> lock(m.brokenMutex);
        m.refusal += std::string("; telling rank ") + std::to_string(q) + " failed (cudaMemcpyAsync: " +
                     cudaGetErrorString(e) + "): abort() every rank";
        break;
      }
    }
  } catch (...) {
  }
  return status;
}

std::string Communicator::broken() const {
  (void)asyncError();
  std::lock_guard<std::mutex> lock(impl_->brokenMutex);
  return impl_->broken;
}

bool Communicator::sameStream(const void *stream) {
  Impl &m = *impl_;
  if (!m.options.checked)
    return true;
  if (m.lastStream != nullptr && m.lastStream != stream)
    return false;
  m.lastStream = stream;
  return true;
}

} // namespace purlin
