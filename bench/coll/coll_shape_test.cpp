/// @file coll_shape_test.cpp
/// @brief Unit tests of coll_shape.h: the names and short forms of every
/// benchmarked collective, and the element counts of a call per message
/// size (the V forms' split adds up to the message; the buffers hold every
/// rank's share; AllToAllV's rotated rows and columns agree).
#include <catch2/catch.hpp>

#include "coll_shape.h"

using namespace purlin::bench;

TEST_CASE("every benchmarked collective parses by name and short form") {
  for (int i = 0; i < kNumColls; ++i) {
    Coll c;
    REQUIRE(parseColl(collName(Coll(i)), c));
    CHECK(c == Coll(i));
  }
  Coll c;
  REQUIRE(parseColl("agv", c));
  CHECK(c == Coll::AllGatherV);
  REQUIRE(parseColl("rsv", c));
  CHECK(c == Coll::ReduceScatterV);
  REQUIRE(parseColl("a2av", c));
  CHECK(c == Coll::AllToAllV);
  CHECK_FALSE(parseColl("a2avv", c));
  CHECK(isVariable(Coll::AllGatherV));
  CHECK_FALSE(isRooted(Coll::ReduceScatterV));
  CHECK(isRooted(Coll::Gather));
  CHECK(isReduction(Coll::ReduceScatterV));
}

TEST_CASE("the V forms take the paper's Zipf split of the message (Eq. 4)") {
  // 8 ranks, 1 MiB: units of max(128, 2^20/64) = 16 KiB; 64 units, x_r
  // falling with r; the largest share about 1.125x the mean (§C.4).
  Shape s = shapeOf(Coll::AllGatherV, std::size_t(1) << 20, 8);
  std::size_t sum = 0;
  for (int p = 0; p < 8; ++p) {
    CHECK(s.counts[p] * kElemBytes % (16u << 10) == 0);
    if (p) CHECK(s.counts[p] <= s.counts[p - 1]);
    sum += s.counts[p];
  }
  CHECK(sum * kElemBytes == (std::size_t(1) << 20));
  CHECK(double(s.counts[0]) / (double(sum) / 8) == Approx(1.125).epsilon(0.01));
  // Totals below one unit per rank split evenly.
  s = shapeOf(Coll::AllGatherV, 1024, 8);
  for (int p = 0; p < 8; ++p) CHECK(s.counts[p] == 64);
  for (int n : {2, 3, 5, 8})
    for (std::size_t bytes : {std::size_t(1) << 10, std::size_t(3) << 20, std::size_t(1) << 30}) {
      const Shape g = shapeOf(Coll::AllGatherV, bytes, n), r = shapeOf(Coll::ReduceScatterV, bytes, n);
      const Shape a = shapeOf(Coll::AllToAllV, bytes, n);
      std::size_t total = 0;
      for (int p = 0; p < n; ++p) {
        total += g.counts[p];
        CHECK(g.counts[p] <= g.inElems);  // every rank's input fits
        CHECK(outElemsOn(Coll::ReduceScatterV, r, p) == r.counts[p]);
      }
      CHECK(total == g.outElems);
      CHECK(total * kElemBytes <= bytes);
      CHECK(displOf(g, n) == total);
      CHECK(r.inElems == total);
      CHECK(r.msgBytes == g.msgBytes);
      // AllToAllV: every rank sends and receives the total; what p sends q
      // is what q receives from p; the bound covers every count.
      for (int rank = 0; rank < n; ++rank) {
        const A2AVArrays x = a2avArrays(a, rank);
        std::size_t sent = 0, got = 0;
        for (int q = 0; q < n; ++q) {
          sent += x.sendCounts[q];
          got += x.recvCounts[q];
          CHECK(x.recvCounts[q] == a2avArrays(a, q).sendCounts[rank]);
          CHECK(x.sendCounts[q] <= a.maxCount);
        }
        CHECK(sent == total);
        CHECK(got == total);
        CHECK(x.sendDispls[n - 1] + x.sendCounts[n - 1] <= a.inElems);
        CHECK(x.recvDispls[n - 1] + x.recvCounts[n - 1] <= a.outElems);
      }
    }
}
