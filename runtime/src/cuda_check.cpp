/// @file cuda_check.cpp
/// @brief checkCuda: turns a failed CUDA result into purlin::Error with the
/// call, the error's name and message, and file:line. (checkNccl is in
/// nccl_bootstrap.cpp, the runtime's only NCCL user, so that libpurlin.so,
/// which leaves it out, does not depend on libnccl.)
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

} // namespace purlin
