/// @file nccl_bootstrap.cpp
/// @brief NcclBootstrap: allGather through an existing NCCL communicator on a
/// private stream of the communicator's device, then a copy to the host.
#include <cuda_runtime.h>
#include <nccl.h>

#include "purlin/host/bootstrap.h"
#include "device_scope.h"

namespace purlin {
using detail::DeviceScope;

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
