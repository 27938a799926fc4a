/// @file coll_shape.h
/// @brief The four benchmarked collectives and how a nominal message size
/// maps onto per-rank element counts and buffer sizes (the paper's and the
/// baseline's convention: message = gathered output for AllGather, input per
/// rank for the others; bf16 elements throughout).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin::bench {

enum class Coll : int { AllGather = 0, ReduceScatter = 1, AllReduce = 2, AllToAll = 3 };
inline constexpr int kNumColls = 4;
inline constexpr std::size_t kElemBytes = 2; ///< bf16

inline const char *collName(Coll c) {
  switch (c) {
  case Coll::AllGather: return "AllGather";
  case Coll::ReduceScatter: return "ReduceScatter";
  case Coll::AllReduce: return "AllReduce";
  case Coll::AllToAll: return "AllToAll";
  }
  return "?";
}

/// Parses a collective name (case-sensitive, as collName prints it, or the
/// short forms ag/rs/ar/a2a). Returns false for anything else.
inline bool parseColl(const std::string &s, Coll &out) {
  for (int i = 0; i < kNumColls; ++i)
    if (s == collName(static_cast<Coll>(i))) { out = static_cast<Coll>(i); return true; }
  if (s == "ag") { out = Coll::AllGather; return true; }
  if (s == "rs") { out = Coll::ReduceScatter; return true; }
  if (s == "ar") { out = Coll::AllReduce; return true; }
  if (s == "a2a") { out = Coll::AllToAll; return true; }
  return false;
}

inline bool isReduction(Coll c) {
  return c == Coll::ReduceScatter || c == Coll::AllReduce;
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
  }
  return s;
}

} // namespace purlin::bench
