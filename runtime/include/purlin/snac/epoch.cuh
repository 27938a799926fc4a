/// @file epoch.cuh
/// @brief Per-call epochs kept on the device (paper §4.2): every CTA reads
/// the epoch at kernel start; the last CTA out advances it. Nothing happens
/// on the host per call, so calls can be captured in CUDA graphs and
/// replayed. Calls on one communicator are stream-ordered (like NCCL).
#pragma once

#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/device_comm.h"

namespace purlin::snac {

/// CTA-collective: the epoch of the current call (>= 1), same in every thread.
__device__ __forceinline__ uint64_t ctaBeginCall(const DeviceComm& dc) {
  __shared__ uint64_t epoch;
  if (threadIdx.x == 0) epoch = *reinterpret_cast<volatile uint64_t*>(&dc.state->epoch);
  __syncthreads();
  return epoch;
}

/// CTA-collective, called once by every CTA of the grid at its very end
/// (also after a checked-mode abort): the last CTA to arrive resets the
/// finish counter and stores epoch + 1 for the next call (the kernel
/// boundary publishes it to the next kernel of the stream).
__device__ __forceinline__ void ctaEndCall(const DeviceComm& dc, uint64_t epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t old = arch::atomAddAcqRelGpu(&dc.state->finishCounter, 1u);
    if (old == gridDim.x - 1) {
      dc.state->finishCounter = 0;
      *reinterpret_cast<volatile uint64_t*>(&dc.state->epoch) = epoch + 1;
      __threadfence();
    }
  }
}

} // namespace purlin::snac
