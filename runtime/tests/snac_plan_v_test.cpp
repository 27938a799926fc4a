/// @file snac_plan_v_test.cpp
/// @brief Unit tests of snac::makePlan for the V forms: AllGatherV and
/// ReduceScatterV (counts[n], the same on every rank) and AllToAllV (MPI's
/// arrays and the shared bound maxCount): byte ranges, the same program and
/// chunking on every rank, in-place forms, and the refusals.
#include <catch2/catch.hpp>

#include <string>

#include "plan_fixtures.h"
#include "purlin/snac/plan.h"

using namespace plantest;

TEST_CASE("makePlan: V forms (counts per rank, the same array on every rank)") {
  Plan p;
  std::string err;
  auto vargs = [](const void* in, void* out, const std::size_t* counts) {
    CallArgs a = args(in, out, 0);
    a.counts = counts;
    return a;
  };
  STATIC_REQUIRE(isVariable(CollKind::AllGatherV));
  STATIC_REQUIRE(isVariable(CollKind::ReduceScatterV));
  STATIC_REQUIRE_FALSE(isVariable(CollKind::AllGather));
  STATIC_REQUIRE(hasPackedInput(CollKind::AllGatherV));
  STATIC_REQUIRE(isReduction(CollKind::ReduceScatterV));
  const std::size_t counts[4] = {3, 0, 1000, 7};  // displacements 0, 3, 3, 1003; total 1010
  // AllGatherV: rank r sends its counts[r] to every rank; rank p's block
  // lands at displ[p]; the largest segment is every rank's, not this one's.
  REQUIRE(makeExamplePlan(CollKind::AllGatherV, 4, 1, vargs(nullptr, kOut, counts), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);  // nothing to send: a null input is fine
  CHECK(p.txLen[0] == 0);
  CHECK(p.rxOff[2] == 3 * 2);
  CHECK(p.rxLen[2] == 1000 * 2);
  CHECK(p.rxOff[3] == 1003 * 2);
  CHECK(p.maxLen == 1000 * 2);
  CHECK(p.msgBytes == 1010 * 2);
  CHECK(p.packetFlowBytes == p.maxLen);
  CHECK(p.latency);
  CHECK_FALSE(p.words8);  // displacements 3 and 1003 elements: not whole words
  // ReduceScatterV: partition k at displ[k] goes to rank k; rank r's output
  // is counts[r] elements.
  REQUIRE(makeExamplePlan(CollKind::ReduceScatterV, 4, 2, vargs(kIn, kOut, counts), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  CHECK(p.txOff[3] == 1003 * 2);
  CHECK(p.txLen[3] == 7 * 2);
  CHECK(p.rxLen[0] == 1000 * 2);
  CHECK(p.rxOff[0] == 0);
  CHECK(p.stageParts() == 3);
  // Every rank plans the same program and chunking (global maxLen), here
  // the throughput program with a large partition on one rank.
  const std::size_t big[4] = {5, 1u << 22, 0, 11};
  for (CollKind k : {CollKind::AllGatherV, CollKind::ReduceScatterV}) {
    Plan first;
    for (int r = 0; r < 4; ++r) {
      REQUIRE(makeExamplePlan(k, 4, r, vargs(kIn, kOut, big), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
      if (r == 0) first = p;
      CHECK_FALSE(p.latency);
      CHECK(p.maxLen == (std::size_t(1) << 22) * 2);
      CHECK(p.cpp == first.cpp);
      CHECK(p.chunk == first.chunk);
      CHECK(p.slots == first.slots);
    }
    CHECK_FALSE(exampleWantsDirect(p, kWorld));  // no direct program for the V forms
  }
  // Whole words everywhere: the latency fast path.
  const std::size_t even[2] = {4, 12};
  REQUIRE(makeExamplePlan(CollKind::AllGatherV, 2, 0, vargs(kIn, kOut, even), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  CHECK(p.words8);
  // All zero: nothing to do (no pointer needed).
  const std::size_t zeros[3] = {0, 0, 0};
  REQUIRE(makeExamplePlan(CollKind::ReduceScatterV, 3, 0, vargs(nullptr, nullptr, zeros), kWorld, kStaging, kPackets, p, err,
                   kAtomStages) == Status::Ok);
  CHECK(p.empty);
  // In place: AllGatherV's input is its block of the output (at displ[r]),
  // ReduceScatterV's output its partition of the input; other overlaps refused.
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 3, vargs(kOut + 1003 * 2, kOut, counts), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 3, vargs(kOut + 3 * 7 * 2, kOut, counts), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(makeExamplePlan(CollKind::ReduceScatterV, 4, 2, vargs(kOut, kOut + 3 * 2, counts), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::Ok);
  CHECK(makeExamplePlan(CollKind::ReduceScatterV, 4, 2, vargs(kOut, kOut + 2 * 2, counts), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  // Bad count arrays: null, one too large (a negative count as size_t), a
  // sum that overflows; a null buffer that has elements to move.
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 0, vargs(kIn, kOut, nullptr), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(err.find("counts is null") != std::string::npos);
  const std::size_t negative[2] = {1, std::size_t(-3)};
  CHECK(makeExamplePlan(CollKind::ReduceScatterV, 2, 0, vargs(kIn, kOut, negative), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(err.find("counts[1] = " + std::to_string(std::size_t(-3)) + " too large") != std::string::npos);
  const std::size_t sum[2] = {std::size_t(3) << 37, std::size_t(3) << 37};
  CHECK(makeExamplePlan(CollKind::AllGatherV, 2, 0, vargs(kIn, kOut, sum), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("counts[1] = " + std::to_string(std::size_t(3) << 37) + ": the counts add up to too many elements") !=
        std::string::npos);
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 2, vargs(nullptr, kOut, counts), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(err.find("input pointer is null with 1000 elements") != std::string::npos);
}

TEST_CASE("makePlan: AllToAllV (MPI's counts and displacements, a bound every rank shares)") {
  Plan p;
  std::string err;
  // Rank 1 of 3: sends 4 / 0 / 9 elements from displacements 20 / 0 / 3,
  // receives 2 / 0 / 5 at 0 / 7 / 2; maxCount 10 bounds every rank's counts.
  std::size_t sc[3] = {4, 0, 9}, sd[3] = {20, 0, 3}, rc[3] = {2, 0, 5}, rd[3] = {0, 7, 2};
  auto a2av = [&](std::size_t maxCount) {
    CallArgs a = args(kIn, kOut, 0);
    a.sendCounts = sc, a.sendDispls = sd, a.recvCounts = rc, a.recvDispls = rd, a.maxCount = maxCount;
    return a;
  };
  REQUIRE(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(10), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.txOff[0] == 20 * 2);
  CHECK(p.txLen[2] == 9 * 2);
  CHECK(p.rxOff[2] == 2 * 2);
  CHECK(p.rxLen[0] == 2 * 2);
  CHECK(p.maxLen == 10 * 2);  // the bound, the same on every rank
  CHECK(p.msgBytes == 3 * 10 * 2);
  CHECK(p.latency);
  // A count above the bound, on either side.
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(8), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("sendCounts[2] = 9 exceeds maxCount 8") != std::string::npos);
  // The block to itself has one size.
  rc[1] = 1, rd[1] = 30;
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(10), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("sendCounts[1] = 0 but recvCounts[1] = 1") != std::string::npos);
  rc[1] = 0;
  // Received blocks must not overlap (2 elements at 0 and 5 at 1).
  rd[2] = 1;
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(10), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("the blocks from ranks 0 and 2 overlap") != std::string::npos);
  rd[2] = 2;
  // Null arrays, a bound or a displacement too large, input overlapping output.
  CallArgs bad = a2av(10);
  bad.recvDispls = nullptr;
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, bad, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("must not be null") != std::string::npos);
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(std::size_t(1) << 39), kWorld, kStaging, kPackets, p, err,
                 kAtomStages) == Status::InvalidArgument);
  CHECK(err.find("maxCount " + std::to_string(std::size_t(1) << 39) + " too large") != std::string::npos);
  sd[0] = std::size_t(-2);
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(10), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("sendDispls[0] = " + std::to_string(std::size_t(-2)) + " too large") != std::string::npos);
  sd[0] = 20;
  bad = a2av(10);
  bad.out = const_cast<std::byte*>(kIn) + 8;
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 1, bad, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  // The bound alone decides the program: every rank the same.
  REQUIRE(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(1u << 22), kWorld, kStaging, kPackets, p, err, kAtomStages) ==
          Status::Ok);
  CHECK_FALSE(p.latency);
  CHECK(p.cpp == int((std::size_t(1) << 23) / p.chunk));
  CHECK_FALSE(exampleWantsDirect(p, kWorld));
  // A zero bound: nothing anywhere.
  sc[0] = sc[2] = rc[0] = rc[2] = 0;
  REQUIRE(makeExamplePlan(CollKind::AllToAllV, 3, 1, a2av(0), kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.empty);
}

TEST_CASE("makePlan: V forms with counts in device memory (planned at the bound)") {
  Plan p;
  std::string err;
  // The pointers are device addresses the host never reads: these point
  // nowhere readable, so a host read would crash the test.
  const auto* dev = reinterpret_cast<const std::size_t*>(std::uintptr_t(1) << 42);
  auto vdev = [&](CollKind k, std::size_t maxCount) {
    CallArgs a = args(kIn, kOut, 0);
    a.countsOnDevice = true;
    a.maxCount = maxCount;
    if (hasPairCounts(k)) a.sendCounts = a.sendDispls = a.recvCounts = a.recvDispls = dev;
    else a.counts = dev;
    return a;
  };
  // AllGatherV at rank 2 of 4: blocks of maxCount elements at k*maxCount;
  // the packed input sends its block (the bound) to every rank.
  REQUIRE(makeExamplePlan(CollKind::AllGatherV, 4, 2, vdev(CollKind::AllGatherV, 100), kWorld, kStaging, kPackets, p, err,
                          kAtomStages) == Status::Ok);
  CHECK(p.deviceCounts);
  CHECK(p.msgBytes == 4 * 100 * 2);
  CHECK(p.maxLen == 100 * 2);
  CHECK(p.txOff[3] == 0);
  CHECK(p.txLen[3] == 100 * 2);
  CHECK(p.rxOff[3] == 3 * 100 * 2);
  CHECK(p.rxLen[1] == 100 * 2);
  CHECK(p.latency);
  CHECK_FALSE(p.words8);  // any count of 2-byte elements: not whole words
  CHECK(describePlan(p, kWorld).find("message bound 800 B") != std::string::npos);
  CHECK(describePlan(p, kWorld).find("counts in device memory") != std::string::npos);
  // ReduceScatterV: partition k at k*maxCount, the packed output one block.
  REQUIRE(makeExamplePlan(CollKind::ReduceScatterV, 4, 1, vdev(CollKind::ReduceScatterV, 100), kWorld, kStaging, kPackets,
                          p, err, kAtomStages) == Status::Ok);
  CHECK(p.txOff[2] == 2 * 100 * 2);
  CHECK(p.rxOff[2] == 0);
  CHECK(p.rxLen[2] == 100 * 2);
  // AllToAllV: the same blocks on both sides; 8-byte elements keep whole words.
  CallArgs a = vdev(CollKind::AllToAllV, 1000);
  a.dtype = DType::F64;
  REQUIRE(makeExamplePlan(CollKind::AllToAllV, 3, 0, a, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  CHECK(p.txOff[1] == 1000 * 8);
  CHECK(p.rxLen[2] == 1000 * 8);
  CHECK(p.words8);
  // The bound alone picks the program, the same on every rank.
  Plan first;
  for (int r = 0; r < 4; ++r) {
    REQUIRE(makeExamplePlan(CollKind::AllGatherV, 4, r, vdev(CollKind::AllGatherV, 1u << 22), kWorld, kStaging, kPackets, p,
                            err, kAtomStages) == Status::Ok);
    CHECK_FALSE(p.latency);
    if (r == 0) first = p;
    CHECK(p.cpp == first.cpp);
    CHECK(p.chunk == first.chunk);
  }
  // The buffers at the bound's capacity: AllGatherV's output is n*maxCount
  // elements, so an input inside it is refused (no in-place form), even at
  // the host form's in-place place.
  CallArgs inPlace = vdev(CollKind::AllGatherV, 100);
  inPlace.in = kOut + 2 * 100 * 2;
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 2, inPlace, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("overlap") != std::string::npos);
  inPlace.in = kOut + 4 * 100 * 2;  // just past it
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 2, inPlace, kWorld, kStaging, kPackets, p, err, kAtomStages) == Status::Ok);
  // Null arrays are this rank's refusal; a bound too large is everyone's.
  CallArgs bad = vdev(CollKind::AllToAllV, 10);
  bad.recvDispls = nullptr;
  CHECK(refusalScopeOf(CollKind::AllToAllV, 3, 0, bad) == RefusalScope::Own);
  CHECK(makeExamplePlan(CollKind::AllToAllV, 3, 0, bad, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("(device memory) must not be null") != std::string::npos);
  CHECK(makeExamplePlan(CollKind::AllGatherV, 4, 0, vdev(CollKind::AllGatherV, std::size_t(1) << 39), kWorld, kStaging,
                        kPackets, p, err, kAtomStages) == Status::InvalidArgument);
  CHECK(err.find("too large") != std::string::npos);
  // Only the V collectives take counts in device memory.
  CallArgs fixed = args(kIn, kOut, 10);
  fixed.countsOnDevice = true;
  CHECK(makeExamplePlan(CollKind::AllGather, 4, 0, fixed, kWorld, kStaging, kPackets, p, err, kAtomStages) ==
        Status::InvalidArgument);
  CHECK(err.find("are for the V collectives") != std::string::npos);
  // A zero bound: nothing anywhere.
  REQUIRE(makeExamplePlan(CollKind::AllGatherV, 4, 0, vdev(CollKind::AllGatherV, 0), kWorld, kStaging, kPackets, p, err,
                          kAtomStages) == Status::Ok);
  CHECK(p.empty);
  // The call check: a device-count call and a host-count call of the same
  // sizes differ (the counts kernel mixes the device counts in); two
  // device-count calls differ by their bound.
  const std::size_t hostCounts[4] = {100, 100, 100, 100};
  CallArgs host = args(kIn, kOut, 0);
  host.counts = hostCounts;
  CallArgs devA = vdev(CollKind::AllGatherV, 100), devB = vdev(CollKind::AllGatherV, 101);
  CHECK(callCheckOf(CollKind::AllGatherV, 4, host) != callCheckOf(CollKind::AllGatherV, 4, devA));
  CHECK(callCheckOf(CollKind::AllGatherV, 4, devA) != callCheckOf(CollKind::AllGatherV, 4, devB));
  const CallCheck pair = callCheckFor(CollKind::AllToAllV, 3, 0, vdev(CollKind::AllToAllV, 10));
  CHECK(pair.toPeer[1] == pair.fromPeer[1]);  // the host cannot mix the pair's counts: the device does
}
