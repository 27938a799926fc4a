/// @file purlin_colls.h
/// @brief The Purlin side of the comparison: one call of each benchmarked
/// collective through the API users get, and the CTA count Purlin's policy
/// assigns to it (for the record; the benchmark also reads the grid sizes
/// from the captured graph).
#pragma once

#include <cuda_runtime_api.h>

#include "coll_shape.h"

namespace purlin {
class Communicator;
}

namespace purlin::bench {

/// Enqueues one call of `c` on `stream` with the sm_90 default policy
/// (bf16, sum for reductions). Throws purlin::Error on a failed status.
void purlinCall(Communicator &comm, Coll c, const Shape &s, const void *in, void *out,
                cudaStream_t stream);

/// Where the code behind purlinCall comes from, for the run log.
const char *purlinApiName();

} // namespace purlin::bench
