/// @file timing_config.h
/// @brief How a benchmark row is timed (graph_timer.h), apart from CUDA so
/// that argument parsing is tested on the CPU (bench_args.h).
#pragma once

namespace purlin::bench {

struct TimingConfig {
  int calls = 128;       ///< invocations captured in one graph
  int reps = 8;          ///< timed replays per sample
  int samples = 5;       ///< repetitions (each `reps` replays, after a barrier): median, min, max
  double timeoutS = 60;  ///< a replay that does not finish in this time is a hang
};

} // namespace purlin::bench
