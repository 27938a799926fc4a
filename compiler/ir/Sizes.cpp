/// @file Sizes.cpp
/// @brief computeSizes(): byte sizes of every partition of every rank's
/// input and output, per collective (docs/snac-protocol.md, "Ranks,
/// partitions, counts"), and computeGeometry().
#include <algorithm>
#include <numeric>

#include "ir/Instantiate.h"
#include "ir/RuntimePlan.h"

namespace purlin::ir {

uint64_t Sizes::inTotal(int r) const { return std::accumulate(in[r].begin(), in[r].end(), uint64_t(0)); }
uint64_t Sizes::outTotal(int r) const { return std::accumulate(out[r].begin(), out[r].end(), uint64_t(0)); }
uint64_t Sizes::inOff(int r, int part) const {
  return std::accumulate(in[r].begin(), in[r].begin() + part, uint64_t(0));
}
uint64_t Sizes::outOff(int r, int part) const {
  return std::accumulate(out[r].begin(), out[r].begin() + part, uint64_t(0));
}

namespace {
/// Partition k of `count` elements over n ranks: [floor(k*count/n), floor((k+1)*count/n)).
uint64_t partBegin(uint64_t count, int n, int k) { return count / n * k + (count % n) * k / n; }
std::vector<uint64_t> split(uint64_t count, int n, uint64_t E) {
  std::vector<uint64_t> v(n);
  for (int k = 0; k < n; ++k) v[k] = (partBegin(count, n, k + 1) - partBegin(count, n, k)) * E;
  return v;
}
} // namespace

Sizes computeSizes(Kind kind, int n, const CallArgs &a) {
  Sizes s;
  s.n = n;
  s.root = a.root;
  s.elem = a.elemSize;
  const uint64_t E = a.elemSize;
  if (a.elemSize == 0 || a.elemSize > 8 || (8 % a.elemSize) != 0)
    throw IRError{"element size " + std::to_string(a.elemSize) + " (1, 2, 4 or 8)"};
  if (isRootedKind(kind) && (a.root < 0 || a.root >= n))
    throw IRError{"root " + std::to_string(a.root) + " out of range 0.." + std::to_string(n - 1)};
  if ((kind == Kind::AllGatherV || kind == Kind::ReduceScatterV) && int(a.counts.size()) != n)
    throw IRError{"counts must have n = " + std::to_string(n) + " entries"};
  if (kind == Kind::AllToAllV) {
    if (int(a.matrix.size()) != n) throw IRError{"AllToAllV needs an n x n count matrix"};
    for (auto &row : a.matrix)
      if (int(row.size()) != n) throw IRError{"AllToAllV needs an n x n count matrix"};
  }
  // The byte ranges of every rank's plan: the runtime's one derivation
  // (snac::planByteRanges, from the layouts), read back as partitions.
  const std::optional<snac::CollKind> ck = runtimeKind(kind);
  if (!ck) throw IRError{"unknown collective"};
  if (n < 1 || n > kMaxRanks) throw IRError{"world size " + std::to_string(n) + " out of range"};
  std::vector<std::size_t> counts(a.counts.begin(), a.counts.end());
  s.in.assign(n, {});
  s.out.assign(n, {});
  uint64_t maxPair = 0;
  for (auto &row : a.matrix)
    for (auto v : row) maxPair = std::max(maxPair, v);
  for (int r = 0; r < n; ++r) {
    snac::CallArgs ra;
    ra.count = a.count;
    ra.root = a.root;
    ra.counts = counts.data();
    std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
    if (!a.matrix.empty()) {  // rank r's row (send) and column (recv), packed in rank order
      for (int k = 0; k < n; ++k) {
        sc[k] = a.matrix[r][k], rc[k] = a.matrix[k][r];
        sd[k] = k ? sd[k - 1] + sc[k - 1] : 0, rd[k] = k ? rd[k - 1] + rc[k - 1] : 0;
      }
      ra.sendCounts = sc.data(), ra.sendDispls = sd.data(), ra.recvCounts = rc.data(), ra.recvDispls = rd.data();
      ra.maxCount = maxPair;
    }
    snac::Plan p;
    p.kind = *ck, p.n = n, p.rank = r, p.elemSize = a.elemSize, p.root = isRootedKind(kind) ? a.root : 0;
    std::size_t inBytes = 0, outBytes = 0;
    std::string error;
    if (snac::planByteRanges(*ck, n, r, ra, p, inBytes, outBytes, error) != Status::Ok) throw IRError{error};
    // Partitions: a packed side is one block; a rank that reads no input or
    // writes no output (a rooted collective's non-roots) has empty blocks.
    const bool packedIn = hasPackedInput(kind) && !isCompose(kind), packedOut = hasPackedOutput(kind) && !isCompose(kind);
    for (int k = 0; k < (packedIn ? 1 : n); ++k) s.in[r].push_back(inBytes ? p.txLen[k] : 0);
    for (int k = 0; k < (packedOut ? 1 : n); ++k) s.out[r].push_back(outBytes ? p.rxLen[packedOut ? r : k] : 0);
    if (r == 0) s.dispatch = p.msgBytes;
  }
  if (isCompose(kind)) s.y = split(a.count, n, E);
  s.maxLen = 0;
  uint64_t total = 0;
  for (int r = 0; r < n; ++r)
    for (auto b : s.in[r]) s.maxLen = std::max(s.maxLen, b), total += b;
  s.empty = total == 0;
  return s;
}

Geometry computeGeometry(const CollectiveIR &ir, const Sizes &s, uint64_t chunk, uint64_t stagingBytes) {
  Geometry g;
  g.chunk = chunk ? chunk : ir.bound.knobs.chunkBytes;
  if (g.chunk == 0 || g.chunk % 16) throw IRError{"chunk bytes must be a positive multiple of 16"};
  uint64_t staging = stagingBytes ? stagingBytes : ir.bound.stagingBytes;
  bool comp = isCompose(ir.kind);
  g.region = snac::stagingRegionBytes(comp, staging);  // the runtime's rule (plan.h)
  if (g.region < g.chunk) throw IRError{"staging capacity " + std::to_string(staging) + " holds no chunk"};
  snac::stagingSlots(g.region, g.chunk, comp, kMaxSlots, g.slots, g.ySlots);
  g.cpp = int(std::max<uint64_t>(1, (s.maxLen + g.chunk - 1) / g.chunk));
  bool packedIn = hasPackedInput(ir.kind);
  g.parts = packedIn ? 1 : s.n - 1;
  g.push = ir.throughput.transfer == Transfer::Push;
  if (g.push) {
    // Per-source regions: n-1 of them in the S region (and in the Y region).
    g.srcRegion = snac::pushSourceRegionBytes(comp, s.n, staging);
    if (g.srcRegion / g.chunk == 0)
      throw IRError{"staging capacity " + std::to_string(staging) + " holds no chunk per source region (" +
                    std::to_string(s.n - 1) + " sources)"};
    g.parts = s.n - 1;
    snac::stagingSlots(g.srcRegion, g.chunk, comp, pushSlotCap(ir.throughput), g.slots, g.ySlots);
  } else if (g.slots < g.parts)
    throw IRError{"staging capacity " + std::to_string(staging) + " holds " + std::to_string(g.slots) +
                  " slots, fewer than the " + std::to_string(g.parts) + " partitions staged per chunk"};
  if (uint64_t(g.cpp) * uint64_t(s.n) / uint64_t(g.slots) >= (uint64_t(1) << 20))
    throw IRError{"too many cyclic staging rounds (staging too small for this size)"};
  g.packetRegion = (s.maxLen + 15) & ~uint64_t(15);
  for (int r = 0; r < s.n; ++r) g.packetRegion = std::max(g.packetRegion, (s.inTotal(r) + 15) & ~uint64_t(15));
  return g;
}

} // namespace purlin::ir
