/// @file coll_test_common.cuh
/// @brief The harness (coll_test_base.cuh) with the four unrooted
/// collectives (coll_launch.cuh: their types and launchColl, whose device
/// programs the colltest_programs library holds) and their references.
#pragma once

#include "coll_test_base.cuh"

#include "coll_launch.cuh"

namespace colltest {

/// Rank r's expected output element i of collective c over n ranks with
/// `count` elements per block (inputs from fill(seed, rank)): copies exact,
/// reductions the fp32 ascending-rank reference rounded once.
inline void expectedElem(Coll c, DType t, RedOp op, std::size_t count, int n, int r, uint32_t seed, std::size_t i,
                         std::byte* want) {
  switch (c) {
    case Coll::AllGather: fromFloat(t, inputValue(seed, uint32_t(i / count), i % count), want); return;
    case Coll::AllToAll: fromFloat(t, inputValue(seed, uint32_t(i / count), r * count + i % count), want); return;
    case Coll::ReduceScatter:
    case Coll::AllReduce: {
      const std::size_t at = c == Coll::ReduceScatter ? r * count + i : i;
      float acc = inputValue(seed, 0, at);
      for (int p = 1; p < n; ++p) acc = hostOp(op, acc, inputValue(seed, uint32_t(p), at));
      fromFloat(t, acc, want);
      return;
    }
  }
}

/// Elements of a rank's input and output for collective c.
inline std::size_t inElems(Coll c, int n, std::size_t count) {
  return c == Coll::AllGather || c == Coll::AllReduce ? count : std::size_t(n) * count;
}
inline std::size_t outElems(Coll c, int n, std::size_t count) {
  return c == Coll::ReduceScatter || c == Coll::AllReduce ? count : std::size_t(n) * count;
}

} // namespace colltest
