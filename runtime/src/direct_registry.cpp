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

#include <cstring>
#include <string>
#include <vector>

#include "device_scope.h"
#include "driver_entry.h"
#include "purlin/host/error.h"

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

/// Fills the allocation identity of [out, out+outBytes); false (and the
/// record stays ineligible) when it is not one IPC-exportable allocation
/// (e.g. cudaMallocAsync pools, cuMem VMM, managed memory).
bool describe(void *out, std::size_t outBytes, DirectRecord &rec) {
  const Driver &drv = Driver::get();
  if (!drv.getAddressRange || !drv.getAttribute) return false;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (drv.getAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(out)) != CUDA_SUCCESS) return false;
  const auto o = reinterpret_cast<uintptr_t>(out);
  if (o + outBytes > uintptr_t(base) + size) return false;
  unsigned long long id = 0;
  if (drv.getAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(out)) != CUDA_SUCCESS)
    return false;
  if (cudaIpcGetMemHandle(&rec.handle, reinterpret_cast<void *>(base)) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  rec.bufferId = id;
  rec.base = uint64_t(base);
  rec.allocBytes = uint64_t(size);
  rec.offset = uint64_t(o - uintptr_t(base));
  rec.outBytes = uint64_t(outBytes);
  return true;
}

} // namespace

DirectRegistry::DirectRegistry(int rank, int size, int device, int32_t pid, uint64_t nonce)
    : rank_(rank), size_(size), device_(device), pid_(pid), nonce_(nonce) {}

DirectRegistry::~DirectRegistry() {
  if (mapped_.empty()) return;
  QuietDeviceScope scope(device_);
  for (auto &[key, base] : mapped_) (void)cudaIpcCloseMemHandle(base);
  (void)cudaGetLastError();
}

bool DirectRegistry::exchange(Bootstrap &bootstrap, void *out, std::size_t outBytes, bool eligible,
                              std::byte *peersOut[kMaxRanks], bool *engine) {
  // Nothing before round 1 may throw: a rank that left here early would
  // leave its peers waiting in the bootstrap. A local failure is sent as
  // "not eligible" instead.
  int previous = -1;
  bool local = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device_) == cudaSuccess;
  struct RestoreDevice {
    int d;
    ~RestoreDevice() { if (d >= 0) (void)cudaSetDevice(d); }
  } restoreDevice{previous};
  // The calling thread is capturing: allow the synchronous CUDA calls below
  // (IPC, bootstrap copies) for the length of the exchange.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  local = local && exchanged;
  struct Restore {
    bool on;
    cudaStreamCaptureMode m;
    ~Restore() { if (on) (void)cudaThreadExchangeStreamCaptureMode(&m); }
  } restore{exchanged, mode};
  (void)cudaGetLastError();

  DirectRecord mine;
  mine.pid = pid_;
  mine.nonce = nonce_;
  mine.eligible = local && eligible && describe(out, outBytes, mine) ? 1 : 0;
  mine.engine = engine && *engine ? 1 : 0;
  std::vector<DirectRecord> all(size_);
  bootstrap.allGather(&mine, all.data(), sizeof(DirectRecord));
  for (int p = 0; p < size_; ++p) {
    if (all[p].magic != kDirectMagic)
      PURLIN_THROW(Status::BootstrapError, "rank " + std::to_string(rank_) + ": rank " + std::to_string(p) +
                                               " sent a malformed direct-program record (do all ranks capture "
                                               "the same collectives?)");
    if (!all[p].eligible) return false;
  }
  if (engine)
    for (int p = 0; p < size_; ++p) *engine = *engine && all[p].engine != 0;
  int32_t ok = 1;
  for (int p = 0; p < size_ && ok; ++p) {
    const DirectRecord &o = all[p];
    if (p == rank_) {
      peersOut[p] = static_cast<std::byte *>(out);
    } else if (o.pid == pid_ && o.nonce == nonce_) {
      peersOut[p] = reinterpret_cast<std::byte *>(o.base + o.offset);  // same process: peer access
    } else {
      auto key = std::make_pair(p, o.bufferId);
      auto it = mapped_.find(key);
      if (it == mapped_.end()) {
        void *base = nullptr;
        if (cudaIpcOpenMemHandle(&base, o.handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
          (void)cudaGetLastError();
          ok = 0;
          break;
        }
        it = mapped_.emplace(key, base).first;
      }
      peersOut[p] = static_cast<std::byte *>(it->second) + o.offset;
    }
  }
  std::vector<int32_t> oks(size_);
  bootstrap.allGather(&ok, oks.data(), sizeof ok);
  for (int p = 0; p < size_; ++p)
    if (!oks[p]) return false;
  ++accepted_;
  return true;
}

void DirectRegistry::release(Bootstrap &bootstrap) {
  int32_t ok = 1;
  {
    QuietDeviceScope scope(device_);
    // Graphs using the mappings must have finished: wait for this device.
    if (cudaDeviceSynchronize() != cudaSuccess) ok = 0;
    for (auto &[key, base] : mapped_)
      if (cudaIpcCloseMemHandle(base) != cudaSuccess) ok = 0;
    (void)cudaGetLastError();
  }
  mapped_.clear();
  // Every rank closed its mappings before any owner frees its buffers.
  std::vector<int32_t> oks(size_);
  bootstrap.allGather(&ok, oks.data(), sizeof ok);
  for (int p = 0; p < size_; ++p)
    if (!oks[p])
      PURLIN_THROW(Status::CudaError, "rank " + std::to_string(rank_) + ": releasing direct-program mappings failed on rank " +
                                          std::to_string(p) + " (device synchronize or cudaIpcCloseMemHandle)");
}

} // namespace purlin::detail
