/// @file CollectiveKind.cpp
/// @brief Classification of declarations into the eleven collectives.
#include "codegen/CollectiveKind.h"

namespace purlin::codegen {

const char *toString(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllGather: return "AllGather";
  case CollectiveKind::ReduceScatter: return "ReduceScatter";
  case CollectiveKind::AllReduce: return "AllReduce";
  case CollectiveKind::AllToAll: return "AllToAll";
  case CollectiveKind::AllGatherV: return "AllGatherV";
  case CollectiveKind::ReduceScatterV: return "ReduceScatterV";
  case CollectiveKind::AllToAllV: return "AllToAllV";
  case CollectiveKind::Broadcast: return "Broadcast";
  case CollectiveKind::Reduce: return "Reduce";
  case CollectiveKind::Scatter: return "Scatter";
  case CollectiveKind::Gather: return "Gather";
  case CollectiveKind::Unknown: return "unknown";
  }
  return "unknown";
}

namespace {

/// A leaf SNAC<..., op, in, out, root>.
CollectiveKind classifyLeaf(ConsumeOp op, Layout in, Layout out, Root root) {
  using L = Layout;
  const bool copy = op == ConsumeOp::Copy;
  if (root == Root::None) {
    if (copy && in == L::Packed && out == L::Scattered) return CollectiveKind::AllGather;
    if (!copy && in == L::Scattered && out == L::Packed) return CollectiveKind::ReduceScatter;
    if (copy && in == L::Scattered && out == L::Transposed) return CollectiveKind::AllToAll;
    if (copy && in == L::PackedV && out == L::ScatteredV) return CollectiveKind::AllGatherV;
    if (!copy && in == L::ScatteredV && out == L::PackedV) return CollectiveKind::ReduceScatterV;
    if (copy && in == L::ScatteredV && out == L::TransposedV) return CollectiveKind::AllToAllV;
    return CollectiveKind::Unknown;
  }
  if (root == Root::Producer && copy && in == L::Scattered && out == L::Packed)
    return CollectiveKind::Scatter;
  if (root == Root::Consumer && copy && in == L::Packed && out == L::Scattered)
    return CollectiveKind::Gather;
  return CollectiveKind::Unknown;
}

} // namespace

CollectiveKind classify(const Collective &c) {
  if (!c.isCompose)
    return classifyLeaf(c.op, c.in, c.out, c.root);
  if (c.children.size() != 2 || !c.children[0] || !c.children[1])
    return CollectiveKind::Unknown;
  CollectiveKind f = classify(*c.children[0]);
  CollectiveKind g = classify(*c.children[1]);
  if (f == CollectiveKind::ReduceScatter && g == CollectiveKind::AllGather)
    return CollectiveKind::AllReduce;
  if (f == CollectiveKind::Scatter && g == CollectiveKind::AllGather)
    return CollectiveKind::Broadcast;
  if (f == CollectiveKind::ReduceScatter && g == CollectiveKind::Gather)
    return CollectiveKind::Reduce;
  return CollectiveKind::Unknown;
}

bool runtimeSupports(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllReduce:
  case CollectiveKind::AllToAll:
    return true;
  default:
    return false;
  }
}

SizeArgs sizeArgs(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllGatherV:
  case CollectiveKind::ReduceScatterV:
    return SizeArgs::Counts;
  case CollectiveKind::AllToAllV:
    return SizeArgs::SendRecvCounts;
  default:
    return SizeArgs::Count;
  }
}

bool isRooted(CollectiveKind k) {
  return k == CollectiveKind::Broadcast || k == CollectiveKind::Reduce ||
         k == CollectiveKind::Scatter || k == CollectiveKind::Gather;
}

bool reduces(CollectiveKind k) {
  return k == CollectiveKind::ReduceScatter || k == CollectiveKind::AllReduce ||
         k == CollectiveKind::ReduceScatterV || k == CollectiveKind::Reduce;
}

} // namespace purlin::codegen
