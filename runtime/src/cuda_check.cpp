/// @file cuda_check.cpp
/// @brief checkCuda / checkNccl: turn failed CUDA and NCCL results into
/// purlin::Error with the call, the error's name and message, and file:line.
#include <nccl.h>

#include "purlin/host/error.h"

namespace purlin {

void checkCuda(cudaError_t result, const char *what, const char *file,
               int line) {
  if (result == cudaSuccess)
    return;
  // Clear the per-thread last error so a recoverable failure (e.g. a bad
  // device index, out of memory) does not resurface in unrelated calls.
  (void)cudaGetLastError();
  std::string msg = std::string(what) + ": " + cudaGetErrorName(result) + " (" +
                    cudaGetErrorString(result) + ")";
  throw Error(Status::CudaError, where(msg, file, line));
}

void checkNccl(int result, const char *what, const char *file, int line) {
  if (result == ncclSuccess)
    return;
  auto r = static_cast<ncclResult_t>(result);
  std::string msg = std::string(what) + ": nccl error " + std::to_string(result) +
                    " (" + ncclGetErrorString(r) + ")";
  Status s = r == ncclUnhandledCudaError ? Status::CudaError
             : r == ncclInvalidArgument || r == ncclInvalidUsage
                 ? Status::InvalidArgument
                 : Status::BootstrapError;
  throw Error(s, where(msg, file, line));
}

} // namespace purlin
