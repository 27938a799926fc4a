/// @file Reference.cpp
/// @brief referenceOutputs(): AllGather concatenates inputs in rank order,
/// ReduceScatter sums partition r of every input, AllToAll gives rank r
/// block r of every source, and so on, straight from the definitions.
#include "ir/Reference.h"

#include <cstring>

namespace purlin::ir {
namespace {

/// dst[i] = sum over ranks p = 0..n-1 (in order) of src_p[i], fp32.
Bytes sumFloats(const std::vector<const uint8_t *> &srcs, uint64_t elems) {
  Bytes out(elems * 4);
  for (uint64_t i = 0; i < elems; ++i) {
    float acc;
    std::memcpy(&acc, srcs[0] + i * 4, 4);
    for (size_t p = 1; p < srcs.size(); ++p) {
      float v;
      std::memcpy(&v, srcs[p] + i * 4, 4);
      acc = acc + v;
    }
    std::memcpy(out.data() + i * 4, &acc, 4);
  }
  return out;
}

} // namespace

std::vector<uint64_t> referenceInputBytes(Kind k, int n, const CallArgs &a) {
  const uint64_t E = a.elemSize, c = a.count;
  std::vector<uint64_t> v(n);
  for (int r = 0; r < n; ++r) {
    switch (k) {
    case Kind::AllGather: case Kind::Gather: v[r] = c * E; break;
    case Kind::AllGatherV: v[r] = a.counts[r] * E; break;
    case Kind::ReduceScatter: case Kind::AllToAll: v[r] = n * c * E; break;
    case Kind::ReduceScatterV: {
      uint64_t t = 0;
      for (auto x : a.counts) t += x;
      v[r] = t * E;
      break;
    }
    case Kind::AllToAllV: {
      uint64_t t = 0;
      for (int q = 0; q < n; ++q) t += a.matrix[r][q];
      v[r] = t * E;
      break;
    }
    case Kind::Scatter: v[r] = r == a.root ? n * c * E : 0; break;
    case Kind::Broadcast: v[r] = r == a.root ? c * E : 0; break;
    case Kind::AllReduce: case Kind::Reduce: v[r] = c * E; break;
    case Kind::Unknown: break;
    }
  }
  return v;
}

std::vector<Bytes> referenceOutputs(Kind k, int n, const CallArgs &a, const std::vector<Bytes> &in,
                                    std::vector<bool> &has) {
  const uint64_t E = a.elemSize, c = a.count;
  std::vector<Bytes> out(n);
  has.assign(n, true);
  auto append = [](Bytes &d, const uint8_t *p, uint64_t len) { d.insert(d.end(), p, p + len); };
  auto all = [&](uint64_t off) {
    std::vector<const uint8_t *> v;
    for (int p = 0; p < n; ++p) v.push_back(in[p].data() + off);
    return v;
  };
  for (int r = 0; r < n; ++r) {
    Bytes &o = out[r];
    switch (k) {
    case Kind::AllGather:
      for (int p = 0; p < n; ++p) append(o, in[p].data(), c * E);
      break;
    case Kind::Gather:
      if (r != a.root) { has[r] = false; break; }
      for (int p = 0; p < n; ++p) append(o, in[p].data(), c * E);
      break;
    case Kind::AllGatherV:
      for (int p = 0; p < n; ++p) append(o, in[p].data(), a.counts[p] * E);
      break;
    case Kind::ReduceScatter: o = sumFloats(all(r * c * E), c); break;
    case Kind::ReduceScatterV: {
      uint64_t off = 0;
      for (int q = 0; q < r; ++q) off += a.counts[q];
      o = sumFloats(all(off * E), a.counts[r]);
      break;
    }
    case Kind::AllReduce: o = sumFloats(all(0), c); break;
    case Kind::Reduce:
      if (r != a.root) { has[r] = false; break; }
      o = sumFloats(all(0), c);
      break;
    case Kind::AllToAll:
      for (int p = 0; p < n; ++p) append(o, in[p].data() + r * c * E, c * E);
      break;
    case Kind::AllToAllV:
      for (int p = 0; p < n; ++p) {
        uint64_t off = 0;
        for (int q = 0; q < r; ++q) off += a.matrix[p][q];
        append(o, in[p].data() + off * E, a.matrix[p][r] * E);
      }
      break;
    case Kind::Scatter: append(o, in[a.root].data() + r * c * E, c * E); break;
    case Kind::Broadcast: append(o, in[a.root].data(), c * E); break;
    case Kind::Unknown: break;
    }
  }
  return out;
}

} // namespace purlin::ir
