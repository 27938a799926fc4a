/// @file stream_memops.cpp
/// @brief purlin/host/stream_memops.h: the two driver entry points, resolved once.
#include "purlin/host/stream_memops.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace purlin {
namespace {

struct MemOps {
  PFN_cuStreamWriteValue32_v11070 write = nullptr;
  PFN_cuStreamWaitValue32_v11070 wait = nullptr;
  static const MemOps &get() {
    static const MemOps m = [] {
      MemOps r;
      cudaDriverEntryPointQueryResult q{};
      void *fn = nullptr;
      if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
          q == cudaDriverEntryPointSuccess)
        r.write = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(fn);
      fn = nullptr;
      if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
          q == cudaDriverEntryPointSuccess)
        r.wait = reinterpret_cast<PFN_cuStreamWaitValue32_v11070>(fn);
      (void)cudaGetLastError();
      return r;
    }();
    return m;
  }
};

std::string describe(const char *what, CUresult r) {
  return std::string(what) + " failed (CUresult " + std::to_string(int(r)) + ")";
}

} // namespace

bool streamMemOpsAvailable() {
  const MemOps &m = MemOps::get();
  return m.write != nullptr && m.wait != nullptr;
}

std::string streamWriteValue32(cudaStream_t stream, void *addr, uint32_t value) {
  const MemOps &m = MemOps::get();
  if (!m.write) return "cuStreamWriteValue32 is not available from this driver";
  const CUresult r = m.write(stream, reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WRITE_VALUE_DEFAULT);
  return r == CUDA_SUCCESS ? std::string() : describe("cuStreamWriteValue32", r);
}

std::string streamWaitValue32Geq(cudaStream_t stream, const void *addr, uint32_t value) {
  const MemOps &m = MemOps::get();
  if (!m.wait) return "cuStreamWaitValue32 is not available from this driver";
  const CUresult r = m.wait(stream, reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WAIT_VALUE_GEQ);
  return r == CUDA_SUCCESS ? std::string() : describe("cuStreamWaitValue32", r);
}

} // namespace purlin
