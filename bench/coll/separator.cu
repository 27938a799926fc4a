/// @file separator.cu
/// @brief The PDL-neutral timing mode's separator (graph_timer.h
/// launchSeparator): an empty kernel launched without programmatic
/// dependent launch between two timed calls, so no library's call can
/// overlap its predecessor's tail (Purlin's latency kernels chain with PDL;
/// NCCL's do not).
#include "graph_timer.h"

#include "purlin/host/error.h"

namespace purlin::bench {
namespace {
__global__ void separatorKernel() {}
} // namespace

void launchSeparator(cudaStream_t stream) {
  separatorKernel<<<1, 32, 0, stream>>>();
  PURLIN_CUDA_CHECK(cudaGetLastError());
}

} // namespace purlin::bench
