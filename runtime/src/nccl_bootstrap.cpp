/// @file nccl_bootstrap.cpp
/// @brief NcclBootstrap: allGather through an existing NCCL communicator on a
/// private stream of the communicator's device, then a copy to the host; and
/// checkNccl. The only NCCL user of the runtime: libpurlin.so leaves this
/// file out (generated/CMakeLists.txt) so that it does not load a libnccl
/// that could clash with the one a process (PyTorch) brings.
#include <cuda_runtime.h>
#include <nccl.h>

#include "purlin/host/bootstrap.h"
#include "device_scope.h"

namespace purlin {
using detail::DeviceScope;

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

NcclBootstrap::NcclBootstrap(ncclComm_t comm) : comm_(comm) {
  if (!comm)
    PURLIN_THROW(Status::InvalidArgument, "NcclBootstrap: null ncclComm_t");
  PURLIN_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
  PURLIN_NCCL_CHECK(ncclCommCount(comm_, &size_));
  int device = 0;
  PURLIN_NCCL_CHECK(ncclCommCuDevice(comm_, &device));
  DeviceScope scope(device);
  cudaStream_t s = nullptr;
  PURLIN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
}

NcclBootstrap::~NcclBootstrap() {
  if (stream_)
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void NcclBootstrap::allGather(const void *mine, void *all, std::size_t bytes) {
  if (bytes == 0)
    return;
  int device = 0;
  PURLIN_NCCL_CHECK(ncclCommCuDevice(comm_, &device));
  DeviceScope scope(device);
  auto stream = static_cast<cudaStream_t>(stream_);
  const std::size_t total = bytes * static_cast<std::size_t>(size_);
  void *buf = nullptr;
  PURLIN_CUDA_CHECK(cudaMalloc(&buf, total));
  struct Free { void *p; ~Free() { (void)cudaFree(p); } } release{buf};
  auto *mineDev = static_cast<char *>(buf) + bytes * rank_;
  PURLIN_CUDA_CHECK(cudaMemcpyAsync(mineDev, mine, bytes, cudaMemcpyHostToDevice, stream));
  PURLIN_NCCL_CHECK(ncclAllGather(mineDev, buf, bytes, ncclChar, comm_, stream));
  PURLIN_CUDA_CHECK(cudaMemcpyAsync(all, buf, total, cudaMemcpyDeviceToHost, stream));
  PURLIN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace purlin
