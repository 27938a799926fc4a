/// @file tune_launch.h
/// @brief The tuner's view of Purlin: a call of one of the eleven collectives
/// with run-time policy knobs (snac::WorldConsts) and one of a few
/// compiled-in Atom pipeline variants (stages x stage bytes are template
/// parameters of the kernels, so each variant is its own instantiation).
#pragma once

#include <cuda_runtime_api.h>

#include "coll_shape.h"
#include "purlin/snac/plan.h"

namespace purlin {
class Communicator;
}

namespace purlin::bench {

/// One compiled-in Atom pipeline setting.
struct PipelineVariant {
  int stages;      ///< pipeline depth S
  int stageBytes;  ///< bytes per stage B
};

/// Number of compiled-in variants and variant i (0 <= i < numVariants()).
int numVariants();
PipelineVariant variant(int i);

/// Staging bytes (one half) the tuner's policies use.
std::size_t tuneStagingBytes();

/// Enqueues one bf16 (sum) call of `c` with knobs `world` and pipeline
/// variant `v`. Throws purlin::Error with the runtime's message if the call
/// is rejected (e.g. knobs the plan refuses).
void tunedCall(Communicator &comm, Coll c, const Shape &s, const void *in, void *out,
               cudaStream_t stream, const snac::WorldConsts &world, int v);

} // namespace purlin::bench
