/// @file stream_memops.cpp
/// @brief purlin/host/stream_memops.h: the driver entry point, resolved once.
#include "purlin/host/stream_memops.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "driver_entry.h"

namespace purlin {
namespace {

PFN_cuStreamWriteValue32_v11070 writeValue32() {
  static const auto fn = detail::driverEntryPoint<PFN_cuStreamWriteValue32_v11070>("cuStreamWriteValue32");
  return fn;
}

} // namespace

bool streamMemOpsAvailable() { return writeValue32() != nullptr; }

std::string streamWriteValue32(cudaStream_t stream, void *addr, uint32_t value) {
  const auto write = writeValue32();
  if (!write) return "cuStreamWriteValue32 is not available from this driver";
  const CUresult r = write(stream, reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WRITE_VALUE_DEFAULT);
  return r == CUDA_SUCCESS ? std::string() : "cuStreamWriteValue32 failed (CUresult " + std::to_string(int(r)) + ")";
}

} // namespace purlin
