/// @file snac_plan_test.cpp
/// @brief Unit tests of the SNAC protocol arithmetic (signal indices and
/// values, partitions, chunks, CTA slices) and of
/// snac::makePlan (validation, latency/throughput dispatch identical on
/// every rank, byte ranges, chunking and cyclic staging slots).
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "purlin/host/workspace.h"
#include "purlin/snac/plan.h"
#include "plan_fixtures.h"

using namespace purlin;
using namespace purlin::snac;

using namespace plantest;

TEST_CASE("signal regions match the workspace layout and do not overlap") {
  CHECK(kStagedBase == kSignalStaged);
  CHECK(kReducedBase == kSignalReduced);
  CHECK(kConsumedBase == kSignalConsumed);
  CHECK(kGatheredBase == kSignalGathered);
  CHECK(kDoneBase == kSignalDone);
  CHECK(std::size_t(snac::kNumSignals) == purlin::kNumSignals);
  std::set<uint32_t> seen;
  for (int src = 0; src < kMaxRanks; ++src)
    for (int slot : {0, 1, kMaxSlots - 1, int(kSlotsPerSource) - 1}) {
      for (uint32_t idx : {stagedIndex(src, slot), reducedIndex(src, slot), consumedIndex(src, slot),
                           gatheredIndex(src, slot)}) {
        CHECK(idx < kDoneBase);
        CHECK(seen.insert(idx).second);
      }
    }
  CHECK(doneIndex(kMaxRanks - 1) < kArrivedBase);
  CHECK(kArrivedBase == kSignalArrived);
  for (int src = 0; src < kMaxRanks; ++src)
    for (int cta : {0, 1, kMaxEpochSlots - 1})
      for (uint32_t idx : {arrivedIndex(src, cta), putIndex(src, cta), backIndex(src, cta)}) {
        CHECK(idx >= kArrivedBase);
        CHECK(idx < snac::kNumSignals);
        CHECK(seen.insert(idx).second);
      }
  CHECK(kEnginePutBase == kSignalEngine);
  for (int k : {0, 1, kMaxEngineChunks - 1})
    for (uint32_t idx : {enginePutIndex(k), engineBackIndex(k)}) {
      CHECK(idx > backIndex(kMaxRanks - 1, kMaxEpochSlots - 1));
      CHECK(idx < snac::kNumSignals);
      CHECK(seen.insert(idx).second);
    }
  CHECK(kFailedIndex == engineBackIndex(kMaxEngineChunks - 1) + 1);
  CHECK(seen.insert(kFailedIndex).second);
  for (uint64_t e : {1ull, 2ull})
    for (int src = 0; src < kMaxRanks; ++src) {
      CHECK(callCheckIndex(e, src) > kFailedIndex);
      CHECK(callCheckIndex(e, src) < snac::kNumSignals);
      CHECK(seen.insert(callCheckIndex(e, src)).second);
    }
  CHECK(callCheckIndex(3, kMaxRanks - 1) + 1 == kArrivedTagBase);
  for (int src = 0; src < kMaxRanks; ++src)
    for (int cta : {0, 1, kMaxEpochSlots - 1}) {
      CHECK(arrivedTagIndex(src, cta) < snac::kNumSignals);
      CHECK(seen.insert(arrivedTagIndex(src, cta)).second);
    }
  CHECK(arrivedTagIndex(kMaxRanks - 1, kMaxEpochSlots - 1) + 1 == kVerdictBase);
  for (uint64_t e : {2u, 3u})
    for (int src = 0; src < kMaxRanks; ++src) {
      CHECK(verdictIndex(e, src) < snac::kNumSignals);
      CHECK(seen.insert(verdictIndex(e, src)).second);
    }
  CHECK(verdictIndex(3, kMaxRanks - 1) + 1 == snac::kGridBarrierIndex);
  CHECK(seen.insert(snac::kGridBarrierIndex).second);
  CHECK(snac::kGridBarrierIndex == snac::kNumSignals - 1);
  CHECK(kNumCounters <= 4096);
  CHECK(kGridBarrierCounter > kNumCounters);  // after the rooted programs' DONE counter (kNumCounters)
  CHECK(kGridBarrierCounter < 4096);
}

TEST_CASE("signal values increase over rounds and epochs and are never 0") {
  for (uint64_t e : {1ull, 2ull, 1000ull, (1ull << 40)}) {
    CHECK(signalValue(e, 0) > 0);
    CHECK(signalValue(e, 0) < signalValue(e, 1));
    CHECK(signalValue(e, (1u << 20) - 1) < signalValue(e + 1, 0));
    CHECK(signalValue(e - 1, 7) < signalValue(e, 0));
  }
  CHECK(parityHalf(1) != parityHalf(2));
  CHECK(parityHalf(1) == parityHalf(3));
}

TEST_CASE("partitions of uneven counts cover the count, sizes differ by at most one") {
  for (std::size_t count : {0ul, 1ul, 7ul, 1023ul, 262147ul, (1ul << 40) + 3}) {
    for (int n = 1; n <= kMaxRanks; ++n) {
      std::size_t sum = 0, lo = ~std::size_t(0), hi = 0;
      for (int k = 0; k < n; ++k) {
        CHECK(partitionBegin(count, n, k) == sum);
        const std::size_t s = partitionSize(count, n, k);
        sum += s;
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      CHECK(sum == count);
      CHECK(hi - lo <= 1);
    }
  }
  CHECK(partitionBegin(7, 2, 1) == 3);  // floor(k*count/n)
}

TEST_CASE("chunks and CTA slices tile a range, slices 16-byte aligned") {
  for (std::size_t len : {0ul, 1ul, 15ul, 16ul, 1000ul, (1ul << 20) + 6}) {
    for (std::size_t chunk : {16ul, 4096ul, 1ul << 20}) {
      std::size_t covered = 0;
      const int chunks = int((len + chunk - 1) / chunk);
      for (int c = 0; c < chunks + 2; ++c) {
        CHECK(chunkBegin(len, chunk, c) == std::min(len, c * chunk));
        covered += chunkSize(len, chunk, c);
      }
      CHECK(covered == len);
    }
    for (int parts : {1, 3, 8, 16}) {
      std::size_t covered = 0;
      for (int i = 0; i < parts; ++i) {
        const std::size_t b = sliceBegin(len, parts, i);
        CHECK((b % 16 == 0 || b == len));
        CHECK(b == covered);
        covered += sliceSize(len, parts, i);
      }
      CHECK(covered == len);
    }
  }
}

TEST_CASE("makePlan: byte ranges per collective") {
  Plan p;
  std::string err;
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 1, args(kIn, kOut, 7), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.txOff[0] == 0);
  CHECK(p.txLen[0] == 3 * 2);
  CHECK(p.txOff[1] == 3 * 2);
  CHECK(p.txLen[1] == 4 * 2);
  CHECK(p.msgBytes == 14);
  REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 2, args(kIn, kOut, 5, DType::F32), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.rxOff[3] == 3 * 5 * 4);
  CHECK(p.txLen[0] == 20);
  CHECK(p.msgBytes == 4 * 20);
  CHECK(p.stageParts() == 1);
  REQUIRE(makeExamplePlan(CollKind::ReduceScatter, 4, 2, args(kIn, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.txOff[3] == 30);
  CHECK(p.rxOff[2] == 0);
  REQUIRE(makeExamplePlan(CollKind::AllToAll, 4, 2, args(kIn, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.rxOff[1] == 10);
  CHECK(p.txOff[1] == 10);
}

TEST_CASE("kinds: what each runtime collective is (collectives.def)") {
  static_assert(kNumCollKinds == 11);  // every row of collectives.def runs
  STATIC_REQUIRE(isReduction(CollKind::ReduceScatter));
  STATIC_REQUIRE(isReduction(CollKind::AllReduce));
  STATIC_REQUIRE(isReduction(CollKind::Reduce));
  STATIC_REQUIRE_FALSE(isReduction(CollKind::Broadcast));
  STATIC_REQUIRE_FALSE(isReduction(CollKind::Gather));
  STATIC_REQUIRE(isComposition(CollKind::AllReduce));
  STATIC_REQUIRE(isComposition(CollKind::Broadcast));
  STATIC_REQUIRE(isComposition(CollKind::Reduce));
  STATIC_REQUIRE_FALSE(isComposition(CollKind::Scatter));
  STATIC_REQUIRE(hasPackedInput(CollKind::AllGather));
  STATIC_REQUIRE(hasPackedInput(CollKind::Gather));
  STATIC_REQUIRE_FALSE(hasPackedInput(CollKind::Scatter));
  STATIC_REQUIRE_FALSE(hasPackedInput(CollKind::Broadcast));  // Scatter's input, partitioned
  STATIC_REQUIRE(rootProduces(CollKind::Scatter));
  STATIC_REQUIRE(rootProduces(CollKind::Broadcast));
  STATIC_REQUIRE(rootConsumes(CollKind::Gather));
  STATIC_REQUIRE(rootConsumes(CollKind::Reduce));
  STATIC_REQUIRE_FALSE(isRooted(CollKind::AllToAll));
  CHECK(std::string(toString(CollKind::Broadcast)) == "Broadcast");
}

TEST_CASE("makePlan: rooted collectives") {
  Plan p;
  std::string err;
  auto rooted = [](const void* in, void* out, std::size_t count, int root) {
    CallArgs a = args(in, out, count);
    a.root = root;
    return a;
  };
  for (CollKind k : {CollKind::Broadcast, CollKind::Reduce, CollKind::Scatter, CollKind::Gather}) {
    for (int bad : {-1, 4}) {
      CHECK(makeExamplePlan(k, 4, 1, rooted(kIn, kOut, 5, bad), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
            Status::InvalidArgument);
      CHECK(err.find("root " + std::to_string(bad) + " out of range (0..3)") != std::string::npos);
    }
    // Every rank plans the same program; the root is in the plan.
    for (std::size_t count : {1ul, 131073ul, 1ul << 22}) {
      Plan first;
      for (int r = 0; r < 4; ++r) {
        REQUIRE(makeExamplePlan(k, 4, r, rooted(kIn, kOut, count, 2), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
                Status::Ok);
        CHECK(p.root == 2);
        if (r == 0) first = p;
        CHECK(p.latency == first.latency);
        CHECK(p.cpp == first.cpp);
        CHECK(p.slots == first.slots);
      }
      CHECK(p.latency == (p.msgBytes <= kWorld.latencyMaxBytes));
      if (!p.latency) CHECK(p.gatherCtas == (isComposition(k) ? kWorld.gatherCtas : 0));
      if (!p.latency) CHECK((p.ySlots > 0) == isComposition(k));
    }
  }
  // Byte ranges: Broadcast / Reduce partition the count like AllReduce
  // (a one-shot latency flow of the whole message); Scatter and Gather
  // move count elements per rank.
  REQUIRE(makeExamplePlan(CollKind::Broadcast, 2, 1, rooted(kIn, kOut, 7, 0), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.txLen[1] == 4 * 2);
  CHECK(p.rxOff[1] == 3 * 2);
  CHECK(p.msgBytes == 14);
  CHECK(p.packetFlowBytes == 14);
  REQUIRE(makeExamplePlan(CollKind::Gather, 4, 3, rooted(kIn, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.stageParts() == 1);
  CHECK(p.rxOff[2] == 2 * 5 * 2);
  CHECK(p.msgBytes == 4 * 5 * 2);
  REQUIRE(makeExamplePlan(CollKind::Scatter, 4, 1, rooted(kIn, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.stageParts() == 3);
  CHECK(p.txOff[2] == 2 * 5 * 2);
  CHECK(p.rxOff[1] == 0);
  // The buffers a non-root does not use may be null; the root's may not.
  CHECK(makeExamplePlan(CollKind::Scatter, 4, 1, rooted(nullptr, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Broadcast, 4, 1, rooted(nullptr, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Gather, 4, 1, rooted(kIn, nullptr, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Reduce, 4, 1, rooted(kIn, nullptr, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Gather, 4, 3, rooted(kIn, nullptr, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::Scatter, 4, 3, rooted(nullptr, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::Reduce, 4, 1, rooted(nullptr, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  // In place: Broadcast / Reduce in == out; Gather the root's block of its
  // output; Scatter the root's block of its input. Other overlaps are refused.
  CHECK(makeExamplePlan(CollKind::Broadcast, 4, 3, rooted(kOut, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Reduce, 4, 3, rooted(kOut, kOut, 5, 3), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::Gather, 4, 3, rooted(kOut + 3 * 10, kOut, 5, 3), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::Gather, 4, 3, rooted(kOut + 2 * 10, kOut, 5, 3), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::Scatter, 4, 3, rooted(kOut, kOut + 3 * 10, 5, 3), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::Scatter, 4, 3, rooted(kOut, kOut + 10, 5, 3), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  // Never the direct program.
  REQUIRE(makeExamplePlan(CollKind::Gather, 2, 0, rooted(kIn, kOut, 1u << 24, 0), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  CHECK_FALSE(exampleWantsDirect(p, kWorld));
}

TEST_CASE("makePlan: the dispatch decision is the same on every rank") {
  const CollKind kinds[] = {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll};
  for (CollKind k : kinds)
    for (int n : {2, 3, 8})
      for (std::size_t count : {1ul, 7ul, 65536ul, 131071ul, 131101ul, 262147ul, 1ul << 24}) {
        Plan first;
        for (int r = 0; r < n; ++r) {
          Plan p;
          std::string err;
          REQUIRE(makeExamplePlan(k, n, r, args(kIn, kOut, count), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
          CHECK(p.latency == (p.msgBytes <= kWorld.latencyMaxBytes));
          if (!p.latency) {
            CHECK(p.chunk % 16 == 0);
            CHECK(p.slots >= p.stageParts());
            CHECK(p.slots <= kMaxSlots);
            CHECK(std::size_t(p.cpp) * p.chunk >= p.maxLen);
            CHECK(p.ctas() <= 32);
          }
          if (r == 0) {
            first = p;
          } else {
            CHECK(p.latency == first.latency);
            CHECK(p.chunk == first.chunk);
            CHECK(p.cpp == first.cpp);
            CHECK(p.slots == first.slots);
            CHECK(p.ySlots == first.ySlots);
          }
        }
      }
}

TEST_CASE("makePlan: the latency program only when the packet window holds the payload") {
  Plan p;
  std::string err;
  // 256 KiB message, AllReduce one shot: 256 KiB payload per source = 512 KiB of packets.
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 128u << 10), kWorld, kStaging, 1u << 20, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.latency);
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 128u << 10), kWorld, kStaging, 1u << 19, p, err, kAtomStages) ==
          Status::Ok);
  CHECK_FALSE(p.latency);
}

TEST_CASE("makePlan: staging beyond capacity uses cyclic slots; too small is an error") {
  Plan p;
  std::string err;
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 3u << 20), kWorld, 1u << 20, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK_FALSE(p.latency);
  CHECK(p.yOffset == 512u << 10);
  CHECK(std::size_t(p.slots) * p.chunk <= p.yOffset);
  CHECK(p.stageSequence() > p.slots);  // cyclic
  CHECK(p.ySlots >= 1);
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 3u << 20), kWorld, 4096, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("staging too small") != std::string::npos);
}

TEST_CASE("makePlan: a chunk count that would overflow is an error, not a truncated transfer") {
  Plan p;
  std::string err;
  WorldConsts tiny = kWorld;
  tiny.chunkBytes = 16;  // the smallest the policy loader accepts
  tiny.latencyMaxBytes = 0;
  // 2^34 bf16 per rank = 32 GiB: 2^31 chunks of 16 B, beyond int.
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 34), tiny, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("chunks of 16 bytes per partition: too many") != std::string::npos);
  // The same policy with a message that fits is fine.
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, 1u << 20), tiny, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
}

TEST_CASE("makePlan: bad arguments give a status and a message") {
  Plan p;
  std::string err;
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 0, args(nullptr, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("input pointer is null") != std::string::npos);
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, nullptr, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CallArgs a = args(kIn, kOut, 5);
  a.dtype = DType(kNumDTypes);  // past the last of purlin/types.def
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, a, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("is not one purlin knows") != std::string::npos);
  a = args(kIn, kOut, 5);
  a.op = RedOp(9);
  CHECK(makeExamplePlan(CollKind::ReduceScatter, 2, 0, a, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Unsupported);
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, a, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);  // copies ignore op
  CHECK(makeExamplePlan(CollKind::AllReduce, 9, 0, args(kIn, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 2, args(kIn, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn + 1, kOut, 5), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);  // not element-aligned
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, std::size_t(1) << 62), kWorld, kStaging, kPackets, p,
                 err, kAtomStages) == Status::InvalidArgument);
  WorldConsts none{};
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 5), none, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
}

TEST_CASE("makePlan: in place in NCCL's forms only; count 0 is empty") {
  Plan p;
  std::string err;
  std::byte* buf = kOut;
  const std::size_t count = 100, E = 2;
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 1, args(buf, buf, count), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 1, args(buf + count * E, buf, count), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::Ok);
  CHECK(makeExamplePlan(CollKind::ReduceScatter, 2, 1, args(buf, buf + count * E, count), kWorld, kStaging, kPackets, p,
                 err, kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::AllToAll, 2, 1, args(buf, buf, count), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::AllReduce, 2, 1, args(buf, buf + 2, count), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 1, args(nullptr, nullptr, 0), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK(p.empty);
}

TEST_CASE("makePlan (push): per-source regions fit the staging half; chunks scale with the message") {
  for (int n = 2; n <= 8; ++n)
    for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll})
      for (std::size_t count : {std::size_t(1) << 10, std::size_t(300007), std::size_t(1) << 22, std::size_t(1) << 28})
        for (std::size_t staging : {std::size_t(1) << 20, kStaging}) {
          WorldConsts w = kWorld;
          w.latencyMaxBytes = 0;
          w.push = true;
          w.chunkBytes = 4u << 20;
          Plan p;
          std::string err;
          REQUIRE(makeExamplePlan(k, n, 0, args(kIn, kOut, count), w, staging, kPackets, p, err, kAtomStages) == Status::Ok);
          INFO(toString(k) << " n=" << n << " count=" << count << " staging=" << staging);
          CHECK(p.push);
          CHECK_FALSE(p.latency);
          CHECK(p.chunk % 16 == 0);
          CHECK(p.chunk <= w.chunkBytes);
          CHECK(p.chunk <= p.regionBytes);
          CHECK((p.chunk >= kMinPushChunk || p.chunk == p.regionBytes));
          CHECK(std::size_t(p.cpp) * p.chunk >= p.maxLen);
          CHECK(std::size_t(p.cpp - 1) * p.chunk < std::max<std::size_t>(p.maxLen, 1));
          CHECK(p.slots >= 1);
          CHECK(p.slots <= kMaxSlots);
          CHECK(std::size_t(p.slots) * p.chunk <= p.regionBytes);
          CHECK(std::size_t(n - 1) * p.regionBytes <= staging);
          CHECK(p.regionBytes % 16 == 0);
          if (k == CollKind::AllReduce) {
            CHECK(p.ySlots >= 1);
            CHECK(p.ySlots <= kMaxYSlots);
            CHECK(p.yOffset >= std::size_t(n - 1) * p.regionBytes);
            CHECK(p.yOffset + std::size_t(n - 1) * p.yRegionBytes <= staging);
            CHECK(std::size_t(p.ySlots) * p.chunk <= p.yRegionBytes);
          }
          CHECK(p.pushSequence() == p.cpp * (n - 1));
        }
}

TEST_CASE("makePlan (push): about chunksPerCta chunks per CTA of the busiest role, within [min, cap]") {
  WorldConsts w = kWorld;
  w.latencyMaxBytes = 0;
  w.push = true;
  w.stageCtas = 16;
  w.consumeCtas = 16;
  w.chunkBytes = 4u << 20;
  w.lanes = 1;
  w.consumeLanes = 1;
  Plan p;
  std::string err;
  // AllGather on 2 ranks, 16 CTAs per role x 4 chunks per CTA = 64 chunks per peer.
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, kAtomStages) == Status::Ok);
  // count is in f32 elements: 128 MiB per rank -> 2 MiB chunks (64 of them).
  CHECK(p.chunk == (std::size_t(2) << 20));
  CHECK(p.cpp == 64);
  w.chunksPerCta = 1;  // 8 MiB wanted, capped at 4 MiB
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.chunk == (std::size_t(4) << 20));
  // Two lanes per CTA: twice the workers, so half the chunk (1 MiB).
  w.chunksPerCta = 0;
  w.lanes = 2;
  w.consumeLanes = 2;
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.lanes == 2);
  CHECK(p.consumeLanes == 2);
  CHECK(p.chunk == (std::size_t(1) << 20));
  w.consumeLanes = 1;  // stage 32 workers, consume 16: chunks follow the larger
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.consumeLanes == 1);
  CHECK(p.chunk == (std::size_t(1) << 20));
  w.consumeLanes = 2;
  w.threads = 96;  // 48-thread lanes are not whole warps: one lane
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.lanes == 1);
  w.threads = 512;
  // An Atom of an odd number of stages cannot be split between two lanes
  // (pushLanes, the rule the printed kernel's LaneAtomOf and the IR share).
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, std::size_t(32) << 20, DType::F32), w, kStaging,
                   kPackets, p, err, 7) == Status::Ok);
  CHECK(p.lanes == 1);
  CHECK(p.consumeLanes == 1);
  static_assert(pushLanes(0, kDefaultLanes, 512, 8) == 2 && pushLanes(0, kDefaultConsumeLanes, 512, 8) == 1);
  static_assert(pushLanes(2, 1, 512, 6) == 2 && pushLanes(2, 1, 512, 1) == 1 && pushLanes(2, 1, 480, 8) == 1);
  w.lanes = 3;
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 1, args(kIn, kOut, 1000), w, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("lanes") != std::string::npos);
  w.lanes = 1;
  w.consumeLanes = 1;
  // A small message gets the minimum chunk.
  REQUIRE(makeExamplePlan(CollKind::ReduceScatter, 2, 0, args(kIn, kOut, 1000), w, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.chunk == kMinPushChunk);
  CHECK(p.cpp == 1);
  // Staging below 4096 bytes per source is an error with a message.
  CHECK(makeExamplePlan(CollKind::AllToAll, 8, 0, args(kIn, kOut, 1000), w, 7 * 4000, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("push") != std::string::npos);
}

TEST_CASE("direct program: wanted by sizes and policy only, the same on every rank") {
  const std::vector<std::byte> dummy;
  for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll})
    for (int n : {2, 4, 8})
      for (std::size_t count : {std::size_t(1000), std::size_t(1) << 16, std::size_t(1) << 17, std::size_t(1) << 24}) {
        int wanted = -1;
        for (int r = 0; r < n; ++r) {
          Plan p;
          std::string err;
          // Rank-dependent pointers must not change the answer.
          const std::byte* in = kIn + 4096 * std::size_t(r) + (r % 2) * 2;
          std::byte* out = kOut + 4096 * std::size_t(r);
          REQUIRE(makeExamplePlan(k, n, r, args(in, out, count), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
          const int w = exampleWantsDirect(p, kWorld) ? 1 : 0;
          if (wanted < 0) wanted = w;
          CHECK(w == wanted);
        }
        const std::size_t msg = (k == CollKind::AllReduce ? 1 : std::size_t(n)) * count * 2;
        const bool expect = msg >= kDirectMinBytes && (n == 2 || !isReduction(k));
        CHECK(wanted == (expect ? 1 : 0));
      }
  // directCtas < 0 turns it off; directMinBytes moves the threshold.
  WorldConsts off = kWorld;
  off.directCtas = -1;
  WorldConsts big = kWorld;
  big.directMinBytes = std::size_t(128) << 20;  // above the 64 MiB message below
  Plan p;
  std::string err;
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 24), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(exampleWantsDirect(p, kWorld));
  CHECK_FALSE(exampleWantsDirect(p, off));
  CHECK_FALSE(exampleWantsDirect(p, big));
}

TEST_CASE("direct program: this rank's buffers decide eligibility (alignment, 16-byte ranges, overlap)") {
  auto plan = [](CollKind k, const void* in, void* out, std::size_t count, int r = 0) {
    Plan p;
    std::string err;
    REQUIRE(makeExamplePlan(k, 2, r, args(in, out, count), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
    return p;
  };
  const std::size_t c = std::size_t(1) << 20;
  for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll})
    CHECK(directEligible(plan(k, kIn, kOut, c), args(kIn, kOut, c)));
  // Element-aligned but not 16-byte aligned: staged.
  CHECK_FALSE(directEligible(plan(CollKind::AllGather, kIn + 2, kOut, c), args(kIn + 2, kOut, c)));
  CHECK_FALSE(directEligible(plan(CollKind::AllReduce, kIn, kOut + 2, c), args(kIn, kOut + 2, c)));
  // Byte ranges not multiples of 16 (AllReduce partitions of an odd count).
  CHECK_FALSE(directEligible(plan(CollKind::AllReduce, kIn, kOut, c + 1), args(kIn, kOut, c + 1)));
  CHECK_FALSE(directEligible(plan(CollKind::AllToAll, kIn, kOut, c + 4), args(kIn, kOut, c + 4)));
  // In place: AllGather's form is fine (peers write other blocks), the others are not.
  std::byte* buf = kOut;
  CHECK(directEligible(plan(CollKind::AllGather, buf + c * 2, buf, c, 1), args(buf + c * 2, buf, c)));
  CHECK_FALSE(directEligible(plan(CollKind::AllReduce, buf, buf, c), args(buf, buf, c)));
  CHECK_FALSE(directEligible(plan(CollKind::ReduceScatter, buf, buf + c * 2, c, 1), args(buf, buf + c * 2, c)));
}

TEST_CASE("direct program: shape grows with the message, at most directCtas; rounds tile a slice") {
  Plan p;
  std::string err;
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 18), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  planExampleDirect(p, kWorld);
  CHECK(p.direct);
  CHECK_FALSE(p.latency);
  CHECK(p.directCtas == int(p.msgBytes / kDirectBytesPerCta));  // 1 MiB / 64 KiB = 16
  CHECK(p.ctas() == p.directCtas);
  CHECK(p.threadsPerCta() == kDirectThreads);
  // 64 MiB: the SM form (below kDirectEngineMinBytes).
  REQUIRE(makeExamplePlan(CollKind::AllReduce, 2, 1, args(kIn, kOut, std::size_t(1) << 25), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  WorldConsts w = kWorld;
  w.directCtas = 24;
  w.directThreads = 2000;
  planExampleDirect(p, w);
  CHECK(p.directCtas == 24);
  CHECK(p.directThreads == kDirectMaxThreads);
  for (std::size_t len : {std::size_t(0), std::size_t(16), std::size_t(65536), std::size_t(1) << 20, (std::size_t(33) << 20) + 48,
                          std::size_t(1) << 34}) {
    const std::size_t rb = directRoundBytes(len), n = directRounds(len);
    CHECK(rb % 16 == 0);
    CHECK(rb >= (std::size_t(256) << 10));
    CHECK(rb <= (std::size_t(4) << 20));
    CHECK(n * rb >= len);
    CHECK((n == 0 ? len == 0 : (n - 1) * rb < len));
    CHECK(n < (std::size_t(1) << 20));
  }
}

TEST_CASE("direct program, copy-engine form: copies with one CTA, reductions with the reduce kernel's shape") {
  Plan p;
  std::string err;
  for (CollKind k : {CollKind::AllReduce, CollKind::ReduceScatter}) {
    REQUIRE(makeExamplePlan(k, 2, 0, args(kIn, kOut, std::size_t(1) << 29), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
    planExampleDirect(p, kWorld);
    CHECK(p.directEngine);                   // >= kDirectEngineMinBytes
    CHECK(p.directCtas == kDirectCtas);
    CHECK(p.directThreads == kDirectEngineReduceThreads);
    REQUIRE(makeExamplePlan(k, 2, 0, args(kIn, kOut, std::size_t(1) << 24), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
    planExampleDirect(p, kWorld);
    CHECK_FALSE(p.directEngine);             // 32-64 MiB: SM stores
    CHECK(p.directThreads == kDirectThreads);
  }
  for (CollKind k : {CollKind::AllGather, CollKind::AllToAll}) {
    REQUIRE(makeExamplePlan(k, 2, 0, args(kIn, kOut, std::size_t(1) << 29), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
    planExampleDirect(p, kWorld);
    CHECK(p.directEngine);                   // 1 GiB >= kDirectEngineMinBytes
    CHECK(p.directCtas == 1);
  }
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 20), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  planExampleDirect(p, kWorld);
  CHECK_FALSE(p.directEngine);
  WorldConsts never = kWorld;
  never.directEngineMinBytes = ~std::size_t(0);
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 29), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  planExampleDirect(p, never);
  CHECK_FALSE(p.directEngine);
  // An eager registered call takes the SM form at any size (its copies
  // would be enqueued before the peers' tags are compared).
  REQUIRE(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn, kOut, std::size_t(1) << 29), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  planExampleDirect(p, kWorld, EngineFacts{false, true, true, false});
  CHECK(p.direct);
  CHECK_FALSE(p.directEngine);
}

TEST_CASE("copy-engine reduction chunks tile the partition, 16-byte multiples, few and tapering") {
  for (bool ar : {false, true})
    for (std::size_t len : {std::size_t(0), std::size_t(16), std::size_t(1) << 20, (std::size_t(64) << 20) + 16,
                            std::size_t(256) << 20, std::size_t(512) << 20, (std::size_t(512) << 20) + 48,
                            std::size_t(1) << 40}) {
      std::size_t done = 0, prev = ~std::size_t(0);
      int k = 0;
      for (std::size_t c; (c = engineChunkBytes(ar, len, done, k)) != 0; done += c, ++k) {
        CHECK(k < kMaxEngineChunks);
        CHECK((done + c == len || c % 16 == 0));  // only the last chunk may end off the 16-byte grid
        if (!ar && len >= kEngineMinChunkBytes) CHECK(c >= kEngineMinChunkBytes);  // no tiny tail chunk
        if (!ar && done + c < len && k + 1 < kMaxEngineChunks - 1) CHECK(c <= prev);  // tapers
        prev = c;
      }
      CHECK(done == len);
      CHECK(k == engineChunks(ar, len));
      if (ar) CHECK(k <= 2);
      CHECK(engineChunkBytes(ar, len, len, k) == 0);
    }
  // ReduceScatter, 512 MiB partition (1 GiB message on two ranks): halves down to 8 MiB.
  std::vector<std::size_t> got;
  std::size_t done = 0;
  for (std::size_t c; (c = engineChunkBytes(false, std::size_t(512) << 20, done, int(got.size()))) != 0; done += c)
    got.push_back(c >> 20);
  CHECK(got == std::vector<std::size_t>{256, 128, 64, 32, 16, 8, 8});
  // A remainder below the minimum joins the last chunk: 64 MiB + 16 B -> 32, 16, 8, 8 MiB + 16 B.
  got.clear();
  done = 0;
  for (std::size_t c; (c = engineChunkBytes(false, (std::size_t(64) << 20) + 16, done, int(got.size()))) != 0; done += c)
    got.push_back(c);
  CHECK(got == std::vector<std::size_t>{std::size_t(32) << 20, std::size_t(16) << 20, std::size_t(8) << 20,
                                        (std::size_t(8) << 20) + 16});
  // AllReduce: two halves.
  CHECK(engineChunkBytes(true, std::size_t(512) << 20, 0, 0) == (std::size_t(256) << 20));
  CHECK(engineChunks(true, std::size_t(512) << 20) == 2);
}

TEST_CASE("scaleRoleCtas fits the roles of ranks sharing a GPU into the budget") {
  // 8 ranks on a 132-SM GPU, one throughput CTA per SM: 16 CTAs per rank.
  int ar[3] = {8, 16, 8};
  REQUIRE(snac::scaleRoleCtas(16, ar, 3));
  CHECK(ar[0] + ar[1] + ar[2] == 16);
  CHECK(ar[0] == 4);
  CHECK(ar[1] == 8);
  CHECK(ar[2] == 4);
  // Absent roles stay absent; what fits is unchanged.
  int rs[3] = {8, 16, 0};
  REQUIRE(snac::scaleRoleCtas(24, rs, 3));
  CHECK((rs[0] == 8 && rs[1] == 16 && rs[2] == 0));
  REQUIRE(snac::scaleRoleCtas(5, rs, 3));
  CHECK(rs[2] == 0);
  CHECK(rs[0] >= 1);
  CHECK(rs[0] + rs[1] <= 5);
  // Rounding up to one CTA per role cannot overshoot the budget.
  int skew[3] = {1, 30, 1};
  REQUIRE(snac::scaleRoleCtas(3, skew, 3));
  CHECK((skew[0] == 1 && skew[1] == 1 && skew[2] == 1));
  for (int budget = 3; budget <= 40; ++budget) {
    int r[3] = {7, 19, 3};
    REQUIRE(snac::scaleRoleCtas(budget, r, 3));
    CHECK(r[0] + r[1] + r[2] <= budget);
    CHECK((r[0] >= 1 && r[1] >= 1 && r[2] >= 1));
  }
  // Not even one CTA per role: refused, counts unchanged.
  int tight[3] = {8, 16, 8};
  CHECK_FALSE(snac::scaleRoleCtas(2, tight, 3));
  CHECK((tight[0] == 8 && tight[1] == 16 && tight[2] == 8));
}

TEST_CASE("makePlan: copies move every dtype's bytes; reductions take every dtype and op") {
  Plan p;
  std::string err;
  for (int t = 0; t < kNumDTypes; ++t) {
    const DType d = DType(t);
    const std::size_t E = dtypeSize(d);
    INFO(toString(d));
    REQUIRE((E == 1 || E == 2 || E == 4 || E == 8));
    // An odd count: 1-byte types give odd byte ranges.
    REQUIRE(makeExamplePlan(CollKind::AllGather, 4, 1, args(kIn, kOut, 7, d), kWorld, kStaging, kPackets, p, err,
                     kAtomStages) == Status::Ok);
    CHECK(p.elemSize == E);
    CHECK(p.txLen[0] == 7 * E);
    CHECK(p.rxOff[3] == 3 * 7 * E);
    CHECK(p.msgBytes == 4 * 7 * E);
    CallArgs b = args(kIn, kOut, 5, d);
    b.root = 0;
    REQUIRE(makeExamplePlan(CollKind::Broadcast, 2, 1, b, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
    CHECK(p.msgBytes == 5 * E);
    const Status red = makeExamplePlan(CollKind::AllReduce, 2, 0, args(kIn, kOut, 5, d), kWorld, kStaging, kPackets, p, err,
                                kAtomStages);
    CHECK(red == Status::Ok);
    CHECK(p.dtype == d);
    for (int o = 0; o < kNumRedOps; ++o) {
      CallArgs c = args(kIn, kOut, 5, d);
      c.op = RedOp(o);
      INFO(toString(RedOp(o)));
      CHECK(makeExamplePlan(CollKind::ReduceScatter, 2, 1, c, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
      CHECK(p.op == RedOp(o));
    }
  }
  // A misaligned pointer for an 8-byte type.
  CHECK(makeExamplePlan(CollKind::AllGather, 2, 0, args(kIn + 4, kOut, 5, DType::I64), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
}
