/// @file direct_registry.cpp
/// @brief The exchange behind Communicator::registerDirect.
///
/// Round 1 gathers, from every rank: whether it can take the direct program
/// for this call (its own checks, plus: its output lies in one cudaMalloc
/// allocation that CUDA IPC can export), and that allocation's identity
/// (process, buffer id, base, size, IPC handle, offset of `out`). If any rank
/// says no, every rank returns false (same data, same answer). Otherwise
/// each rank maps the peers' allocations it has not mapped yet (cached by
/// the peer's buffer id, which CUDA never reuses within a process) and
/// round 2 gathers whether that worked, so a failed mapping on one rank
/// makes every rank fall back instead of some running the direct kernel.
#include "direct_registry.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "device_scope.h"
#include "driver_entry.h"
#include "purlin/host/error.h"
#include "vmm_share.h"

namespace purlin::detail {
namespace {

constexpr uint32_t kDirectMagic = 0x504c4452; // "PLDR"

struct DirectRecord {
  uint32_t magic = kDirectMagic;
  int32_t eligible = 0;
  int32_t pid = 0;
  int32_t engine = 0;      ///< this rank can take the copy-engine form (ANDed over ranks)
  uint64_t nonce = 0;
  uint64_t bufferId = 0;
  uint64_t base = 0;       ///< allocation base in the owner's process
  uint64_t allocBytes = 0;
  uint64_t offset = 0;     ///< out - base
  uint64_t outBytes = 0;
  cudaIpcMemHandle_t handle{};
  int32_t vmm = 0;         ///< cuMem memory: vmmExport instead of handle
  int32_t padding = 0;
  VmmExport vmmExport;
};

/// The driver entry points this file needs, resolved once through the
/// runtime (no link-time dependency on libcuda).
struct Driver {
  PFN_cuMemGetAddressRange_v3020 getAddressRange = nullptr;
  PFN_cuPointerGetAttribute_v4000 getAttribute = nullptr;
  static const Driver &get() {
    static const Driver d = [] {
      Driver r;
      r.getAddressRange = driverEntryPoint<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange");
      r.getAttribute = driverEntryPoint<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
      return r;
    }();
    return d;
  }
};

/// An id for a cuMem export, unique in this process and apart from CUDA's
/// buffer ids (a peer never re-uses a cuMem mapping: the exporter's
/// allocator may map other memory at the same address later).
uint64_t nextVmmId() {
  static std::atomic<uint64_t> ids{0};
  return (uint64_t(1) << 63) | ++ids;
}

/// Fills the allocation identity of [out, out+outBytes) on `device`: one
/// cudaMalloc allocation (a legacy CUDA IPC handle), or cuMem chunks
/// exported as POSIX file descriptors (torch's expandable segments and
/// symmetric memory; vmm_share.h), which the exporter keeps open until the
/// exchange ends (closeVmmExport). False (the record stays ineligible) for
/// anything else (cudaMallocAsync pools, managed and host memory, cuMem
/// chunks created without a POSIX-fd handle type).
template <class Record> bool describe(void *out, std::size_t outBytes, int device, Record &rec) {
  const Driver &drv = Driver::get();
  if (!drv.getAddressRange || !drv.getAttribute) return false;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (drv.getAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(out)) != CUDA_SUCCESS) return false;
  const auto o = reinterpret_cast<uintptr_t>(out);
  const bool oneAllocation = outBytes <= size - (o - uintptr_t(base));  // (no overflow for huge outBytes)
  unsigned long long id = 0;
  if (oneAllocation &&
      drv.getAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(out)) == CUDA_SUCCESS &&
      cudaIpcGetMemHandle(&rec.handle, reinterpret_cast<void *>(base)) == cudaSuccess) {
    rec.bufferId = id;
    rec.base = uint64_t(base);
    rec.allocBytes = uint64_t(size);
    rec.offset = uint64_t(o - uintptr_t(base));
    return true;
  }
  (void)cudaGetLastError();
  if (!exportVmm(out, outBytes, device, rec.vmmExport, nullptr)) return false;
  rec.vmm = 1;
  rec.bufferId = nextVmmId();
  rec.base = rec.vmmExport.base;
  rec.allocBytes = rec.vmmExport.span;
  rec.offset = uint64_t(o) - rec.vmmExport.base;
  return true;
}

/// Closes this rank's exported descriptors when an exchange ends (its
/// peers have imported them by its last round, or never will).
struct ExportGuard {
  VmmExport &e;
  ~ExportGuard() { closeVmmExport(e); }
};

constexpr uint32_t kRegisterMagic = 0x504c5247; // "PLRG"

/// Why a rank's buffer cannot be registered (RegisterRecord::problem).
enum class RegisterProblem : int32_t { None = 0, Null, NoDevice, NotOneAllocation, Overlaps };

struct RegisterRecord {
  uint32_t magic = kRegisterMagic;
  RegisterProblem problem = RegisterProblem::None;
  int32_t pid = 0;
  int32_t padding = 0;
  uint64_t nonce = 0;
  uint64_t bytes = 0;      ///< registered bytes
  uint64_t overlaps = 0;   ///< Overlaps: the handle of the registration it overlaps
  uint64_t bufferId = 0;
  uint64_t base = 0;       ///< allocation base in the owner's process
  uint64_t allocBytes = 0;
  uint64_t offset = 0;     ///< ptr - base
  cudaIpcMemHandle_t handle{};
  int32_t vmm = 0;         ///< cuMem memory: vmmExport instead of handle
  int32_t padding2 = 0;
  VmmExport vmmExport;
};

std::string problemText(const RegisterRecord &r) {
  switch (r.problem) {
    case RegisterProblem::None: return "";
    case RegisterProblem::Null: return "passes a null pointer or zero bytes";
    case RegisterProblem::NoDevice: return "could not make its CUDA device current";
    case RegisterProblem::NotOneAllocation:
      return "passes a range that is neither inside one cudaMalloc allocation CUDA IPC can export nor in cuMem "
             "memory exportable as POSIX file descriptors (pool, managed and host memory, and cuMem memory created "
             "without that handle type, cannot be registered)";
    case RegisterProblem::Overlaps:
      return "passes a range that overlaps its registration " + std::to_string(r.overlaps);
  }
  return "sent an unknown problem code";
}

/// For the length of a collective exchange: the communicator's device
/// current, and synchronous CUDA calls allowed even if the calling thread
/// is capturing (IPC, bootstrap copies). `ok` = both took effect.
struct ExchangeScope {
  int previous = -1;
  bool modeExchanged = false;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  bool ok = false;
  explicit ExchangeScope(int device) {
    ok = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    modeExchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    ok = ok && modeExchanged;
    (void)cudaGetLastError();
  }
  ~ExchangeScope() {
    if (modeExchanged) (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (previous >= 0) (void)cudaSetDevice(previous);
  }
  ExchangeScope(const ExchangeScope &) = delete;
  ExchangeScope &operator=(const ExchangeScope &) = delete;
};

} // namespace

DirectRegistry::DirectRegistry(int rank, int size, int device, int32_t pid, uint64_t nonce)
    : rank_(rank), size_(size), device_(device), pid_(pid), nonce_(nonce) {}

DirectRegistry::~DirectRegistry() {
  if (mapped_.empty()) return;
  QuietDeviceScope scope(device_);
  for (auto &[key, m] : mapped_) {
    if (m.ipc) (void)cudaIpcCloseMemHandle(m.base);
    if (m.vmmSpan) (void)unmapVmm(m.base, m.vmmSpan);
  }
  (void)cudaGetLastError();
}

void *DirectRegistry::map(int p, uint64_t bufferId, const void *ipcHandle) {
  auto it = mapped_.find({p, bufferId});
  if (it != mapped_.end()) return it->second.base;
  void *base = nullptr;
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, ipcHandle, sizeof handle);
  if (cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
    mapError_ = std::string("cudaIpcOpenMemHandle: ") + cudaGetErrorString(cudaGetLastError());
    return nullptr;
  }
  mapped_[{p, bufferId}].base = base;
  return base;
}

void *DirectRegistry::peerAllocation(int p, int32_t pid, uint64_t nonce, uint64_t bufferId, uint64_t base,
                                     const void *ipcHandle, const VmmExport *vmm) {
  if ((pid != pid_ || nonce != nonce_) && vmm != nullptr) {
    // Another process's cuMem chunks: imported afresh for this exchange
    // (its id is new), closed when nothing holds them.
    void *mappedBase = importVmm(pid, *vmm, device_, &mapError_);
    if (mappedBase == nullptr) return nullptr;
    Mapping &m = mapped_[{p, bufferId}];
    m.base = mappedBase;
    m.ipc = false;
    m.vmmSpan = std::size_t(vmm->span);
    return m.base;
  }
  if (pid != pid_ || nonce != nonce_) return map(p, bufferId, ipcHandle);
  // Same process: peer access through the peer's own pointer, held and
  // counted like a mapping (nothing to open or close).
  Mapping &m = mapped_[{p, bufferId}];
  m.base = reinterpret_cast<void *>(base);
  m.ipc = false;
  return m.base;
}

bool DirectRegistry::closeUnheld() {
  bool ok = true;
  for (auto it = mapped_.begin(); it != mapped_.end();) {
    if (it->second.captured || it->second.registrations > 0 || it->second.graphs->load() > 0) {
      ++it;
      continue;
    }
    if (it->second.ipc && cudaIpcCloseMemHandle(it->second.base) != cudaSuccess) ok = false;
    if (it->second.vmmSpan && !unmapVmm(it->second.base, it->second.vmmSpan)) ok = false;
    it = mapped_.erase(it);
  }
  (void)cudaGetLastError();
  return ok;
}

namespace {
/// The payload of a graph's user object: the mappings it holds (each once).
struct GraphHold {
  std::vector<std::shared_ptr<std::atomic<int>>> counts;
};
/// What release() waits on while CUDA's thread runs the destructors of
/// destroyed graphs' user objects. Never destroyed: a destructor may run
/// while the process exits.
struct GraphHoldSignal {
  std::mutex mutex;
  std::condition_variable dropped;
};
GraphHoldSignal &graphHoldSignal() {
  static auto *signal = new GraphHoldSignal;
  return *signal;
}
/// Runs on a CUDA thread when the last graph or executable holding the
/// object is destroyed (and its work done): no CUDA calls here.
void releaseGraphHold(void *payload) {
  auto *hold = static_cast<GraphHold *>(payload);
  {
    std::lock_guard<std::mutex> lock(graphHoldSignal().mutex);
    for (auto &c : hold->counts) c->fetch_sub(1);
  }
  graphHoldSignal().dropped.notify_all();
  delete hold;
}
} // namespace

std::size_t DirectRegistry::graphHeldCount() const {
  std::size_t n = 0;
  for (const auto &[key, m] : mapped_) n += m.graphs->load() > 0;
  return n;
}

bool DirectRegistry::holdInGraph(void *captureStream, const std::vector<Key> &keys) {
  if (captureStream == nullptr || keys.empty()) return keys.empty();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  unsigned long long captureId = 0;
  if (cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(captureStream), &status, &captureId, &graph) != cudaSuccess ||
      status != cudaStreamCaptureStatusActive || graph == nullptr) {
    (void)cudaGetLastError();
    return false;
  }
  const auto add = [this](GraphHold &hold, const Key &k) {
    const std::shared_ptr<std::atomic<int>> &count = mapped_.at(k).graphs;
    if (std::find(hold.counts.begin(), hold.counts.end(), count) != hold.counts.end()) return;
    hold.counts.push_back(count);
    count->fetch_add(1);
  };
  if (holdPayload_ != nullptr && captureId == holdCapture_) {
    // A later call of the same capture: its graph's object holds these too
    // (nothing runs the object's destructor before the capture has ended).
    auto *hold = static_cast<GraphHold *>(holdPayload_);
    std::lock_guard<std::mutex> lock(graphHoldSignal().mutex);
    for (const Key &k : keys) add(*hold, k);
    return true;
  }
  auto *hold = new GraphHold;
  for (const Key &k : keys) add(*hold, k);
  cudaUserObject_t object = nullptr;
  if (cudaUserObjectCreate(&object, hold, releaseGraphHold, 1, cudaUserObjectNoDestructorSync) != cudaSuccess) {
    (void)cudaGetLastError();
    releaseGraphHold(hold);
    return false;
  }
  // The graph takes our reference: the object dies with the graph and its
  // executables (CUDA defers that until their launched work is done).
  if (cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaUserObjectRelease(object, 1);  // runs releaseGraphHold
    return false;
  }
  holdCapture_ = captureId;
  holdPayload_ = hold;
  ++holdObjects_;
  return true;
}

bool DirectRegistry::exchange(Bootstrap &bootstrap, void *out, std::size_t outBytes, bool eligible,
                              std::byte *peersOut[kMaxRanks], bool *engine, void *captureStream) {
  // Nothing before round 1 may throw: a rank that left here early would
  // leave its peers waiting in the bootstrap. A local failure is sent as
  // "not eligible" instead.
  ExchangeScope scope(device_);
  if (scope.ok) (void)closeUnheld();  // what destroyed graphs held (their work is done)
  DirectRecord mine;
  mine.pid = pid_;
  mine.nonce = nonce_;
  mine.outBytes = uint64_t(outBytes);
  mine.eligible = scope.ok && eligible && describe(out, outBytes, device_, mine) ? 1 : 0;
  ExportGuard exportGuard{mine.vmmExport};
  mine.engine = engine && *engine ? 1 : 0;
  std::vector<DirectRecord> all(size_);
  bootstrap.allGather(&mine, all.data(), sizeof(DirectRecord));
  for (int p = 0; p < size_; ++p)
    if (all[p].magic != kDirectMagic)
      PURLIN_THROW(Status::BootstrapError, "rank " + std::to_string(rank_) + ": rank " + std::to_string(p) +
                                               " sent a malformed direct-program record (do all ranks capture "
                                               "the same collectives?)");
  // Every rank writes into its peers' outputs by its own count: the counts
  // must agree, or a rank with a larger one would write past a peer's
  // output into whatever else its allocation holds (checked before the
  // eligibility answer, so a mismatch never falls back to staging either).
  for (int p = 0; p < size_; ++p)
    if (all[p].outBytes != all[0].outBytes)
      PURLIN_THROW(Status::InvalidArgument, "rank " + std::to_string(rank_) + ": the captured call's output is " +
                                                std::to_string(all[p].outBytes) + " bytes on rank " +
                                                std::to_string(p) + " but " + std::to_string(all[0].outBytes) +
                                                " on rank 0: every rank must pass the same count");
  for (int p = 0; p < size_; ++p)
    if (!all[p].eligible) return false;
  if (engine)
    for (int p = 0; p < size_; ++p) *engine = *engine && all[p].engine != 0;
  int32_t ok = 1;
  std::vector<Key> used;
  for (int p = 0; p < size_ && ok; ++p) {
    const DirectRecord &o = all[p];
    if (p == rank_) {
      peersOut[p] = static_cast<std::byte *>(out);
    } else if (void *base = peerAllocation(p, o.pid, o.nonce, o.bufferId, o.base, &o.handle,
                                           o.vmm ? &o.vmmExport : nullptr)) {
      used.push_back({p, o.bufferId});
      peersOut[p] = static_cast<std::byte *>(base) + o.offset;
    } else {
      ok = 0;
    }
  }
  // The capturing graph holds what this call maps; if it cannot, the
  // mappings are held until releaseDirect (as without graphs).
  if (ok && !holdInGraph(captureStream, used))
    for (const Key &k : used) mapped_.at(k).captured = true;
  std::vector<int32_t> oks(size_);
  bootstrap.allGather(&ok, oks.data(), sizeof ok);
  for (int p = 0; p < size_; ++p)
    if (!oks[p]) return false;
  ++accepted_;
  return true;
}

/// Collective: every rank waits for its device (the calls that used the
/// mappings are done); false on every rank if any rank's wait failed (then
/// nothing may be closed: a peer's kernel could still write through them).
bool DirectRegistry::synchronizeAll(Bootstrap &bootstrap) {
  int32_t ok = 1;
  {
    ExchangeScope scope(device_);  // the device current; allowed while the thread captures
    if (!scope.ok || cudaDeviceSynchronize() != cudaSuccess) ok = 0;
    (void)cudaGetLastError();
  }
  std::vector<int32_t> oks(size_);
  bootstrap.allGather(&ok, oks.data(), sizeof ok);
  for (int32_t x : oks)
    if (!x) return false;
  return true;
}

void DirectRegistry::release(Bootstrap &bootstrap) {
  if (!synchronizeAll(bootstrap))
    PURLIN_THROW(Status::CudaError, "rank " + std::to_string(rank_) + ": releasing direct-program mappings: a rank "
                                        "could not synchronize its device; nothing was closed");
  // CUDA runs a destroyed graph's user-object destructor on its own thread,
  // soon after the graph's work is done: wait (woken by each destructor)
  // up to 2 s for the destroyed graphs' holds to drop; a graph still alive
  // keeps its hold, and that is reported below.
  {
    std::unique_lock<std::mutex> lock(graphHoldSignal().mutex);
    graphHoldSignal().dropped.wait_for(lock, std::chrono::seconds(2), [this] { return graphHeldCount() == 0; });
  }
  struct Outcome {
    int32_t ok = 1;
    int32_t held = 0;  ///< mappings a live graph still holds (kept open)
  } mine;
  {
    QuietDeviceScope scope(device_);
    for (auto &[key, m] : mapped_) m.captured = false;
    if (!closeUnheld()) mine.ok = 0;  // what registrations and live graphs hold stays mapped
    mine.held = int32_t(graphHeldCount());
  }
  // Every rank closed its mappings before any owner frees its buffers.
  std::vector<Outcome> all(size_);
  bootstrap.allGather(&mine, all.data(), sizeof mine);
  for (int p = 0; p < size_; ++p)
    if (!all[p].ok)
      PURLIN_THROW(Status::CudaError, "rank " + std::to_string(rank_) + ": releasing direct-program mappings failed on rank " +
                                          std::to_string(p) + " (device synchronize or cudaIpcCloseMemHandle)");
  // A live graph's mappings stay open (its replays must not write through
  // a closed mapping), so its peers must not free those buffers: say so.
  for (int p = 0; p < size_; ++p)
    if (all[p].held > 0)
      PURLIN_THROW(Status::InvalidArgument,
                   "rank " + std::to_string(rank_) + ": releaseDirect: " + std::to_string(all[p].held) +
                       " peer output mapping(s) on rank " + std::to_string(p) +
                       " are still held by captured graphs (or their executables) that are alive; they stay open "
                       "and their buffers must stay allocated: destroy those graphs first");
}

uint64_t DirectRegistry::registerBuffer(Bootstrap &bootstrap, void *ptr, std::size_t bytes) {
  // As in exchange: nothing throws before round 1.
  ExchangeScope scope(device_);
  RegisterRecord mine;
  mine.pid = pid_;
  mine.nonce = nonce_;
  mine.bytes = uint64_t(bytes);
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || bytes == 0) {
    mine.problem = RegisterProblem::Null;
  } else if (!scope.ok) {
    mine.problem = RegisterProblem::NoDevice;
  } else if (!describe(ptr, bytes, device_, mine)) {
    mine.problem = RegisterProblem::NotOneAllocation;
  } else {
    for (const auto &[b, reg] : registered_)
      if (begin < reg.begin + reg.bytes && reg.begin < begin + bytes) {
        mine.problem = RegisterProblem::Overlaps;
        mine.overlaps = reg.handle;
        break;
      }
  }
  ExportGuard exportGuard{mine.vmmExport};
  std::vector<RegisterRecord> all(size_);
  bootstrap.allGather(&mine, all.data(), sizeof(RegisterRecord));
  const std::string me = "registerBuffer on rank " + std::to_string(rank_) + ": ";
  for (int p = 0; p < size_; ++p) {
    if (all[p].magic != kRegisterMagic)
      PURLIN_THROW(Status::BootstrapError, me + "rank " + std::to_string(p) +
                                               " sent a malformed registration record (do all ranks register "
                                               "the same buffers in the same order?)");
    if (all[p].problem != RegisterProblem::None)
      PURLIN_THROW(Status::InvalidArgument, me + "rank " + std::to_string(p) + " " + problemText(all[p]));
  }
  for (int p = 0; p < size_; ++p)
    if (all[p].bytes != all[0].bytes)
      PURLIN_THROW(Status::InvalidArgument, me + "rank " + std::to_string(p) + " registers " +
                                                std::to_string(all[p].bytes) + " bytes, rank 0 " +
                                                std::to_string(all[0].bytes) +
                                                ": a registration has the same size on every rank");
  Registration reg;
  reg.handle = nextHandle_;
  reg.begin = begin;
  reg.bytes = bytes;
  int32_t ok = 1;
  for (int p = 0; p < size_ && ok; ++p) {
    const RegisterRecord &o = all[p];
    if (p == rank_) {
      reg.peer[p] = static_cast<std::byte *>(ptr);
    } else if (void *base = peerAllocation(p, o.pid, o.nonce, o.bufferId, o.base, &o.handle,
                                           o.vmm ? &o.vmmExport : nullptr)) {
      ++mapped_[{p, o.bufferId}].registrations;
      reg.holds.push_back({p, o.bufferId});
      reg.peer[p] = static_cast<std::byte *>(base) + o.offset;
    } else {
      ok = 0;
    }
  }
  std::vector<int32_t> oks(size_);
  bootstrap.allGather(&ok, oks.data(), sizeof ok);
  for (int p = 0; p < size_; ++p)
    if (!oks[p]) {
      for (const Key &k : reg.holds) --mapped_[k].registrations;
      closeUnheld();
      PURLIN_THROW(Status::CudaError, me + "rank " + std::to_string(p) + " could not map a peer's buffer" +
                                          (p == rank_ && !mapError_.empty() ? " (" + mapError_ + ")"
                                                                             : " (CUDA IPC or a cuMem import)"));
    }
  ++nextHandle_;
  std::unique_lock<std::shared_mutex> lock(registeredMutex_);
  const uint64_t handle = reg.handle;
  registered_.emplace(begin, std::move(reg));
  return handle;
}

void DirectRegistry::deregisterBuffer(Bootstrap &bootstrap, uint64_t handle) {
  auto it = registered_.begin();
  while (it != registered_.end() && it->second.handle != handle) ++it;
  struct Record {
    uint64_t handle;
    int32_t known;
    int32_t closed;
  } mine{handle, it != registered_.end(), 1};
  std::vector<Record> all(size_);
  bootstrap.allGather(&mine, all.data(), sizeof(Record));
  const std::string me = "deregisterBuffer on rank " + std::to_string(rank_) + ": ";
  for (int p = 0; p < size_; ++p) {
    if (!all[p].known)
      PURLIN_THROW(Status::InvalidArgument, me + "rank " + std::to_string(p) + " has no registration " +
                                                std::to_string(all[p].handle));
    if (all[p].handle != all[0].handle)
      PURLIN_THROW(Status::InvalidArgument, me + "rank " + std::to_string(p) + " deregisters " +
                                                std::to_string(all[p].handle) + ", rank 0 " +
                                                std::to_string(all[0].handle) +
                                                ": every rank deregisters the same registration");
  }
  // Calls that used the registration have finished on every rank (their
  // writes into peers' buffers are done) before any mapping closes; if a
  // rank cannot tell, nothing is dropped (the caller may retry).
  if (!synchronizeAll(bootstrap))
    PURLIN_THROW(Status::CudaError, me + "a rank could not synchronize its device; registration " +
                                        std::to_string(handle) + " is kept");
  {
    QuietDeviceScope scope(device_);
    for (const Key &k : it->second.holds) --mapped_[k].registrations;
    {
      std::unique_lock<std::shared_mutex> lock(registeredMutex_);
      registered_.erase(it);
    }
    if (!closeUnheld()) mine.closed = 0;
  }
  // Every rank closed its mappings before any owner frees its buffer.
  bootstrap.allGather(&mine, all.data(), sizeof(Record));
  for (int p = 0; p < size_; ++p)
    if (!all[p].closed)
      PURLIN_THROW(Status::CudaError, me + "rank " + std::to_string(p) +
                                          " failed to synchronize its device or close a mapping");
}

bool DirectRegistry::registeredPeers(const void *out, std::size_t outBytes, std::byte *peersOut[kMaxRanks],
                                     RegisteredPlace *place) const {
  const auto o = reinterpret_cast<uintptr_t>(out);
  std::shared_lock<std::shared_mutex> lock(registeredMutex_);
  auto it = registered_.upper_bound(o);  // the first registration starting after out
  if (it == registered_.begin()) return false;
  const Registration &reg = std::prev(it)->second;
  if (o + outBytes < o || o + outBytes > reg.begin + reg.bytes) return false;
  const std::size_t offset = o - reg.begin;
  for (int p = 0; p < size_; ++p) peersOut[p] = reg.peer[p] + offset;
  if (place) *place = RegisteredPlace{reg.handle, offset};
  return true;
}

} // namespace purlin::detail
