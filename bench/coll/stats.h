/// @file stats.h
/// @brief The statistics of the benchmark's rows: the median, minimum and
/// maximum of a row's repetitions (each repetition one graph-timed figure,
/// the maximum over ranks), and NCCL's bus-bandwidth factor per collective
/// (nccl-tests' convention: busbw = algbw * factor), so that rows of
/// different collectives compare against one link ceiling.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "coll_shape.h"

namespace purlin::bench {

struct SampleStats {
  double median = NAN, min = NAN, max = NAN;
  int count = 0;
};

/// Median (the mean of the two middle values for an even count), minimum
/// and maximum of `xs`; NaN for none. A NaN sample makes every figure NaN
/// (a failed repetition is not averaged away).
inline SampleStats statsOf(std::vector<double> xs) {
  SampleStats s;
  s.count = int(xs.size());
  if (xs.empty()) return s;
  for (double x : xs)
    if (std::isnan(x)) return s;
  std::sort(xs.begin(), xs.end());
  const std::size_t m = xs.size() / 2;
  s.median = xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
  s.min = xs.front();
  s.max = xs.back();
  return s;
}

/// busbw / algbw for collective `c` on `n` ranks: 2(n-1)/n for AllReduce
/// (every byte crosses a link twice), 1 for Broadcast and Reduce, (n-1)/n
/// for the others (each rank's own block does not travel).
inline double busFactor(Coll c, int n) {
  const double f = double(n - 1) / double(n);
  switch (c) {
  case Coll::AllReduce: return 2 * f;
  case Coll::Broadcast:
  case Coll::Reduce: return 1;
  default: return f;
  }
}

} // namespace purlin::bench
