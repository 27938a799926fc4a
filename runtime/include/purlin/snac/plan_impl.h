/// @file plan_impl.h
/// @brief Inline definitions of makePlan() (plan.h): validation, dispatch,
/// byte ranges, chunk and slot sizing. Header-only so generated code needs
/// no extra library; included by plan.h only.
#pragma once

#include <limits>
#include <string>

namespace purlin::snac {

inline const char* toString(CollKind k) {
  switch (k) {
    case CollKind::AllGather: return "AllGather";
    case CollKind::ReduceScatter: return "ReduceScatter";
    case CollKind::AllReduce: return "AllReduce";
    case CollKind::AllToAll: return "AllToAll";
  }
  return "?";
}

namespace detail {

inline Status fail(std::string& error, Status s, CollKind k, const std::string& what) {
  error = std::string("purlin::snac::launch<") + toString(k) + ">: " + what;
  return s;
}

inline bool rangesOverlap(const void* a, std::size_t na, const void* b, std::size_t nb) {
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return na && nb && pa < pb + nb && pb < pa + na;
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

} // namespace detail

inline Status makePlan(CollKind kind, int n, int rank, const CallArgs& a,
                       const WorldConsts& w, std::size_t stagingCapacity,
                       std::size_t packetHalfBytes, Plan& p, std::string& error) {
  using detail::fail;
  p = Plan{};
  p.kind = kind;
  p.n = n;
  p.rank = rank;
  if (n < 1 || n > kMaxRanks || rank < 0 || rank >= n)
    return fail(error, Status::InvalidArgument, kind,
                "world size " + std::to_string(n) + " / rank " + std::to_string(rank) +
                    " out of range (1.." + std::to_string(kMaxRanks) + ")");
  if (a.dtype != DType::F32 && a.dtype != DType::F16 && a.dtype != DType::BF16)
    return fail(error, Status::Unsupported, kind,
                "unsupported dtype " + std::to_string(int(a.dtype)) + " (f32, f16, bf16)");
  if (isReduction(kind) && a.op != RedOp::Sum && a.op != RedOp::Max && a.op != RedOp::Min)
    return fail(error, Status::Unsupported, kind,
                "unsupported reduction op " + std::to_string(int(a.op)) + " (sum, max, min)");
  p.dtype = a.dtype;
  p.op = a.op;
  p.elemSize = uint32_t(dtypeSize(a.dtype));
  const std::size_t E = p.elemSize;
  // Overflow: n*count*E must fit comfortably (also keeps round numbers < 2^20).
  if (a.count > (std::size_t(1) << 40) / E / std::size_t(n))
    return fail(error, Status::InvalidArgument, kind,
                "count " + std::to_string(a.count) + " too large");
  const std::size_t cE = a.count * E;
  switch (kind) {
    case CollKind::AllGather:
      for (int k = 0; k < n; ++k) {
        p.txOff[k] = 0; p.txLen[k] = cE;
        p.rxOff[k] = std::size_t(k) * cE; p.rxLen[k] = cE;
      }
      p.msgBytes = std::size_t(n) * cE;
      break;
    case CollKind::ReduceScatter:
      for (int k = 0; k < n; ++k) {
        p.txOff[k] = std::size_t(k) * cE; p.txLen[k] = cE;
        p.rxOff[k] = 0; p.rxLen[k] = cE;
      }
      p.msgBytes = std::size_t(n) * cE;
      break;
    case CollKind::AllToAll:
      for (int k = 0; k < n; ++k) {
        p.txOff[k] = std::size_t(k) * cE; p.txLen[k] = cE;
        p.rxOff[k] = std::size_t(k) * cE; p.rxLen[k] = cE;
      }
      p.msgBytes = std::size_t(n) * cE;
      break;
    case CollKind::AllReduce:
      for (int k = 0; k < n; ++k) {
        p.txOff[k] = p.rxOff[k] = partitionBegin(a.count, n, k) * E;
        p.txLen[k] = p.rxLen[k] = partitionSize(a.count, n, k) * E;
      }
      p.msgBytes = cE;
      break;
  }
  for (int k = 0; k < n; ++k) p.maxLen = p.maxLen > p.txLen[k] ? p.maxLen : p.txLen[k];
  if (a.count == 0) {
    p.empty = true;
    return Status::Ok;
  }
  const std::size_t inBytes = kind == CollKind::AllGather ? cE : (kind == CollKind::AllReduce ? cE : std::size_t(n) * cE);
  const std::size_t outBytes = kind == CollKind::ReduceScatter ? cE : (kind == CollKind::AllReduce ? cE : std::size_t(n) * cE);
  if (!a.in) return fail(error, Status::InvalidArgument, kind, "input pointer is null with count " + std::to_string(a.count));
  if (!a.out) return fail(error, Status::InvalidArgument, kind, "output pointer is null with count " + std::to_string(a.count));
  if (reinterpret_cast<std::uintptr_t>(a.in) % E || reinterpret_cast<std::uintptr_t>(a.out) % E)
    return fail(error, Status::InvalidArgument, kind, "pointers must be aligned to the element size " + std::to_string(E));
  // In place is supported exactly in NCCL's forms; any other overlap is an error.
  {
    const auto* in = static_cast<const std::byte*>(a.in);
    auto* out = static_cast<std::byte*>(a.out);
    bool inPlace = false;
    if (kind == CollKind::AllReduce) inPlace = in == out;
    if (kind == CollKind::AllGather) inPlace = in == out + std::size_t(rank) * cE;
    if (kind == CollKind::ReduceScatter) inPlace = out == in + std::size_t(rank) * cE;
    if (!inPlace && detail::rangesOverlap(in, inBytes, out, outBytes))
      return fail(error, Status::InvalidArgument, kind,
                  "input and output overlap other than in NCCL's in-place form");
  }
  if (n == 1) return Status::Ok;  // a local copy; no kernel
  if (w.latencyCtas <= 0 && w.stageCtas <= 0)
    return fail(error, Status::InvalidArgument, kind,
                "the policy has no settings for world size " + std::to_string(n));

  // Dispatch: message bytes against the policy crossover, and the packet
  // window must hold every source's payload (16-byte packet per 8 bytes).
  p.packetRegion = packetHalfBytes / sizeof(Packet) / std::size_t(n);
  // (AllReduce's latency program is one-shot: every source sends its whole input.)
  const std::size_t perSource = kind == CollKind::AllReduce ? p.msgBytes : p.maxLen;
  const std::size_t wordsNeeded = (perSource + 7) / 8;
  p.latency = w.latencyCtas > 0 && w.latencyThreads > 0 && p.msgBytes <= w.latencyMaxBytes &&
              wordsNeeded <= p.packetRegion;
  p.latencyCtas = w.latencyCtas;
  p.latencyThreads = w.latencyThreads;
  if (p.latency) return Status::Ok;

  if (w.stageCtas <= 0 || w.consumeCtas <= 0 || w.threads <= 0 ||
      (kind == CollKind::AllReduce && w.gatherCtas <= 0))
    return fail(error, Status::InvalidArgument, kind,
                "the policy's throughput CTA counts for world size " + std::to_string(n) + " are zero");
  p.stageCtas = w.stageCtas;
  p.consumeCtas = w.consumeCtas;
  p.gatherCtas = kind == CollKind::AllReduce ? w.gatherCtas : 0;
  p.threads = w.threads;
  const bool compose = kind == CollKind::AllReduce;
  const std::size_t region = compose ? (stagingCapacity / 2) & ~std::size_t(15) : stagingCapacity & ~std::size_t(15);
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
  p.cpp = int((p.maxLen + p.chunk - 1) / p.chunk);
  if (p.cpp < 1) p.cpp = 1;
  std::size_t slots = region / p.chunk;
  p.slots = int(slots < std::size_t(kMaxSlots) ? slots : std::size_t(kMaxSlots));
  if (compose) {
    p.ySlots = int(slots < std::size_t(kMaxYSlots) ? slots : std::size_t(kMaxYSlots));
    p.yOffset = region;
  }
  if (std::size_t(p.stageSequence()) / std::size_t(p.slots) >= (std::size_t(1) << 20))
    return fail(error, Status::InvalidArgument, kind, "too many cyclic staging rounds (staging too small for this count)");
  return Status::Ok;
}

} // namespace purlin::snac
