/// @file vmm_share.cpp
/// @brief cuMem chunks exported as POSIX file descriptors and mapped into a
/// peer process (vmm_share.h).
#include "vmm_share.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "driver_entry.h"

namespace purlin::detail {
namespace {

/// The driver entry points (resolved once, no link-time libcuda).
struct VmmDriver {
  PFN_cuMemGetAddressRange_v3020 getAddressRange = nullptr;
  PFN_cuMemRetainAllocationHandle_v11000 retain = nullptr;
  PFN_cuMemGetAllocationPropertiesFromHandle_v10020 properties = nullptr;
  PFN_cuMemExportToShareableHandle_v10020 exportHandle = nullptr;
  PFN_cuMemImportFromShareableHandle_v10020 importHandle = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 addressFree = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 setAccess = nullptr;
  bool ok() const {
    return getAddressRange && retain && properties && exportHandle && importHandle && release && reserve &&
           addressFree && map && unmap && setAccess;
  }
  static const VmmDriver &get() {
    static const VmmDriver d = [] {
      VmmDriver r;
      r.getAddressRange = driverEntryPoint<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange");
      r.retain = driverEntryPoint<PFN_cuMemRetainAllocationHandle_v11000>("cuMemRetainAllocationHandle");
      r.properties = driverEntryPoint<PFN_cuMemGetAllocationPropertiesFromHandle_v10020>(
          "cuMemGetAllocationPropertiesFromHandle");
      r.exportHandle = driverEntryPoint<PFN_cuMemExportToShareableHandle_v10020>("cuMemExportToShareableHandle");
      r.importHandle = driverEntryPoint<PFN_cuMemImportFromShareableHandle_v10020>("cuMemImportFromShareableHandle");
      r.release = driverEntryPoint<PFN_cuMemRelease_v10020>("cuMemRelease");
      r.reserve = driverEntryPoint<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
      r.addressFree = driverEntryPoint<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
      r.map = driverEntryPoint<PFN_cuMemMap_v10020>("cuMemMap");
      r.unmap = driverEntryPoint<PFN_cuMemUnmap_v10020>("cuMemUnmap");
      r.setAccess = driverEntryPoint<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
      return r;
    }();
    return d;
  }
};

bool fail(std::string *why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

} // namespace

void closeVmmExport(VmmExport &e) {
  for (int i = 0; i < e.chunks && i < kMaxVmmChunks; ++i)
    if (e.chunk[i].fd >= 0) {
      ::close(e.chunk[i].fd);
      e.chunk[i].fd = -1;
    }
}

bool exportVmm(const void *ptr, std::size_t bytes, int device, VmmExport &out, std::string *why) {
  const VmmDriver &drv = VmmDriver::get();
  out = VmmExport{};
  if (!drv.ok()) return fail(why, "this driver lacks the cuMem entry points");
  const auto begin = reinterpret_cast<CUdeviceptr>(ptr);
  const CUdeviceptr end = begin + bytes;
  if (bytes == 0 || end < begin) return fail(why, "an empty or wrapping range");
  CUdeviceptr base = 0;
  size_t size = 0;
  if (drv.getAddressRange(&base, &size, begin) != CUDA_SUCCESS) return fail(why, "not device memory");
  out.base = uint64_t(base);
  CUdeviceptr next = base;
  while (next < end) {
    if (out.chunks == kMaxVmmChunks) {
      closeVmmExport(out);
      return fail(why, "the range spans more than " + std::to_string(kMaxVmmChunks) + " cuMem chunks");
    }
    CUdeviceptr b = 0;
    size_t s = 0;
    CUmemGenericAllocationHandle h{};
    CUmemAllocationProp prop{};
    int fd = -1;
    bool good = drv.getAddressRange(&b, &s, next) == CUDA_SUCCESS && b == next && s > 0;
    if (good && drv.retain(&h, reinterpret_cast<void *>(b)) == CUDA_SUCCESS) {
      good = drv.properties(&prop, h) == CUDA_SUCCESS &&
             (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0 &&
             prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id == device &&
             drv.exportHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS;
      (void)drv.release(h);  // the retain's reference; the mapping keeps the allocation
    } else {
      good = false;
    }
    if (!good) {
      if (fd >= 0) ::close(fd);
      closeVmmExport(out);
      return fail(why, "a chunk at offset " + std::to_string(next - base) +
                           " is not a cuMem allocation of this device exportable as a POSIX file descriptor");
    }
    out.chunk[out.chunks++] = VmmChunk{fd, 0, uint64_t(b - base), uint64_t(s)};
    next = b + s;
  }
  out.span = uint64_t(next - base);
  return true;
}

bool unmapVmm(void *base, std::size_t span) {
  const VmmDriver &drv = VmmDriver::get();
  if (!drv.ok() || base == nullptr) return false;
  const auto va = reinterpret_cast<CUdeviceptr>(base);
  const bool unmapped = drv.unmap(va, span) == CUDA_SUCCESS;
  return drv.addressFree(va, span) == CUDA_SUCCESS && unmapped;
}

void *importVmm(int32_t pid, const VmmExport &e, int device, std::string *why) {
  const VmmDriver &drv = VmmDriver::get();
  if (!drv.ok()) return fail(why, "this driver lacks the cuMem entry points"), nullptr;
  if (e.chunks <= 0 || e.chunks > kMaxVmmChunks || e.span == 0)
    return fail(why, "a malformed cuMem export"), nullptr;
  const int pidfd = int(::syscall(SYS_pidfd_open, pid_t(pid), 0));
  if (pidfd < 0) return fail(why, std::string("pidfd_open of the peer process: ") + std::strerror(errno)), nullptr;
  CUdeviceptr va = 0;
  if (drv.reserve(&va, e.span, 0, 0, 0) != CUDA_SUCCESS) {
    ::close(pidfd);
    return fail(why, "cuMemAddressReserve of " + std::to_string(e.span) + " bytes failed"), nullptr;
  }
  int mapped = 0;
  std::string problem;
  for (; mapped < e.chunks; ++mapped) {
    const VmmChunk &c = e.chunk[mapped];
    if (c.offset + c.bytes > e.span) {
      problem = "a chunk outside the export's span";
      break;
    }
    const int fd = int(::syscall(SYS_pidfd_getfd, pidfd, c.fd, 0));
    if (fd < 0) {
      problem = std::string("pidfd_getfd of the peer's descriptor: ") + std::strerror(errno) +
                (errno == EPERM ? " (ptrace permission: Yama's ptrace_scope, or another user)" : "");
      break;
    }
    CUmemGenericAllocationHandle h{};
    const bool imported = drv.importHandle(&h, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == CUDA_SUCCESS;
    ::close(fd);
    if (!imported) {
      problem = "cuMemImportFromShareableHandle failed";
      break;
    }
    const bool ok = drv.map(va + c.offset, c.bytes, 0, h, 0) == CUDA_SUCCESS;
    (void)drv.release(h);  // the mapping holds the allocation
    if (!ok) {
      problem = "cuMemMap of an imported chunk failed";
      break;
    }
  }
  ::close(pidfd);
  if (problem.empty()) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (drv.setAccess(va, e.span, &access, 1) == CUDA_SUCCESS) return reinterpret_cast<void *>(va);
    problem = "cuMemSetAccess for this device failed";
  }
  for (int i = 0; i < mapped; ++i) (void)drv.unmap(va + e.chunk[i].offset, e.chunk[i].bytes);
  (void)drv.addressFree(va, e.span);
  return fail(why, problem), nullptr;
}

} // namespace purlin::detail
