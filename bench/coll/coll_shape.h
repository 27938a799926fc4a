/// @file coll_shape.h
/// @brief The benchmarked collectives and how a nominal message size maps
/// onto per-rank element counts and buffer sizes (the paper's and the
/// baseline's convention: message = gathered output for AllGather and
/// Gather, the root's input for Scatter, input per rank for the others;
/// bf16 elements throughout). The rooted ones run with root 0 (kRoot);
/// the V forms with skewed counts, rank p's share growing with p+1 (the
/// imbalance of mixture-of-experts token counts), message = AllGatherV's
/// gathered output, ReduceScatterV's input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin::bench {

enum class Coll : int {
  AllGather = 0, ReduceScatter = 1, AllReduce = 2, AllToAll = 3,
  Broadcast = 4, Reduce = 5, Scatter = 6, Gather = 7, AllGatherV = 8, ReduceScatterV = 9
};
inline constexpr int kNumColls = 10;
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
  }
  return "?";
}

inline bool isRooted(Coll c) {
  return c == Coll::Broadcast || c == Coll::Reduce || c == Coll::Scatter || c == Coll::Gather;
}
/// AllGatherV, ReduceScatterV: per-rank counts (Shape::counts).
inline bool isVariable(Coll c) { return c == Coll::AllGatherV || c == Coll::ReduceScatterV; }
/// Gather and Reduce write only the root's output.
inline bool rootOnlyOutput(Coll c) { return c == Coll::Gather || c == Coll::Reduce; }

/// Parses a collective name (case-sensitive, as collName prints it, or the
/// short forms ag/rs/ar/a2a/bc/rd/sc/ga/agv/rsv). Returns false for anything else.
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
  return false;
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
  /// outElems are the largest of any rank, what the buffers must hold).
  std::size_t counts[kMaxBenchRanks] = {};
};

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
  case Coll::AllGatherV:     // counts[p] ~ (p+1): output sum(counts)
  case Coll::ReduceScatterV: { // counts[p] ~ (p+1): input sum(counts)
    const std::size_t weights = std::size_t(n) * std::size_t(n + 1) / 2;
    std::size_t sum = 0, most = 0;
    for (int p = 0; p < n && p < kMaxBenchRanks; ++p) {
      s.counts[p] = elems * std::size_t(p + 1) / weights;
      sum += s.counts[p];
      most = s.counts[p] > most ? s.counts[p] : most;
    }
    s.inElems = c == Coll::AllGatherV ? most : sum;
    s.outElems = c == Coll::AllGatherV ? sum : most;
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

} // namespace purlin::bench
