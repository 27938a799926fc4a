/// @file graph_timer.h
/// @brief The paper's timing method: capture `calls` invocations of one
/// operation in a CUDA graph, replay once to warm up, time `reps` replays
/// with CUDA events, microseconds per invocation, maximum over ranks;
/// repeated `samples` times (median, min, max: stats.h).
/// Also reads the largest grid (CTAs) of any kernel the graph launches.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

#include "timing_config.h"

namespace purlin {
class Bootstrap;
}

namespace purlin::bench {

/// Issues one invocation of the measured operation on `stream`. May throw
/// (the capture is then ended and the error re-thrown).
using Enqueue = std::function<void(cudaStream_t stream)>;

struct GraphTiming {
  double usPerCall = 0;  ///< median over the samples of max over ranks of (replay time / (calls*reps))
  double usMin = 0, usMax = 0;  ///< the fastest and slowest sample
  int samples = 0;       ///< repetitions the figures are over
  int maxCtas = 0;       ///< largest gridDim (x*y*z) of a kernel node, this rank
};


/// Captures, warms up, times. Collective over `boot` (every rank must call it
/// with the same config). Throws purlin::Error on CUDA errors and on a
/// timeout (a hung kernel), naming `what`.
GraphTiming timeInGraph(const Enqueue &enqueue, cudaStream_t stream,
                        const TimingConfig &cfg, Bootstrap &boot,
                        const std::string &what);

/// The same figures for eager calls: after one warm-up call, each sample
/// issues calls*reps invocations back to back on `stream` (no graph: the
/// host's launch cost is part of what is measured) between two events.
/// maxCtas is 0. Collective over `boot`; throws as timeInGraph.
GraphTiming timeEager(const Enqueue &enqueue, cudaStream_t stream, const TimingConfig &cfg, Bootstrap &boot,
                      const std::string &what);

/// Enqueues an empty kernel (one CTA, no programmatic dependent launch) on
/// `stream`: the separator of the PDL-neutral timing mode, put between
/// every two timed calls of every library alike (separator.cu).
void launchSeparator(cudaStream_t stream);

/// Waits for `stream` for at most `timeoutS` seconds. Throws
/// Error(Timeout, "<what>: ...") if it has not finished by then (the GPU
/// work is then still running; the caller should report and exit).
void syncWithTimeout(cudaStream_t stream, double timeoutS, const std::string &what);

/// The maximum of `v` over all ranks of `boot` (collective).
double maxOverRanks(Bootstrap &boot, double v);
/// The sum of `v` over all ranks of `boot` (collective).
long long sumOverRanks(Bootstrap &boot, long long v);

} // namespace purlin::bench
