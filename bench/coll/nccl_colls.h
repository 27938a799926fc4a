/// @file nccl_colls.h
/// @brief The NCCL side of the comparison: one call of each benchmarked
/// collective on bf16 data (AllToAll as grouped ncclSend/ncclRecv), with the
/// same count conventions as coll_shape.h.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "bench_modes.h"
#include "coll_shape.h"

namespace purlin {
class Bootstrap;
}

namespace purlin::bench {

/// Creates an NCCL communicator for the ranks of `boot` on the current
/// device (rank 0's unique id is distributed through the bootstrap).
/// Throws purlin::Error on failure.
ncclComm_t createNcclComm(Bootstrap &boot);
/// The same for an NCCL mode: LegacyRegister sets NCCL_LEGACY_CUDA_REGISTER=1
/// first (NCCL reads it once per process: use one mode per process),
/// CopyEngine creates the communicator with CTAPolicy = NCCL_CTA_POLICY_ZERO.
ncclComm_t createNcclComm(Bootstrap &boot, NcclMode mode);

/// NCCL's input and output buffers for a mode: cudaMalloc, or ncclMemAlloc
/// registered as symmetric windows (collective: every rank, same bytes).
struct NcclBuffers {
  NcclBuffers(ncclComm_t comm, NcclMode mode, std::size_t bytes);
  ~NcclBuffers();
  NcclBuffers(const NcclBuffers &) = delete;
  NcclBuffers &operator=(const NcclBuffers &) = delete;
  void *in = nullptr, *out = nullptr;

private:
  ncclComm_t comm_;
  bool windows_;
  ncclWindow_t inWin_ = nullptr, outWin_ = nullptr;
};

/// Enqueues one call of `c` on `stream`: `in`/`out` hold shapeOf(c, ...)
/// elements of bf16. Reductions sum. Throws purlin::Error on failure.
/// `alltoall`: AllToAll as ncclAlltoAll (the symmetric modes) instead of
/// grouped send/recv.
void ncclCall(ncclComm_t comm, Coll c, const Shape &s, const void *in, void *out,
              cudaStream_t stream, bool alltoall = false);

} // namespace purlin::bench
