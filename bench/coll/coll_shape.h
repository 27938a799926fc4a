/// @file coll_shape.h
/// @brief The benchmarked collectives and how a nominal message size maps
/// onto per-rank element counts and buffer sizes (the paper's and the
/// baseline's convention: message = gathered output for AllGather and
/// Gather, the root's input for Scatter, input per rank for the others;
/// bf16 elements throughout). The rooted ones run with root 0 (kRoot);
/// the V forms with the paper's split (§C.4, Eq. 4: a Zipf split of the
/// total T with exponent 0.125 in 128-byte units), message = T: AllGatherV's
/// gathered output, ReduceScatterV's input, AllToAllV's bytes each rank
/// sends (its vector rotated right by rank+1, so every rank also receives T).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin::bench {

enum class Coll : int {
  AllGather = 0, ReduceScatter = 1, AllReduce = 2, AllToAll = 3,
  Broadcast = 4, Reduce = 5, Scatter = 6, Gather = 7, AllGatherV = 8, ReduceScatterV = 9, AllToAllV = 10
};
inline constexpr int kNumColls = 11;
inline constexpr int kMaxBenchRanks = 8;
inline constexpr std::size_t kElemBytes = 2; ///< bf16
inline constexpr int kRoot = 0;              ///< the root of the rooted collectives

inline const char *collName(Coll c) {
  switch (c) {
  case Coll::AllGather: return "AllGather";
  case Coll::ReduceScatter: return "ReduceScatter";
  case Coll::AllReduce: return "AllReduce";
  case Coll::AllToAll: return "AllToAll";
  case Coll::Broadcast: return "Broadcast";
  case Coll::Reduce: return "Reduce";
  case Coll::Scatter: return "Scatter";
  case Coll::Gather: return "Gather";
  case Coll::AllGatherV: return "AllGatherV";
  case Coll::ReduceScatterV: return "ReduceScatterV";
  case Coll::AllToAllV: return "AllToAllV";
  }
  return "?";
}

inline bool isRooted(Coll c) {
  return c == Coll::Broadcast || c == Coll::Reduce || c == Coll::Scatter || c == Coll::Gather;
}
/// AllGatherV, ReduceScatterV, AllToAllV: per-rank counts (Shape::counts).
inline bool isVariable(Coll c) {
  return c == Coll::AllGatherV || c == Coll::ReduceScatterV || c == Coll::AllToAllV;
}
/// Gather and Reduce write only the root's output.
inline bool rootOnlyOutput(Coll c) { return c == Coll::Gather || c == Coll::Reduce; }

/// The four collectives the device reference (check.h referenceOutput)
/// covers; the others are checked against NCCL.
inline bool hasDeviceReference(Coll c) {
  return c == Coll::AllGather || c == Coll::ReduceScatter || c == Coll::AllReduce || c == Coll::AllToAll;
}

/// Parses a collective name (case-sensitive, as collName prints it, or the
/// short forms ag/rs/ar/a2a/bc/rd/sc/ga/agv/rsv/a2av). Returns false for anything else.
inline bool parseColl(const std::string &s, Coll &out) {
  for (int i = 0; i < kNumColls; ++i)
    if (s == collName(static_cast<Coll>(i))) { out = static_cast<Coll>(i); return true; }
  if (s == "ag") { out = Coll::AllGather; return true; }
  if (s == "rs") { out = Coll::ReduceScatter; return true; }
  if (s == "ar") { out = Coll::AllReduce; return true; }
  if (s == "a2a") { out = Coll::AllToAll; return true; }
  if (s == "bc") { out = Coll::Broadcast; return true; }
  if (s == "rd") { out = Coll::Reduce; return true; }
  if (s == "sc") { out = Coll::Scatter; return true; }
  if (s == "ga") { out = Coll::Gather; return true; }
  if (s == "agv") { out = Coll::AllGatherV; return true; }
  if (s == "rsv") { out = Coll::ReduceScatterV; return true; }
  if (s == "a2av") { out = Coll::AllToAllV; return true; }
  return false;
}

/// nccl-tests' in-place forms, the ones Purlin takes (plan_impl.h): AllReduce
/// reads and writes one buffer, AllGather's input is its own block of the
/// output, ReduceScatter's output its own block of the input.
inline bool hasInPlaceForm(Coll c) {
  return c == Coll::AllGather || c == Coll::ReduceScatter || c == Coll::AllReduce;
}

/// The buffers of one call: out of place, `in` and `out` as allocated; in
/// place (hasInPlaceForm), both carved from the output allocation as
/// nccl-tests does (so a registered output covers them), `count` elements
/// per rank's block: AllGather's input at the own block, ReduceScatter's
/// output at the own block of its input there.
struct CallBuffers {
  void *in = nullptr, *out = nullptr;
};
inline CallBuffers callBuffers(Coll c, std::size_t count, int rank, void *in, void *out, bool inPlace) {
  if (!inPlace) return {in, out};
  char *const base = static_cast<char *>(out);
  const std::size_t own = std::size_t(rank) * count * kElemBytes;
  if (c == Coll::AllGather) return {base + own, base};
  if (c == Coll::ReduceScatter) return {base, base + own};
  return {base, base};  // AllReduce
}

inline bool isReduction(Coll c) {
  return c == Coll::ReduceScatter || c == Coll::AllReduce || c == Coll::Reduce || c == Coll::ReduceScatterV;
}

/// Element counts of one call of collective `c` with nominal message size
/// `bytes` on `n` ranks. `count` is the NCCL-style count argument
/// (docs/snac-protocol.md, "Ranks, partitions, counts"). When n does not
/// divide the message, the per-rank part is rounded down, so `msgBytes`
/// (used for bandwidth) can be slightly below the nominal size.
struct Shape {
  std::size_t count = 0;    ///< count argument of the call
  std::size_t inElems = 0;  ///< elements read from the input buffer
  std::size_t outElems = 0; ///< elements written to the output buffer
  std::size_t msgBytes = 0; ///< message bytes by the convention above
  /// V forms: elements of rank p's partition (count unused; inElems /
  /// outElems are the largest of any rank, what the buffers must hold);
  /// AllToAllV: the split before the rotation (a2avSend / a2avRecv).
  std::size_t counts[kMaxBenchRanks] = {};
  std::size_t maxCount = 0;  ///< AllToAllV: the largest count (the bound)
  int n = 0;
};

/// The paper's split (§C.4, Eq. 4) of T bytes over n ranks into `counts`
/// (elements): units of u = max(128, T/(8n)) bytes, x_r = (T/u) (r+1)^-s /
/// sum_k (k+1)^-s with s = 0.125, n_r = floor(x_r) + delta_r, the remaining
/// units to the largest fractional parts (ties to lower ranks). A total
/// below one unit per rank is split evenly (the paper's 1 and 2 KiB rows).
inline void zipfSplit(std::size_t bytes, int n, std::size_t *counts) {
  const std::size_t unit = std::max<std::size_t>(128, bytes / (8 * std::size_t(n)));
  const std::size_t units = bytes / unit;
  if (units < std::size_t(n) || n > kMaxBenchRanks) {
    const std::size_t elems = bytes / kElemBytes;
    for (int r = 0; r < n && r < kMaxBenchRanks; ++r) counts[r] = elems / std::size_t(n);
    return;
  }
  double weights = 0, x[kMaxBenchRanks];
  for (int k = 0; k < n; ++k) weights += std::pow(double(k + 1), -0.125);
  std::size_t given = 0, whole[kMaxBenchRanks];
  for (int r = 0; r < n; ++r) {
    x[r] = double(units) * std::pow(double(r + 1), -0.125) / weights;
    whole[r] = std::size_t(std::floor(x[r]));
    given += whole[r];
  }
  for (std::size_t left = units - given; left > 0; --left) {
    int best = -1;  // largest fractional part not yet given a unit; ties to the lower rank
    for (int r = 0; r < n; ++r)
      if (double(whole[r]) <= x[r] && (best < 0 || x[r] - double(whole[r]) > x[best] - double(whole[best]))) best = r;
    if (best < 0) break;
    ++whole[best];
  }
  for (int r = 0; r < n; ++r) counts[r] = whole[r] * unit / kElemBytes;
}

inline Shape shapeOf(Coll c, std::size_t bytes, int n) {
  const std::size_t elems = bytes / kElemBytes;
  const std::size_t per = elems / static_cast<std::size_t>(n);
  Shape s;
  switch (c) {
  case Coll::AllGather: // count = per-rank contribution; output n*count
    s.count = per; s.inElems = per; s.outElems = per * n; s.msgBytes = s.outElems * kElemBytes;
    break;
  case Coll::ReduceScatter: // count = per-rank result; input n*count
    s.count = per; s.inElems = per * n; s.outElems = per; s.msgBytes = s.inElems * kElemBytes;
    break;
  case Coll::AllReduce: // count = total
    s.count = elems; s.inElems = elems; s.outElems = elems; s.msgBytes = elems * kElemBytes;
    break;
  case Coll::AllToAll: // count = per (source, destination) pair
    s.count = per; s.inElems = per * n; s.outElems = per * n; s.msgBytes = s.inElems * kElemBytes;
    break;
  case Coll::Broadcast: // count = total, the root's input
  case Coll::Reduce:    // count = total, reduced onto the root
    s.count = elems; s.inElems = elems; s.outElems = elems; s.msgBytes = elems * kElemBytes;
    break;
  case Coll::Scatter: // count = per rank; the root's input n*count
    s.count = per; s.inElems = per * n; s.outElems = per; s.msgBytes = s.inElems * kElemBytes;
    break;
  case Coll::Gather: // count = per rank; the root's output n*count
    s.count = per; s.inElems = per; s.outElems = per * n; s.msgBytes = s.outElems * kElemBytes;
    break;
  case Coll::AllGatherV:      // output sum(counts)
  case Coll::ReduceScatterV:  // input sum(counts)
  case Coll::AllToAllV: {     // every rank sends and receives sum(counts)
    zipfSplit(bytes, n, s.counts);
    std::size_t sum = 0, most = 0;
    for (int p = 0; p < n && p < kMaxBenchRanks; ++p) {
      sum += s.counts[p];
      most = s.counts[p] > most ? s.counts[p] : most;
    }
    s.n = n;
    s.maxCount = most;
    s.inElems = c == Coll::AllGatherV ? most : sum;
    s.outElems = c == Coll::ReduceScatterV ? most : sum;
    s.msgBytes = sum * kElemBytes;
    break;
  }
  }
  return s;
}

/// Elements of the output rank `rank` has (0 on a non-root of Gather /
/// Reduce; ReduceScatterV: its own partition's).
inline std::size_t outElemsOn(Coll c, const Shape &s, int rank) {
  if (c == Coll::ReduceScatterV) return s.counts[rank];
  return rootOnlyOutput(c) && rank != kRoot ? 0 : s.outElems;
}
/// Element offset of rank p's partition (V forms: the prefix sum of counts).
inline std::size_t displOf(const Shape &s, int p) {
  std::size_t d = 0;
  for (int q = 0; q < p; ++q) d += s.counts[q];
  return d;
}

/// AllToAllV: elements rank `rank` sends to rank q (the split rotated right
/// by rank+1), and receives from rank p (what p sends it).
inline std::size_t a2avSend(const Shape &s, int rank, int q) { return s.counts[(q - (rank + 1) % s.n + s.n) % s.n]; }
inline std::size_t a2avRecv(const Shape &s, int rank, int p) { return a2avSend(s, p, rank); }
/// AllToAllV's arrays of rank `rank` (blocks packed in rank order).
struct A2AVArrays {
  std::size_t sendCounts[kMaxBenchRanks] = {}, sendDispls[kMaxBenchRanks] = {};
  std::size_t recvCounts[kMaxBenchRanks] = {}, recvDispls[kMaxBenchRanks] = {};
};
inline A2AVArrays a2avArrays(const Shape &s, int rank) {
  A2AVArrays a;
  for (int q = 0; q < s.n; ++q) {
    a.sendCounts[q] = a2avSend(s, rank, q);
    a.recvCounts[q] = a2avRecv(s, rank, q);
    if (q) {
      a.sendDispls[q] = a.sendDispls[q - 1] + a.sendCounts[q - 1];
      a.recvDispls[q] = a.recvDispls[q - 1] + a.recvCounts[q - 1];
    }
  }
  return a;
}

} // namespace purlin::bench
