/// @file plan_impl.h
/// @brief Inline definitions of makePlan() (plan.h): validation, byte
/// ranges, the program choice of the collective's rules, chunk and slot
/// sizing. Header-only so generated code needs
/// no extra library; included by plan.h only.
#pragma once

#include <limits>
#include <string>

#include "purlin/limits.h"

namespace purlin::snac {

namespace detail {

inline Status fail(std::string& error, Status s, CollKind k, const std::string& what) {
  error = std::string("purlin::snac::launch<") + toString(k) + ">: " + what;
  return s;
}

/// fail() for an argument of this rank's own (RefusalScope::Own).
inline Status failOwn(std::string& error, Status s, CollKind k, const std::string& what, RefusalScope* scope) {
  if (scope) *scope = RefusalScope::Own;
  return fail(error, s, k, what);
}

/// Chunks per partition must fit the int loop counters and the sequence
/// indices (chunks x (n-1) staged partitions); a tiny chunkBytes with a huge
/// message would otherwise wrap and silently move only the first chunk.
inline Status checkChunkCount(const Plan& p, CollKind kind, std::string& error) {
  const std::size_t chunks = (p.maxLen + p.chunk - 1) / p.chunk;
  if (chunks > std::size_t(std::numeric_limits<int>::max()) / std::size_t(kMaxRanks))
    return fail(error, Status::InvalidArgument, kind,
                std::to_string(chunks) + " chunks of " + std::to_string(p.chunk) +
                    " bytes per partition: too many (raise the policy's chunkBytes)");
  return Status::Ok;
}

inline bool rangesOverlap(const void* a, std::size_t na, const void* b, std::size_t nb) {
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return na && nb && pa < pb + nb && pb < pa + na;
}

/// The arguments of a call with pair counts (a transposedV output:
/// CallArgs' send and receive arrays): the four arrays present, every count
/// within maxCount, every block within 2^40 bytes, this rank's block to
/// itself the same size both ways, the received blocks disjoint. Sets the
/// byte ranges on `p` and the extents of the input and output read and
/// written (bytes from in / out).
inline Status planPairCounts(CollKind kind, int n, int rank, const CallArgs& a, std::size_t E, Plan& p,
                            std::size_t& inBytes, std::size_t& outBytes, std::string& error, RefusalScope* scope) {
  if (!a.sendCounts || !a.sendDispls || !a.recvCounts || !a.recvDispls)
    return failOwn(error, Status::InvalidArgument, kind, "sendCounts, sendDispls, recvCounts and recvDispls must not be null",
                   scope);
  const std::size_t limit = (std::size_t(1) << 40) / E;
  if (a.maxCount > limit / std::size_t(n))
    return fail(error, Status::InvalidArgument, kind,
                "maxCount " + std::to_string(a.maxCount) + " too large (n*maxCount at most 2^40 bytes)");
  inBytes = outBytes = 0;
  for (int k = 0; k < n; ++k) {
    const std::string at = "[" + std::to_string(k) + "]";
    for (int side = 0; side < 2; ++side) {
      const std::size_t count = side ? a.recvCounts[k] : a.sendCounts[k], displ = side ? a.recvDispls[k] : a.sendDispls[k];
      const char* what = side ? "recv" : "send";
      if (count > a.maxCount)
        return failOwn(error, Status::InvalidArgument, kind,
                       std::string(what) + "Counts" + at + " = " + std::to_string(count) + " exceeds maxCount " +
                           std::to_string(a.maxCount) + " (the bound of every rank's counts, the same on every rank)",
                       scope);
      if (displ > limit - count)
        return failOwn(error, Status::InvalidArgument, kind,
                       std::string(what) + "Displs" + at + " = " + std::to_string(displ) +
                           " too large (block end beyond 2^40 bytes)",
                       scope);
      std::size_t& extent = side ? outBytes : inBytes;
      if (count && (displ + count) * E > extent) extent = (displ + count) * E;
    }
    p.txOff[k] = a.sendDispls[k] * E; p.txLen[k] = a.sendCounts[k] * E;
    p.rxOff[k] = a.recvDispls[k] * E; p.rxLen[k] = a.recvCounts[k] * E;
  }
  if (a.sendCounts[rank] != a.recvCounts[rank])
    return failOwn(error, Status::InvalidArgument, kind,
                   "sendCounts[" + std::to_string(rank) + "] = " + std::to_string(a.sendCounts[rank]) + " but recvCounts[" +
                       std::to_string(rank) + "] = " + std::to_string(a.recvCounts[rank]) +
                       ": this rank's block to itself has one size",
                   scope);
  for (int k = 0; k < n; ++k)
    for (int j = k + 1; j < n; ++j)
      if (p.rxLen[k] && p.rxLen[j] && p.rxOff[k] < p.rxOff[j] + p.rxLen[j] && p.rxOff[j] < p.rxOff[k] + p.rxLen[k])
        return failOwn(error, Status::InvalidArgument, kind,
                       "recvDispls: the blocks from ranks " + std::to_string(k) + " and " + std::to_string(j) + " overlap",
                       scope);
  return Status::Ok;
}

/// A V call whose counts are in device memory (CallArgs::countsOnDevice):
/// the count pointers present, n*maxCount*E within 2^40 bytes; every block
/// planned at the bound (maxCount elements at k*maxCount), so the program
/// and its shape follow the bound alone and are the same on every rank. The
/// input and output extents are the capacities the counts kernel holds the
/// counts to (deviceCountsCapacity).
inline Status planDeviceCounts(CollKind kind, int n, const CallArgs& a, Plan& p, std::size_t& inBytes,
                               std::size_t& outBytes, std::string& error, RefusalScope* scope) {
  const std::size_t E = p.elemSize;
  if (!isVariable(kind))
    return fail(error, Status::InvalidArgument, kind,
                "counts in device memory are for the V collectives (AllGatherV, ReduceScatterV, AllToAllV)");
  if (hasPairCounts(kind) ? !a.sendCounts || !a.sendDispls || !a.recvCounts || !a.recvDispls : !a.counts)
    return failOwn(error, Status::InvalidArgument, kind,
                   hasPairCounts(kind) ? "sendCounts, sendDispls, recvCounts and recvDispls (device memory) must not be null"
                                       : "counts (device memory, n entries) must not be null",
                   scope);
  if (a.maxCount > (std::size_t(1) << 40) / E / std::size_t(n))
    return fail(error, Status::InvalidArgument, kind,
                "maxCount " + std::to_string(a.maxCount) + " too large (n*maxCount at most 2^40 bytes)");
  const std::size_t block = a.maxCount * E;
  std::size_t blockOff[kMaxRanks] = {}, blockLen[kMaxRanks] = {};
  for (int k = 0; k < n; ++k) blockOff[k] = std::size_t(k) * block, blockLen[k] = block;
  if (hasPairCounts(kind)) {
    for (int k = 0; k < n; ++k) p.txOff[k] = p.rxOff[k] = blockOff[k], p.txLen[k] = p.rxLen[k] = block;
  } else {
    layoutRanges(kind, n, blockOff, blockLen, block, p.txOff, p.txLen, p.rxOff, p.rxLen);
  }
  std::size_t inElems = 0, outElems = 0;
  deviceCountsCapacity(kind, n, a.maxCount, inElems, outElems);
  inBytes = inElems * E;
  outBytes = outElems * E;
  p.msgBytes = std::size_t(n) * block;
  p.maxLen = block;
  p.empty = a.maxCount == 0;
  return Status::Ok;
}

/// Chunk size: the policy's, but small partitions are cut in about 4 chunks
/// (not below 64 KiB) so staging and consuming overlap; a multiple of 16.
inline std::size_t pickChunk(std::size_t maxLen, std::size_t policyChunk) {
  std::size_t c = policyChunk ? policyChunk : (1u << 20);
  std::size_t quarter = (maxLen / 4 + 15) & ~std::size_t(15);
  if (quarter < (64u << 10)) quarter = 64u << 10;
  if (quarter < c) c = quarter;
  return (c + 15) & ~std::size_t(15);
}

/// Chunk size of the push transfer: about `perCta` chunks per worker (CTA
/// lane; `sl` / `cl` lanes per stage / other CTA, as pushLanes gives) of the busiest role (a role with C CTAs and n-1 peers handles (n-1)*cpp chunks,
/// the reduce consumer cpp), clamped to [kMinPushChunk, policy chunk], a
/// multiple of 16. Small messages get small chunks, so every CTA streams.
inline std::size_t pickPushChunk(std::size_t maxLen, int n, const WorldConsts& w, int sl, int cl) {
  const std::size_t cap = w.chunkBytes ? w.chunkBytes : (std::size_t(4) << 20);
  const std::size_t perCta = std::size_t(w.chunksPerCta > 0 ? w.chunksPerCta : kDefaultChunksPerCta);
  int ctas = w.stageCtas * sl > w.consumeCtas * cl ? w.stageCtas * sl : w.consumeCtas * cl;  // workers
  if (w.gatherCtas * cl > ctas) ctas = w.gatherCtas * cl;
  // Chunks of one partition so that (n-1) partitions give ~perCta per CTA.
  std::size_t target = (perCta * std::size_t(ctas) + std::size_t(n) - 2) / std::size_t(n - 1);
  if (target < 1) target = 1;
  std::size_t c = (maxLen + target - 1) / target;
  if (c < kMinPushChunk) c = kMinPushChunk;
  if (c > cap) c = cap;
  return (c + 15) & ~std::size_t(15);
}

/// The push transfer's share of makePlan (CTA counts already set): region
/// sizes, chunk, chunks per partition, slots per source region.
inline Status planPush(CollKind kind, int n, const WorldConsts& w, std::size_t stagingCapacity, int atomStages,
                       Plan& p, std::string& error) {
  const bool compose = isComposition(kind);
  p.push = true;
  {
    const int lanes = w.lanes > 0 ? w.lanes : kDefaultLanes;
    const int clanes = w.consumeLanes > 0 ? w.consumeLanes : kDefaultConsumeLanes;
    if (lanes > 2 || clanes > 2)
      return fail(error, Status::InvalidArgument, kind,
                  "push lanes must be 1 or 2, not " + std::to_string(lanes > 2 ? lanes : clanes));
    p.lanes = pushLanes(w.lanes, kDefaultLanes, p.threads, atomStages);
    p.consumeLanes = pushLanes(w.consumeLanes, kDefaultConsumeLanes, p.threads, atomStages);
  }
  p.regionBytes = pushSourceRegionBytes(compose, n, stagingCapacity);
  p.yRegionBytes = compose ? p.regionBytes : 0;
  if (p.regionBytes < 4096)
    return fail(error, Status::InvalidArgument, kind,
                "staging too small for the push transfer: " + std::to_string(stagingCapacity) +
                    " bytes per half for " + std::to_string(n) + " ranks (need 4096 per source" +
                    (compose ? " and as much again for Y)" : ")"));
  p.chunk = pickPushChunk(p.maxLen, n, w, p.lanes, p.consumeLanes);  // the lanes that run (pushLanes)
  if (p.chunk > p.regionBytes) p.chunk = p.regionBytes;
  if (Status s = detail::checkChunkCount(p, kind, error); s != Status::Ok) return s;
  p.cpp = int((p.maxLen + p.chunk - 1) / p.chunk);
  if (p.cpp < 1) p.cpp = 1;
  stagingSlots(p.regionBytes, p.chunk, compose, kMaxSlots, p.slots, p.ySlots);
  if (compose) p.yOffset = stagingRegionBytes(compose, stagingCapacity);
  if (std::size_t(p.cpp) / std::size_t(p.slots) >= (std::size_t(1) << 20))
    return fail(error, Status::InvalidArgument, kind, "too many cyclic staging rounds (staging too small for this count)");
  return Status::Ok;
}

} // namespace detail

inline bool scaleRoleCtas(int budget, int* roles, int count) {
  int total = 0, present = 0;
  for (int i = 0; i < count; ++i)
    if (roles[i] > 0) total += roles[i], ++present;
  if (total <= budget) return true;
  if (present > budget) return false;
  int sum = 0;
  for (int i = 0; i < count; ++i)
    if (roles[i] > 0) {
      roles[i] = roles[i] * budget / total;
      if (roles[i] < 1) roles[i] = 1;
      sum += roles[i];
    }
  while (sum > budget) {  // rounding up to one CTA can overshoot: trim the largest role
    int big = 0;
    for (int i = 1; i < count; ++i)
      if (roles[i] > roles[big]) big = i;
    --roles[big];
    --sum;
  }
  return true;
}

inline void latencyShape(std::size_t slots, const WorldConsts& w, int& ctas, int& threads) {
  const std::size_t maxCtas = std::size_t(w.latencyCtas < kMaxEpochSlots ? w.latencyCtas : kMaxEpochSlots);
  // Whole warps only (a packet group is one warp's slots).
  const std::size_t maxThreads = std::size_t(w.latencyThreads > 32 ? w.latencyThreads / 32 * 32 : 32);
  if (w.latencySlotsPerThread < 0) {
    ctas = int(maxCtas);
    threads = int(maxThreads);
    return;
  }
  const std::size_t spt = std::size_t(w.latencySlotsPerThread > 0 ? w.latencySlotsPerThread : kLatencySlotsPerThread);
  std::size_t want = (slots + spt - 1) / spt;
  if (want < 1) want = 1;
  const std::size_t spread = std::size_t(kLatencySpreadThreads) < maxThreads ? std::size_t(kLatencySpreadThreads) : maxThreads;
  std::size_t c = (want + spread - 1) / spread;
  if (c > maxCtas) c = maxCtas;
  if (c < 1) c = 1;
  std::size_t t = ((want + c - 1) / c + 31) / 32 * 32;
  if (t > maxThreads) t = maxThreads;
  ctas = int(c);
  threads = int(t);
}

namespace detail {
/// One FNV-1a step over the 8 bytes of `v` (callCheckOf).
PURLIN_HD uint64_t fnvMix(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xffu)) * 1099511628211ull;
  return h;
}
/// The 32-bit check value of hash `h`, bit 32 set (the check is on).
PURLIN_HD uint64_t checkValueOf(uint64_t h) { return (uint64_t(1) << 32) | ((h ^ (h >> 32)) & 0xffffffffu); }
} // namespace detail

/// Checked mode: the call's hash, compared across ranks on the device
/// (epoch.cuh callCheckKernel): FNV-1a over what every rank must pass
/// alike: the kind, the element count (a V layout: every entry of counts;
/// pair counts: maxCount, since a rank sees only its own row and column),
/// the dtype (every collective: a copy's element size sets its byte ranges,
/// so ranks that disagree would write past each other's blocks), the op of
/// a reduction, the root of a rooted collective. Bit 32 marks the check as
/// on.
inline uint64_t callCheckOf(CollKind k, int n, const CallArgs& a) {
  using detail::fnvMix;
  uint64_t h = 1469598103934665603ull;
  h = fnvMix(h, uint64_t(k));
  if (a.countsOnDevice) {
    // The counts are on the device: their counts kernel mixes them in
    // (device_counts.cuh); a host-count call on another rank differs here.
    h = fnvMix(fnvMix(h, ~uint64_t(0)), a.maxCount);
  } else if (hasPairCounts(k)) {
    h = fnvMix(h, a.maxCount);
  } else if (isVariable(k)) {
    for (int p = 0; p < n; ++p) h = fnvMix(h, a.counts != nullptr ? a.counts[p] : ~uint64_t(0));
  } else {
    h = fnvMix(h, a.count);
  }
  h = fnvMix(h, uint64_t(a.dtype) << 8 | (isReduction(k) ? uint64_t(a.op) : 0u));
  if (isRooted(k)) h = fnvMix(h, uint64_t(uint32_t(a.root)));
  return detail::checkValueOf(h);
}

/// What rank `rank`'s call writes to each peer q (toPeer[q]) and expects
/// from each peer p (fromPeer[p]) in the checked mode's call check, and, in
/// every mode, the tags of its latency flows (Plan::flowTagTo/From, in
/// every packet group's header): the call's
/// hash (callCheckOf); with pair counts (AllToAllV), mixed with both flows
/// between the two ranks as this rank sees them (to q: what it sends q,
/// then what it receives from q; from p: what it receives from p, then
/// what it sends p), so rank r and rank q agree only if r's sendCounts[q]
/// is q's recvCounts[r] and r's recvCounts[q] is q's sendCounts[r]: a flow
/// whose two ends disagree on its length fails both ends at the check,
/// before any data moves. `a`'s count arrays are valid (makePlan accepted
/// the call).
inline CallCheck callCheckFor(CollKind k, int n, int rank, const CallArgs& a) {
  using detail::fnvMix;
  CallCheck c;
  const uint64_t base = callCheckOf(k, n, a);
  for (int q = 0; q < n; ++q) {
    c.toPeer[q] = c.fromPeer[q] = base;
    if (hasPairCounts(k) && q != rank && !a.countsOnDevice) {
      c.toPeer[q] = detail::checkValueOf(fnvMix(fnvMix(base, a.sendCounts[q]), a.recvCounts[q]));
      c.fromPeer[q] = detail::checkValueOf(fnvMix(fnvMix(base, a.recvCounts[q]), a.sendCounts[q]));
    }
  }
  return c;
}

/// An eager call whose output lies in a registered buffer (the direct
/// program writes into each peer's registration at this rank's offset):
/// mixes the registration's handle (the same registration on every rank:
/// registrations are collective) and the output's offset in it into every
/// flow's tag, so ranks agree on the tags only if their outputs are at the
/// same place, and a mismatch is found before any kernel writes (direct.cuh
/// waitArrived; not the copy-engine form's copies, which the host enqueued).
inline void mixRegisteredTags(Plan& p, uint64_t handle, std::size_t offset) {
  using detail::fnvMix;
  for (int q = 0; q < p.n; ++q) {
    p.flowTagTo[q] = uint32_t(detail::checkValueOf(fnvMix(fnvMix(p.flowTagTo[q], handle), offset)));
    p.flowTagFrom[q] = uint32_t(detail::checkValueOf(fnvMix(fnvMix(p.flowTagFrom[q], handle), offset)));
  }
}

/// The byte ranges of a call (Plan's tx/rx, msgBytes, maxLen, empty) and
/// the bytes of this rank's input and output it touches, from the
/// collective's layouts and the call's sizes alone: the one derivation the
/// launcher (makePlan, after its argument checks: p.kind, n, rank,
/// elemSize and root set) and purlinc's sizes (compiler/ir/Sizes.cpp, for
/// every rank) use.
inline Status planByteRanges(CollKind kind, int n, int rank, const CallArgs& a, Plan& p, std::size_t& inBytes,
                             std::size_t& outBytes, std::string& error, RefusalScope* scope = nullptr) {
  using detail::fail;
  const std::size_t E = p.elemSize;
  const bool isRoot = rank == p.root;
  if (a.countsOnDevice) return detail::planDeviceCounts(kind, n, a, p, inBytes, outBytes, error, scope);
  // The V forms: counts[n] elements per rank's partition (the same array on
  // every rank), displacements their prefix sums; `count` is unused.
  std::size_t total = a.count;  // elements of the whole message (V forms: sum of counts)
  std::size_t displ[kMaxRanks] = {};
  if (isVariable(kind) && !hasPairCounts(kind)) {
    if (!a.counts) return fail(error, Status::InvalidArgument, kind, "counts is null (it needs n entries)");
    const std::size_t limit = (std::size_t(1) << 40) / E;
    total = 0;
    for (int k = 0; k < n; ++k) {
      if (a.counts[k] > limit - total)  // also catches a negative count converted to size_t
        return fail(error, Status::InvalidArgument, kind,
                    "counts[" + std::to_string(k) + "] = " + std::to_string(a.counts[k]) +
                        (a.counts[k] > limit ? " too large" : ": the counts add up to too many elements") +
                        " (at most 2^40 bytes in all)");
      displ[k] = total;
      total += a.counts[k];
    }
  }
  const std::size_t cE = a.count * E;
  // Byte ranges per peer, and the bytes of this rank's input and output the
  // call touches, from the layouts (kinds.h), not per collective: a
  // composition splits its one buffer into n partitions, partition k to and
  // from rank k; otherwise a packed input sends the rank's whole
  // contribution to every peer and a scattered one block k to rank k, and a
  // packed output receives one block and a scattered or transposed one
  // block k from rank k. Blocks have `count` elements, or counts[k] in a V
  // layout (at displ[k]); pair counts (a transposedV output) come from the
  // send/recv arrays (planPairCounts). Non-roots of a rooted collective read
  // no input (the root produces) or write no output (the root consumes):
  // those buffers may be null.
  inBytes = outBytes = 0;
  if (hasPairCounts(kind)) {
    if (Status st = detail::planPairCounts(kind, n, rank, a, E, p, inBytes, outBytes, error, scope); st != Status::Ok)
      return st;
    p.msgBytes = std::size_t(n) * a.maxCount * E;
    total = a.maxCount;  // nothing anywhere only when the bound is 0
  } else if (isComposition(kind)) {
    for (int k = 0; k < n; ++k) {
      p.txOff[k] = p.rxOff[k] = partitionBegin(a.count, n, k) * E;
      p.txLen[k] = p.rxLen[k] = partitionSize(a.count, n, k) * E;
    }
    p.msgBytes = inBytes = outBytes = cE;
  } else {
    const bool variable = isVariable(kind);
    const std::size_t own = variable ? a.counts[rank] * E : cE;  // this rank's block
    const std::size_t all = variable ? total * E : std::size_t(n) * cE;
    std::size_t blockOff[kMaxRanks], blockLen[kMaxRanks];
    for (int k = 0; k < n; ++k) {
      blockOff[k] = variable ? displ[k] * E : std::size_t(k) * cE;
      blockLen[k] = variable ? a.counts[k] * E : cE;
    }
    layoutRanges(kind, n, blockOff, blockLen, own, p.txOff, p.txLen, p.rxOff, p.rxLen);
    p.msgBytes = all;
    inBytes = hasPackedInput(kind) ? own : all;
    outBytes = hasPackedOutput(kind) ? own : all;
  }
  if (rootProduces(kind) && !isRoot) inBytes = 0;
  if (rootConsumes(kind) && !isRoot) outBytes = 0;
  // The largest segment any rank sends (the same on every rank: a V form's
  // from every rank's count, not this rank's).
  for (int k = 0; k < n; ++k) {
    const std::size_t len = hasPairCounts(kind) ? a.maxCount * E : isVariable(kind) ? a.counts[k] * E : p.txLen[k];
    p.maxLen = p.maxLen > len ? p.maxLen : len;
  }
  p.empty = total == 0;
  return Status::Ok;
}

inline std::size_t packetSlots(std::size_t flowBytes) { return packetGroups(flowBytes) * kGroupSlots; }

template <class Rules>
Status makePlan(CollKind kind, int n, int rank, const CallArgs& a, const WorldConsts& w,
                std::size_t stagingCapacity, std::size_t packetHalfBytes, Plan& p, std::string& error,
                int atomStages, const Rules& rules, RefusalScope* scope) {
  using detail::fail;
  using detail::failOwn;
  if (scope) *scope = RefusalScope::Shared;
  p = Plan{};
  p.kind = kind;
  p.n = n;
  p.rank = rank;
  if (n < 1 || n > kMaxRanks || rank < 0 || rank >= n)
    return fail(error, Status::InvalidArgument, kind,
                "world size " + std::to_string(n) + " / rank " + std::to_string(rank) +
                    " out of range (1.." + std::to_string(kMaxRanks) + ")");
  if (!isValid(a.dtype))
    return fail(error, Status::InvalidArgument, kind, "dtype " + std::to_string(int(a.dtype)) + " is not one purlin knows");
  if (isReduction(kind) && !isValid(a.op))
    return fail(error, Status::Unsupported, kind, "reduction op " + std::to_string(int(a.op)) + " is not one purlin knows");
  p.dtype = a.dtype;
  p.op = a.op;
  p.elemSize = uint32_t(dtypeSize(a.dtype));
  p.deviceCounts = a.countsOnDevice;
  const std::size_t E = p.elemSize;
  // Overflow: n*count*E must fit comfortably (also keeps round numbers < 2^20).
  if (a.count > (std::size_t(1) << 40) / E / std::size_t(n))
    return fail(error, Status::InvalidArgument, kind,
                "count " + std::to_string(a.count) + " too large");
  if (isRooted(kind) && (a.root < 0 || a.root >= n))
    return fail(error, Status::InvalidArgument, kind,
                "root " + std::to_string(a.root) + " out of range (0.." + std::to_string(n - 1) + ")");
  p.root = isRooted(kind) ? a.root : 0;
  std::size_t inBytes = 0, outBytes = 0;
  if (Status st = planByteRanges(kind, n, rank, a, p, inBytes, outBytes, error, scope); st != Status::Ok) return st;
  if (p.empty) return Status::Ok;

  // (V forms: the elements this rank reads or writes, not `count`.)
  const auto sizeText = [&](std::size_t bytes) {
    return isVariable(kind) ? std::to_string(bytes / E) + " elements" : "count " + std::to_string(a.count);
  };
  if (inBytes && !a.in)
    return failOwn(error, Status::InvalidArgument, kind, "input pointer is null with " + sizeText(inBytes), scope);
  if (outBytes && !a.out)
    return failOwn(error, Status::InvalidArgument, kind, "output pointer is null with " + sizeText(outBytes), scope);
  if (reinterpret_cast<std::uintptr_t>(a.in) % E || reinterpret_cast<std::uintptr_t>(a.out) % E)
    return failOwn(error, Status::InvalidArgument, kind,
                   "pointers must be aligned to the element size " + std::to_string(E), scope);
  // In place is supported exactly in NCCL's forms (MPI's for Gather and
  // Scatter: the root's own block); any other overlap is an error.
  {
    const auto* in = static_cast<const std::byte*>(a.in);
    auto* out = static_cast<std::byte*>(a.out);
    bool inPlace = false;
    // From the layouts (kinds.h): a composition maps its buffer onto itself;
    // a packed input is the own block of the output, a packed output the own
    // block of the input. (A rooted collective's unused buffer may be null:
    // no offset from it.)
    if (isComposition(kind)) inPlace = in == out;
    if (hasPackedInput(kind)) inPlace = out != nullptr && in == out + p.rxOff[rank];
    if (hasPackedOutput(kind)) inPlace = in != nullptr && out == in + p.txOff[rank];
    if (a.countsOnDevice) inPlace = false;  // the own block's place is on the device: no in-place form
    if (!inPlace && detail::rangesOverlap(in, inBytes, out, outBytes))
      return failOwn(error, Status::InvalidArgument, kind,
                     "input and output overlap other than in NCCL's in-place form", scope);
  }
  if (n == 1) return Status::Ok;  // a local copy; no kernel
  if (w.latencyCtas <= 0 && w.stageCtas <= 0)
    return fail(error, Status::InvalidArgument, kind,
                "the policy has no settings for world size " + std::to_string(n));

  // The flows' tags: in every latency packet group's header and every
  // direct ARRIVED_TAG, so a mismatched call is found by the receiver in
  // every mode (the launcher mixes a registered output's place in).
  {
    const CallCheck check = callCheckFor(kind, n, rank, a);
    for (int q = 0; q < n; ++q) {
      p.flowTagTo[q] = uint32_t(check.toPeer[q]);
      p.flowTagFrom[q] = uint32_t(check.fromPeer[q]);
    }
  }
  // Program choice: the collective's printed rules (flow: the bytes every
  // source sends in the latency program; latency: the crossover and the
  // packet window).
  p.packetRegion = packetHalfBytes / sizeof(Packet) / std::size_t(n);
  p.packetFlowBytes = rules.flowBytes(p);
  p.latency = rules.latency(p, w);
  p.latencyCtas = w.latencyCtas;
  p.latencyThreads = w.latencyThreads;
  if (p.latency) {
    latencyShape(packetSlots(p.packetFlowBytes), w, p.latencyCtas, p.latencyThreads);
    // Every segment starts at a multiple of cE (a composition: one segment
    // of cE); a V form's at its displacement, with its own length.
    std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(a.in) | reinterpret_cast<std::uintptr_t>(a.out) | a.count * E;
    if (isVariable(kind))
      for (int k = 0; k < n; ++k) bits |= p.txOff[k] | p.txLen[k] | p.rxOff[k] | p.rxLen[k];
    if (a.countsOnDevice) bits |= E;  // any count: whole words only for 8-byte elements
    p.words8 = bits % 8 == 0;
    return Status::Ok;
  }

  if (w.stageCtas <= 0 || w.consumeCtas <= 0 || w.threads <= 0 ||
      (isComposition(kind) && w.gatherCtas <= 0))
    return fail(error, Status::InvalidArgument, kind,
                "the policy's throughput CTA counts for world size " + std::to_string(n) + " are zero");
  if (w.threads > limits::kMaxThroughputThreads)
    return fail(error, Status::InvalidArgument, kind,
                "the policy's throughput threads for world size " + std::to_string(n) + " are " +
                    std::to_string(w.threads) + "; the kernel takes at most " +
                    std::to_string(limits::kMaxThroughputThreads));
  p.stageCtas = w.stageCtas;
  p.consumeCtas = w.consumeCtas;
  p.gatherCtas = isComposition(kind) ? w.gatherCtas : 0;
  p.threads = w.threads;
  const bool compose = isComposition(kind);
  if (w.push) return detail::planPush(kind, n, w, stagingCapacity, atomStages, p, error);
  const std::size_t region = stagingRegionBytes(compose, stagingCapacity);
  if (region < 4096)
    return fail(error, Status::InvalidArgument, kind,
                "staging too small: " + std::to_string(stagingCapacity) + " bytes per half (need at least " +
                    std::to_string(compose ? 8192 : 4096) + ")");
  p.chunk = detail::pickChunk(p.maxLen, w.chunkBytes);
  // At least one slot per staged partition (chunk-major staging needs it to
  // be deadlock-free; docs/snac-protocol.md).
  const std::size_t perPart = (region / std::size_t(p.stageParts())) & ~std::size_t(15);
  if (perPart < 4096)
    return fail(error, Status::InvalidArgument, kind,
                "staging too small: " + std::to_string(stagingCapacity) + " bytes per half for " +
                    std::to_string(n) + " ranks");
  if (p.chunk > perPart) p.chunk = perPart;
  if (Status s = detail::checkChunkCount(p, kind, error); s != Status::Ok) return s;
  p.cpp = int((p.maxLen + p.chunk - 1) / p.chunk);
  if (p.cpp < 1) p.cpp = 1;
  stagingSlots(region, p.chunk, compose, kMaxSlots, p.slots, p.ySlots);
  if (compose) p.yOffset = region;
  if (std::size_t(p.stageSequence()) / std::size_t(p.slots) >= (std::size_t(1) << 20))
    return fail(error, Status::InvalidArgument, kind, "too many cyclic staging rounds (staging too small for this count)");
  return Status::Ok;
}

inline bool directEligible(const Plan& p, const CallArgs& a) {
  if (p.empty || p.n < 2) return false;
  const auto* in = static_cast<const std::byte*>(a.in);
  const auto* out = static_cast<const std::byte*>(a.out);
  if (reinterpret_cast<std::uintptr_t>(in) % 16 || reinterpret_cast<std::uintptr_t>(out) % 16) return false;
  for (int k = 0; k < p.n; ++k)
    if (p.txOff[k] % 16 || p.txLen[k] % 16 || p.rxOff[k] % 16 || p.rxLen[k] % 16) return false;
  std::size_t inBytes = 0, outBytes = 0;
  for (int k = 0; k < p.n; ++k) {
    const std::size_t ti = p.txOff[k] + p.txLen[k], ro = p.rxOff[k] + p.rxLen[k];
    inBytes = ti > inBytes ? ti : inBytes;
    outBytes = ro > outBytes ? ro : outBytes;
  }
  // In place as makePlan allows it (a packed input: the own block of the output).
  const bool inPlace = hasPackedInput(p.kind) && in == out + p.rxOff[p.rank];
  if (!inPlace && detail::rangesOverlap(in, inBytes, out, outBytes)) return false;
  return true;
}

inline void planDirect(Plan& p, const WorldConsts& w, bool engine, bool engineReduces) {
  const int most = w.directCtas > 0 ? w.directCtas : kDirectCtas;
  const int cap = most < kMaxEpochSlots ? most : kMaxEpochSlots;
  // Bytes this rank writes = message bytes (AllGather: n copies of its
  // input; ReduceScatter/AllToAll: its input; AllReduce: two partitions' worth).
  const std::size_t perRank = p.msgBytes;
  std::size_t c = (perRank + kDirectBytesPerCta - 1) / kDirectBytesPerCta;
  if (c < 1) c = 1;
  if (c > std::size_t(cap)) c = std::size_t(cap);
  p.direct = true;
  p.latency = false;
  p.directCtas = int(c);
  int t = w.directThreads > 0 ? w.directThreads : kDirectThreads;
  t = (t + 31) / 32 * 32;
  if (t < 64) t = 64;
  if (t > kDirectMaxThreads) t = kDirectMaxThreads;
  p.directThreads = t;
  p.directEngine = engine;
  if (p.directEngine && !engineReduces) {
    p.directCtas = 1;
    p.directThreads = 32;
  } else if (p.directEngine) {
    p.directThreads = kDirectEngineReduceThreads;
  }
}

inline std::string describePlan(const Plan& p, const WorldConsts& w, DirectBy by) {
  const auto B = [](std::size_t b) { return std::to_string(b) + " B"; };
  if (p.empty) return "nothing launched: no data on any rank";
  if (p.n == 1)
    return p.deviceCounts ? "one rank: a copy of its block by a kernel that reads its counts in device memory"
                          : "one rank: a copy of its block (cudaMemcpyAsync)";
  const std::string ctas = [&] {
    if (p.direct || p.latency) return std::to_string(p.ctas()) + " CTAs x " + std::to_string(p.threadsPerCta()) + " threads";
    std::string c = std::to_string(p.stageCtas) + " stage + " + std::to_string(p.consumeCtas) + " consume";
    if (p.gatherCtas) c += " + " + std::to_string(p.gatherCtas) + " gather";
    return c + " CTAs x " + std::to_string(p.threads) + " threads";
  }();
  if (p.direct) {
    const std::size_t minBytes = directMinBytesOf(w);
    const std::size_t engineMin = directEngineMinBytesOf(w);
    return std::string(p.directEngine ? "direct (copy engines)" : "direct (SM stores)") + ": " + ctas +
           (by == DirectBy::Capture ? ": captured in a CUDA graph, message " : ": output in a registered buffer, message ") +
           B(p.msgBytes) + " >= directMinBytes " + B(minBytes) +
           (by == DirectBy::Capture ? ", the peers' outputs registered on every rank" : "") +
           (p.directEngine ? ", and >= the copy-engine threshold " + B(engineMin) : "");
  }
  // A device-count call is planned at its bound (n*maxCount elements).
  const std::string message = p.deviceCounts ? "message bound " : "message ";
  if (p.latency)
    return "latency (packets): " + ctas + ", flows of up to " + B(p.packetFlowBytes) + (p.words8 ? " (whole words)" : "") +
           ": " + message + B(p.msgBytes) + " <= the latency crossover " + B(w.latencyMaxBytes) +
           " and its packets fit the window" + (p.deviceCounts ? "; counts in device memory" : "");
  const std::size_t slotsNeeded = packetSlots(p.packetFlowBytes);
  const std::string why = w.latencyMaxBytes == 0 || w.latencyCtas <= 0 || w.latencyThreads <= 0
                              ? std::string("the policy has no latency program for this world size")
                          : p.msgBytes > w.latencyMaxBytes
                              ? message + B(p.msgBytes) + " > the latency crossover " + B(w.latencyMaxBytes)
                              : "a flow's " + std::to_string(slotsNeeded) + " packet slots exceed the window's " +
                                    std::to_string(p.packetRegion) + " per source";
  return std::string("throughput (") + (p.push ? "push" : "pull") + "): " + ctas + ", chunk " + B(p.chunk) + ", " +
         std::to_string(p.cpp) + " chunk(s) per partition, " + std::to_string(p.slots) + " slots: " + why +
         (p.deviceCounts ? "; counts in device memory" : "");
}

inline uint64_t planShapeKey(const Plan& p, DirectBy by) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields describePlan prints
  const auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xffu)) * 1099511628211ull;
  };
  mix(uint64_t(p.kind)), mix(uint64_t(p.n)), mix(p.msgBytes), mix(uint64_t(p.dtype)), mix(uint64_t(p.op));
  mix(uint64_t(p.root)), mix(uint64_t(p.empty) | uint64_t(p.latency) << 1 | uint64_t(p.push) << 2 |
                             uint64_t(p.direct) << 3 | uint64_t(p.directEngine) << 4 | uint64_t(p.words8) << 5 |
                             uint64_t(p.deviceCounts) << 6);
  mix(uint64_t(p.ctas())), mix(uint64_t(p.threadsPerCta())), mix(p.chunk), mix(p.packetFlowBytes);
  if (p.direct) mix(uint64_t(by));
  return h;
}

} // namespace purlin::snac
