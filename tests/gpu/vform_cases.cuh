/// @file vform_cases.cuh
/// @brief The V collectives' test cases (AllGatherV, ReduceScatterV,
/// AllToAllV) and their host references, shared by vform_test (counts on
/// the host) and device_counts_test (the same cases with the counts in
/// device memory): count arrays and matrices, layouts, the expected output
/// element by element, the launch through the generated programs.
#pragma once

#include <numeric>

#include "coll_test_base.cuh"

// The generated programs (kernels in purlin_generated), launched with the
// harness's policies.
#include "allgatherv.programs.h"
#include "alltoallv.programs.h"
#include "reducescatterv.programs.h"

namespace vcases {

using namespace colltest;
using namespace purlin::gen;

enum class VColl { AllGatherV, ReduceScatterV, AllToAllV };
const char* name(VColl c) {
  return c == VColl::AllGatherV ? "AllGatherV" : c == VColl::ReduceScatterV ? "ReduceScatterV" : "AllToAllV";
}

template <class P>
Status launchV(VColl c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s) {
  switch (c) {
    case VColl::AllGatherV: return sn::launch<allGatherV_Collective, P, Datapath, allGatherV_Programs>(comm, a, s);
    case VColl::ReduceScatterV:
      return sn::launch<reduceScatterV_Collective, P, Datapath, reduceScatterV_Programs>(comm, a, s);
    case VColl::AllToAllV: return sn::launch<allToAllV_Collective, P, Datapath, allToAllV_Programs>(comm, a, s);
  }
  return Status::Internal;
}

struct Case {
  VColl c;
  DType t;
  RedOp op;
  std::vector<std::size_t> counts;  ///< counts[n], the same on every rank (AllToAllV: unused)
  const char* shape;                ///< what the counts are, for the verdict line
  bool tput = false;     ///< PTput (no latency program)
  bool graph = false;    ///< captured, replayed, refilled, replayed again
  bool inPlace = false;  ///< in == out + displ[rank] (AllGatherV), out == in + displ[rank] (ReduceScatterV)
  bool skew = false;     ///< pointers one element past a 16-byte boundary
  std::vector<std::vector<std::size_t>> m = {};  ///< AllToAllV: m[p][q] elements p sends q
  std::size_t maxCount = 0;                      ///< AllToAllV: the bound (>= every m[p][q])
};

std::size_t total(const Case& k) { return std::accumulate(k.counts.begin(), k.counts.end(), std::size_t(0)); }
std::size_t displ(const Case& k, int p) {
  return std::accumulate(k.counts.begin(), k.counts.begin() + p, std::size_t(0));
}
/// AllToAllV's layout on rank r: blocks to peers in rank order with a gap
/// of 3 elements after each; blocks from peers in descending rank order
/// with a gap of 2 (MPI's displacements, not prefix sums).
constexpr std::size_t kSendGap = 3, kRecvGap = 2;
std::size_t sendDispl(const Case& k, int r, int q) {
  std::size_t d = 0;
  for (int j = 0; j < q; ++j) d += k.m[r][j] + kSendGap;
  return d;
}
std::size_t recvDispl(const Case& k, int r, int p) {
  std::size_t d = 0;
  for (int j = int(k.m.size()) - 1; j > p; --j) d += k.m[j][r] + kRecvGap;
  return d;
}
/// Elements of rank r's input and output.
std::size_t inElems(const Case& k, int r) {
  if (k.c == VColl::AllToAllV) return sendDispl(k, r, int(k.m.size()));
  return k.c == VColl::AllGatherV ? k.counts[r] : total(k);
}
std::size_t outElems(const Case& k, int r) {
  if (k.c == VColl::AllToAllV) return recvDispl(k, r, -1);
  return k.c == VColl::AllGatherV ? total(k) : k.counts[r];
}

/// Rank r's expected output element i (host reference): AllGatherV's
/// element i is rank p's input element i - displ[p]; ReduceScatterV's the
/// ascending-rank fp32 reduction of element displ[r] + i of every input;
/// AllToAllV's block from p is p's block to r; its gaps keep the 0xCD
/// sentinel (false: element i is a gap).
bool expected(const Case& k, int n, int r, uint32_t seed, std::size_t i, std::byte* want) {
  if (k.c == VColl::AllToAllV) {
    for (int p = 0; p < n; ++p) {
      const std::size_t at = recvDispl(k, r, p);
      if (i >= at && i < at + k.m[p][r]) {
        fromFloat(k.t, inputValue(seed, uint32_t(p), sendDispl(k, p, r) + (i - at)), want);
        return true;
      }
    }
    std::memset(want, 0xCD, 4);
    return false;
  }
  if (k.c == VColl::AllGatherV) {
    int p = 0;
    while (i >= displ(k, p + 1)) ++p;
    fromFloat(k.t, inputValue(seed, uint32_t(p), i - displ(k, p)), want);
    return true;
  }
  const std::size_t j = displ(k, r) + i;
  float acc = inputValue(seed, 0, j);
  for (int p = 1; p < n; ++p) acc = hostOp(k.op, acc, inputValue(seed, uint32_t(p), j));
  fromFloat(k.t, acc, want);
  return true;
}

/// The count arrays for n ranks (elements; bf16 unless a case says otherwise).
struct Shape {
  const char* what;
  std::vector<std::size_t> counts;
};
std::vector<Shape> shapes(int n) {
  std::vector<Shape> s;
  auto fill = [&](const char* what, auto f) {
    std::vector<std::size_t> c(n);
    for (int p = 0; p < n; ++p) c[p] = f(p);
    s.push_back({what, c});
  };
  static const std::size_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31};
  fill("zeros between", [](int p) { return p % 2 ? std::size_t(1000 + 37 * p) : std::size_t(0); });
  fill("one rank only", [n](int p) { return p == n - 1 ? std::size_t(5003) : std::size_t(0); });
  fill("first rank only", [](int p) { return p == 0 ? std::size_t(1) : std::size_t(0); });
  fill("one large, many small", [](int p) { return p == 0 ? std::size_t(300007) : std::size_t(3 * p + 1); });
  fill("primes", [](int p) { return primes[p]; });
  fill("all ones", [](int) { return std::size_t(1); });
  fill("all zero", [](int) { return std::size_t(0); });
  // PAuto's crossover: 256 KiB messages for n > 2, 512 KiB for n = 2 (bf16:
  // half as many elements); the total exactly at it (latency) and one
  // element above (throughput).
  const std::size_t cross = (n == 2 ? 512u : 256u) << 10, elems = cross / 2;
  for (std::size_t extra : {std::size_t(0), std::size_t(1)}) {
    std::vector<std::size_t> c(n, elems / std::size_t(n));
    c[0] += elems - c[0] * std::size_t(n) + extra;
    s.push_back({extra ? "crossover + 1" : "at the crossover", c});
  }
  // One partition beyond the 4 MiB staging half of rankMain: cyclic slots.
  fill("one beyond the staging", [n](int p) { return p == 1 % n ? (std::size_t(3) << 20) + 11 : std::size_t(5 + p); });
  return s;
}

/// AllToAllV's count matrices for n ranks, and their bound.
struct Matrix {
  const char* what;
  std::vector<std::vector<std::size_t>> m;
  std::size_t maxCount;
};
std::vector<Matrix> matrices(int n) {
  std::vector<Matrix> s;
  auto make = [&](const char* what, auto f, std::size_t bound = 0) {
    std::vector<std::vector<std::size_t>> m(n, std::vector<std::size_t>(n));
    std::size_t most = 0;
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) most = std::max(most, m[p][q] = f(p, q));
    s.push_back({what, m, std::max(bound, most)});
  };
  static const std::size_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31};
  make("zeros between", [](int p, int q) { return (p + q) % 3 == 0 ? std::size_t(0) : std::size_t(100 + 7 * p + q); });
  make("one sender", [n](int p, int q) { return p == n - 1 ? std::size_t(4099 + q) : std::size_t(0); });
  make("rotated skew", [n](int p, int q) { return std::size_t(64) * std::size_t(1 + (q - p - 1 + 2 * n) % n); });
  make("primes", [](int p, int q) { return primes[(p + q) % 8]; });
  make("all zero, bound 5", [](int, int) { return std::size_t(0); }, 5);
  make("small counts, bound 200000", [](int p, int q) { return std::size_t(1 + p + 2 * q); }, 200000);
  // PAuto's crossover: n*maxCount*E at it (latency) and one element above.
  const std::size_t cross = (n == 2 ? 512u : 256u) << 10;
  const std::size_t at = cross / 2 / std::size_t(n);
  make("at the crossover", [at](int p, int q) { return (p + q) % 2 ? at : at / 3; }, at);
  make("crossover + 1", [at](int p, int q) { return (p + q) % 2 ? at + 1 : at / 3; });
  make("one beyond the staging", [n](int p, int q) {
    return p == 0 && q == 1 % n ? (std::size_t(3) << 20) + 11 : std::size_t(5 + p + q);
  });
  return s;
}

std::vector<Case> cases(int n) {
  std::vector<Case> cs;
  for (const Matrix& mx : matrices(n))
    for (bool tput : {false, true}) {
      Case k{VColl::AllToAllV, DType::BF16, RedOp::Sum, {}, mx.what, tput};
      k.m = mx.m;
      k.maxCount = mx.maxCount;
      cs.push_back(k);
    }
  {
    const std::vector<Matrix> mx = matrices(n);
    for (int v = 0; v < 3; ++v) {
      // graph (latency), graph (throughput), skewed
      Case k{VColl::AllToAllV, v == 1 ? DType::F16 : DType::F32, RedOp::Sum, {}, mx[v].what, v == 1, v < 2, false, v == 2};
      k.m = mx[v].m;
      k.maxCount = mx[v].maxCount;
      cs.push_back(k);
    }
  }
  for (VColl c : {VColl::AllGatherV, VColl::ReduceScatterV}) {
    for (const Shape& sh : shapes(n)) {
      cs.push_back({c, DType::BF16, RedOp::Sum, sh.counts, sh.what});
      cs.push_back({c, DType::BF16, RedOp::Sum, sh.counts, sh.what, true});
    }
    const std::vector<Shape> s = shapes(n);
    cs.push_back({c, DType::F32, RedOp::Max, s[0].counts, s[0].what, false, true});          // graph, latency
    cs.push_back({c, DType::F16, RedOp::Min, s[3].counts, s[3].what, true, true});           // graph, throughput
    cs.push_back({c, DType::BF16, RedOp::Sum, s[4].counts, s[4].what, false, false, false, true});  // skewed
    cs.push_back({c, DType::BF16, RedOp::Sum, s[3].counts, s[3].what, true, false, false, true});
    cs.push_back({c, DType::BF16, RedOp::Sum, s[0].counts, s[0].what, false, false, true});  // in place
    cs.push_back({c, DType::F32, RedOp::Sum, s[3].counts, s[3].what, true, true, true});
  }
  return cs;
}

/// Rank r's count and displacement arrays of an AllToAllV case (its row
/// and column of the matrix) and the CallArgs that point at them.
struct A2AArrays {
  std::vector<std::size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};
void setSizes(const Case& k, int n, int r, A2AArrays& v, sn::CallArgs& a) {
  if (k.c != VColl::AllToAllV) {
    a.counts = k.counts.data();
    return;
  }
  for (int q = 0; q < n; ++q) {
    v.sendCounts.push_back(k.m[r][q]);
    v.sendDispls.push_back(sendDispl(k, r, q));
    v.recvCounts.push_back(k.m[q][r]);
    v.recvDispls.push_back(recvDispl(k, r, q));
  }
  a.sendCounts = v.sendCounts.data();
  a.sendDispls = v.sendDispls.data();
  a.recvCounts = v.recvCounts.data();
  a.recvDispls = v.recvDispls.data();
  a.maxCount = k.maxCount;
}

/// One call of case k (graph: captured, replayed; the caller refills and
/// replays again through `exec`).
template <class P>
Status runCall(const Case& k, Communicator& comm, const sn::CallArgs& a, cudaStream_t s, cudaGraphExec_t* exec) {
  return launchOrCapture(k.graph, s, exec, [&] { return launchV<P>(k.c, comm, a, s); });
}

/// Compares rank r's output with the reference; "" or the first mismatch.
std::string check(const Case& k, int n, int r, uint32_t seed, const std::byte* out, std::size_t outE) {
  return firstMismatch(k.t, out, outE, [&](std::size_t i, std::byte* want) { return expected(k, n, r, seed, i, want); });
}

} // namespace vcases
