/// @file workspace_protocol_test.cpp
/// @brief The workspace layout agrees with the SNAC protocol's arithmetic
/// (snac/protocol.h): signal index regions fit numSignals, epoch values and
/// parity halves behave as docs/snac-protocol.md says, partitions, chunks and
/// slices of uneven sizes cover their range exactly.
#include <catch2/catch.hpp>

#include <set>

#include "purlin/host/communicator.h"
#include "purlin/host/workspace.h"
#include "purlin/snac/protocol.h"

using namespace purlin;
namespace sn = purlin::snac;

TEST_CASE("signal regions of the protocol fit the workspace's signal array") {
  CHECK(sn::kNumSignals == kNumSignals);
  CHECK(sn::kStagedBase == kSignalStaged);
  CHECK(sn::kReducedBase == kSignalReduced);
  CHECK(sn::kConsumedBase == kSignalConsumed);
  CHECK(sn::kGatheredBase == kSignalGathered);
  CHECK(sn::kDoneBase == kSignalDone);
  CHECK(sn::kSlotsPerSource == kSignalSlots);
  std::set<uint32_t> seen;
  for (int src = 0; src < kMaxRanks; ++src) {
    for (int slot : {0, 1, 511, 1023}) {
      for (uint32_t i : {sn::stagedIndex(src, slot), sn::reducedIndex(src, slot),
                         sn::consumedIndex(src, slot), sn::gatheredIndex(src, slot)}) {
        CHECK(i < kNumSignals);
        CHECK(seen.insert(i).second); // no two (region, src, slot) share a signal
      }
    }
    CHECK(sn::doneIndex(src) < kNumSignals);
    CHECK(seen.insert(sn::doneIndex(src)).second);
  }
  WorkspaceLayout l = computeLayout(CommOptions{}, 8);
  CHECK(l.numSignals == kNumSignals);
  CHECK(l.signalsBytes >= kNumSignals * sizeof(uint64_t));
}

TEST_CASE("signal values increase strictly over epochs and rounds, never 0") {
  uint64_t prev = 0;
  for (uint64_t e = 1; e < 200; ++e)
    for (uint32_t round : {0u, 1u, 2u, 1000u, (1u << 20) - 1}) {
      uint64_t v = sn::signalValue(e, round);
      CHECK(v > prev);
      prev = v;
    }
  // A new call's first value exceeds every round of the previous call.
  CHECK(sn::signalValue(5, 0) > sn::signalValue(4, (1u << 20) - 1));
  CHECK(sn::signalValue(1, 0) != 0);
}

TEST_CASE("halves alternate by epoch parity") {
  WorkspaceLayout l = computeLayout(CommOptions{}, 2);
  for (uint64_t e = 1; e < 100; ++e) {
    int h = sn::parityHalf(e);
    CHECK(h == int(e % 2));
    CHECK(h != sn::parityHalf(e + 1));
    CHECK(h == sn::parityHalf(e + 2)); // call e+2 reuses call e's half
    std::size_t stagingEnd = l.stagingOffset + (h + 1) * l.stagingHalfBytes;
    std::size_t packetsEnd = l.packetsOffset + (h + 1) * l.packetHalfBytes;
    CHECK(stagingEnd <= l.stateOffset);
    CHECK(packetsEnd <= l.stagingOffset);
  }
}

TEST_CASE("packet groups: 496 payload bytes and a header in 32 slots of 16 bytes") {
  CHECK(sn::kGroupPayloadBytes == 496);
  CHECK(sn::kGroupSlots * sizeof(Packet) == 512);
  CHECK(sn::kFullBit == (uint64_t(1) << 63));
  CHECK(sn::packetGroups(0) == 0);
  CHECK(sn::packetGroups(1) == 1);
  CHECK(sn::packetGroups(496) == 1);
  CHECK(sn::packetGroups(497) == 2);
  CHECK(sn::packetGroups(1024) == 3);
  for (std::size_t b = 1; b < 100000; b = b * 3 + 1) {
    CHECK(sn::packetGroups(b) * sn::kGroupPayloadBytes >= b);
    CHECK((sn::packetGroups(b) - 1) * sn::kGroupPayloadBytes < b);
  }
}

TEST_CASE("packet headers: the epoch's low 31 bits above the flow's tag, clear of the full bit") {
  CHECK(sn::packetHeader(0, 0) == 0);
  CHECK(sn::packetHeader(5, 0xdeadbeefu) == ((uint64_t(5) << 32) | 0xdeadbeefu));
  // Epochs 2^31 apart share a header; neither reaches the full bit.
  const uint64_t e = (uint64_t(1) << 31) + 7;
  CHECK(sn::packetHeader(e, 1) == sn::packetHeader(7, 1));
  CHECK((sn::packetHeader(~uint64_t(0), ~uint32_t(0)) & sn::kFullBit) == 0);
  // Consecutive calls, and the call two before (the same half), differ.
  CHECK(sn::packetHeader(41, 3) != sn::packetHeader(43, 3));
  CHECK(sn::packetHeader(42, 3) != sn::packetHeader(42, 4));
}

TEST_CASE("partitions of uneven counts cover [0, count) in order") {
  for (int n = 1; n <= kMaxRanks; ++n)
    for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(8),
                              std::size_t(1000003), (std::size_t(1) << 40) + 5}) {
      std::size_t next = 0, lo = ~std::size_t(0), hi = 0;
      for (int k = 0; k < n; ++k) {
        CHECK(sn::partitionBegin(count, n, k) == next);
        std::size_t s = sn::partitionSize(count, n, k);
        lo = std::min(lo, s);
        hi = std::max(hi, s);
        next += s;
      }
      CHECK(next == count);
      CHECK(hi - lo <= 1); // balanced
    }
}

TEST_CASE("chunks and 16-byte slices cover a range exactly") {
  for (std::size_t len : {0, 1, 15, 16, 17, 4095, 65536, 1000001}) {
    for (std::size_t chunk : {16, 4096, 1 << 20}) {
      std::size_t covered = 0;
      for (int c = 0; sn::chunkBegin(len, chunk, c) < len; ++c) {
        CHECK(sn::chunkBegin(len, chunk, c) == covered);
        covered += sn::chunkSize(len, chunk, c);
      }
      CHECK(covered == len);
    }
    for (int parts : {1, 3, 8, 64}) {
      std::size_t covered = 0;
      for (int i = 0; i < parts; ++i) {
        CHECK(sn::sliceBegin(len, parts, i) == covered);
        if (sn::sliceBegin(len, parts, i) < len && sn::sliceBegin(len, parts, i + 1) < len)
          CHECK(sn::sliceSize(len, parts, i) % 16 == 0);
        covered += sn::sliceSize(len, parts, i);
      }
      CHECK(covered == len);
    }
  }
}

TEST_CASE("describeSignal names every signal region") {
  CHECK(describeSignal(1027) == "1027 (STAGED src 1 slot 3)");
  CHECK(describeSignal(uint32_t(sn::reducedIndex(2, 5))) == std::to_string(sn::reducedIndex(2, 5)) + " (REDUCED src 2 slot 5)");
  CHECK(describeSignal(uint32_t(sn::doneIndex(3))) == std::to_string(sn::doneIndex(3)) + " (DONE src 3)");
  CHECK(describeSignal(sn::arrivedIndex(1, 7)) == std::to_string(sn::arrivedIndex(1, 7)) + " (ARRIVED src 1 cta 7)");
  CHECK(describeSignal(sn::backIndex(7, 127)) == std::to_string(sn::backIndex(7, 127)) + " (BACK src 7 cta 127)");
  CHECK(describeSignal(sn::engineBackIndex(63)) == std::to_string(sn::engineBackIndex(63)) + " (E_BACK chunk 63)");
  CHECK(describeSignal(sn::kFailedIndex) == std::to_string(sn::kFailedIndex) + " (FAILED)");
  CHECK(describeSignal(sn::callCheckIndex(2, 1)) == std::to_string(sn::callCheckIndex(2, 1)) + " (CALL parity 0 src 1)");
  CHECK(describeSignal(sn::callCheckIndex(3, 7)) == std::to_string(sn::callCheckIndex(3, 7)) + " (CALL parity 1 src 7)");
  CHECK(describeSignal(sn::verdictIndex(3, 2)) == std::to_string(sn::verdictIndex(3, 2)) + " (VERDICT parity 1 src 2)");
  CHECK(describeSignal(sn::verdictIndex(4, 7)) == std::to_string(sn::verdictIndex(4, 7)) + " (VERDICT parity 0 src 7)");
  CHECK(sn::verdictIndex(5, 7) + 1 == sn::kGridBarrierIndex);
  CHECK(describeSignal(sn::kGridBarrierIndex) ==
        std::to_string(sn::kGridBarrierIndex) + " (GRID: the device API's grid barrier)");
  CHECK(sn::kGridBarrierIndex + 1 == sn::kNumSignals);
  CHECK(describeSignal(sn::kNumSignals) == std::to_string(sn::kNumSignals));
}
