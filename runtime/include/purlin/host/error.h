/// @file error.h
/// @brief purlin::Error, the one exception type of the host runtime, and the
/// CUDA/NCCL result checks that throw it with what failed and where.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "purlin/types.h"

namespace purlin {

/// An error of the runtime: a status code (as the C ABI reports it) plus a
/// message saying what failed and where. Never thrown across the C ABI.
class Error : public std::runtime_error {
public:
  Error(Status status, std::string what);
  Status status() const noexcept { return status_; }

private:
  Status status_;
};

/// Throws Error(CudaError, "<what>: cudaErrorX (message) at file:line") when
/// `result` is not cudaSuccess. Also clears CUDA's sticky last error for
/// non-sticky failures (cudaGetLastError) so later calls are not confused.
void checkCuda(cudaError_t result, const char *what, const char *file,
               int line);

/// Throws Error(BootstrapError or CudaError, "<what>: ncclX (message) at
/// file:line") when `result` (an ncclResult_t as int) is not ncclSuccess.
void checkNccl(int result, const char *what, const char *file, int line);

/// Builds "<what> at file:line" for messages of thrown errors.
std::string where(const std::string &what, const char *file, int line);

} // namespace purlin

/// Checks a CUDA runtime call; the call's text is the `what` of the error.
#define PURLIN_CUDA_CHECK(call)                                                \
  ::purlin::checkCuda((call), #call, __FILE__, __LINE__)
/// Checks an NCCL call; the call's text is the `what` of the error.
#define PURLIN_NCCL_CHECK(call)                                                \
  ::purlin::checkNccl(static_cast<int>(call), #call, __FILE__, __LINE__)
/// Throws Error(status, message at file:line).
#define PURLIN_THROW(status, message)                                          \
  throw ::purlin::Error((status), ::purlin::where((message), __FILE__, __LINE__))
