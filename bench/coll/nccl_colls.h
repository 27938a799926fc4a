/// @file nccl_colls.h
/// @brief The NCCL side of the comparison: one call of each benchmarked
/// collective on bf16 data (AllToAll as grouped ncclSend/ncclRecv), with the
/// same count conventions as coll_shape.h.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "coll_shape.h"

namespace purlin {
class Bootstrap;
}

namespace purlin::bench {

/// Creates an NCCL communicator for the ranks of `boot` on the current
/// device (rank 0's unique id is distributed through the bootstrap).
/// Throws purlin::Error on failure.
ncclComm_t createNcclComm(Bootstrap &boot);

/// Enqueues one call of `c` on `stream`: `in`/`out` hold shapeOf(c, ...)
/// elements of bf16. Reductions sum. Throws purlin::Error on failure.
void ncclCall(ncclComm_t comm, Coll c, const Shape &s, const void *in, void *out,
              cudaStream_t stream);

} // namespace purlin::bench
