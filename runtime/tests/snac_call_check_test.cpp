/// @file snac_call_check_test.cpp
/// @brief Unit tests of what ranks agree on, or tell each other, about one
/// call: the FAILED codes, the checked mode's call hash and its per-peer
/// values (callCheckOf, callCheckFor: AllToAllV's flows paired), the
/// latency program's packet-group headers (Plan::flowTagTo / flowTagFrom,
/// compared by every receiver in every mode), and whose
/// argument a refusal was (RefusalScope: Own fails the communicator on
/// every rank, Shared leaves it usable).
#include <catch2/catch.hpp>

#include "plan_fixtures.h"
#include "purlin/snac/plan.h"

using namespace purlin;
using namespace purlin::snac;

using namespace plantest;

TEST_CASE("failure codes name their origin and kind and are never 0") {
  for (int origin = 0; origin < kMaxRanks; ++origin)
    for (uint32_t kind = 0; kind <= uint32_t(WaitErrorKind::ArrivalMismatch); ++kind) {
      const uint64_t code = failureCode(origin, kind);
      CHECK(code != 0);
      CHECK(failureOrigin(code) == origin);
      CHECK(failureKind(code) == kind);
    }
}

TEST_CASE("call-check values carry the epoch above the call hash") {
  const uint64_t check = (uint64_t(1) << 32) | 0x89abcdefu;
  CHECK(callCheckValue(5, check) == ((uint64_t(5) << 32) | 0x89abcdefu));
  CHECK(callCheckValue((uint64_t(1) << 33) + 7, check) >> 32 == 7);  // low 32 bits of the epoch
  CHECK(callCheckIndex(4, 1) == callCheckIndex(6, 1));                // by parity
  CHECK(callCheckIndex(4, 1) != callCheckIndex(5, 1));
}

TEST_CASE("the call hash covers what ranks must agree on: a copy's dtype too") {
  CallArgs a;
  a.count = 4096;
  a.dtype = DType::BF16;
  const uint64_t ag = callCheckOf(CollKind::AllGather, 2, a);
  CHECK(ag >> 32 == 1);  // the check is on
  CHECK(callCheckOf(CollKind::AllGather, 2, a) == ag);
  CallArgs f32 = a;
  f32.dtype = DType::F32;  // same count, twice the bytes per rank: must not pass
  CHECK(callCheckOf(CollKind::AllGather, 2, f32) != ag);
  CallArgs op = a;
  op.op = RedOp::Max;  // a copy ignores the op
  CHECK(callCheckOf(CollKind::AllGather, 2, op) == ag);
  CHECK(callCheckOf(CollKind::AllReduce, 2, op) != callCheckOf(CollKind::AllReduce, 2, a));
  CallArgs count = a;
  count.count = 4097;
  CHECK(callCheckOf(CollKind::AllGather, 2, count) != ag);
  CHECK(callCheckOf(CollKind::ReduceScatter, 2, a) != ag);
  CallArgs root = a;
  root.root = 1;
  CHECK(callCheckOf(CollKind::Broadcast, 2, root) != callCheckOf(CollKind::Broadcast, 2, a));
  const std::size_t counts[2] = {3, 5}, other[2] = {3, 6};
  CallArgs v = a, w = a;
  v.counts = counts;
  w.counts = other;
  CHECK(callCheckOf(CollKind::AllGatherV, 2, v) != callCheckOf(CollKind::AllGatherV, 2, w));
}

TEST_CASE("the call check pairs AllToAllV's two ends of every flow: rank r's sendCounts[q], rank q's recvCounts[r]") {
  // Three ranks; flow p -> q carries flow[p][q] elements, as both ends see it.
  const std::size_t flow[3][3] = {{4, 1, 0}, {2, 3, 4}, {0, 4, 1}};
  std::size_t send[3][3], recv[3][3], displ[3] = {0, 4, 8};
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) send[r][q] = flow[r][q], recv[r][q] = flow[q][r];
  auto argsOf = [&](int r) {
    CallArgs a;
    a.dtype = DType::BF16;
    a.maxCount = 4;
    a.sendCounts = send[r], a.recvCounts = recv[r], a.sendDispls = displ, a.recvDispls = displ;
    return a;
  };
  // What rank p writes to q is what q expects from p.
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      if (p != q)
        CHECK(callCheckFor(CollKind::AllToAllV, 3, p, argsOf(p)).toPeer[q] ==
              callCheckFor(CollKind::AllToAllV, 3, q, argsOf(q)).fromPeer[p]);
  // Rank 0 expects 3 from rank 2, which sends 4: both ends of that pair see
  // the disagreement (the sender too), the other pairs agree.
  recv[0][2] = 3;
  CHECK(callCheckFor(CollKind::AllToAllV, 3, 2, argsOf(2)).toPeer[0] !=
        callCheckFor(CollKind::AllToAllV, 3, 0, argsOf(0)).fromPeer[2]);
  CHECK(callCheckFor(CollKind::AllToAllV, 3, 0, argsOf(0)).toPeer[2] !=
        callCheckFor(CollKind::AllToAllV, 3, 2, argsOf(2)).fromPeer[0]);
  CHECK(callCheckFor(CollKind::AllToAllV, 3, 1, argsOf(1)).toPeer[0] ==
        callCheckFor(CollKind::AllToAllV, 3, 0, argsOf(0)).fromPeer[1]);
  CHECK(callCheckFor(CollKind::AllToAllV, 3, 0, argsOf(0)).toPeer[1] ==
        callCheckFor(CollKind::AllToAllV, 3, 1, argsOf(1)).fromPeer[0]);
  // Every other collective writes and expects its hash.
  CallArgs c;
  c.count = 7;
  const CallCheck ar = callCheckFor(CollKind::AllReduce, 3, 1, c);
  for (int q = 0; q < 3; ++q) CHECK((ar.toPeer[q] == callCheckOf(CollKind::AllReduce, 3, c) && ar.fromPeer[q] == ar.toPeer[q]));
}

namespace {
/// Rank `rank`'s latency plan of a call (REQUIREd to plan the latency program).
Plan latencyPlan(CollKind k, int n, int rank, const CallArgs& a) {
  Plan p;
  std::string error;
  const Status st = makeExamplePlan(k, n, rank, a, kWorld, kStaging, kPackets, p, error, kAtomStages);
  INFO(toString(k) << " rank " << rank << ": " << error);
  REQUIRE(st == Status::Ok);
  REQUIRE(p.latency);
  return p;
}
} // namespace

TEST_CASE("packet headers: a flow's tag on the sender is the receiver's expected tag exactly when the ranks agree") {
  const CallArgs a = args(kIn, kOut, 1000);
  for (CollKind k : {CollKind::AllGather, CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllToAll}) {
    const Plan p0 = latencyPlan(k, 3, 0, a), p2 = latencyPlan(k, 3, 2, a);
    CHECK(p0.flowTagTo[2] == p2.flowTagFrom[0]);
    CHECK(p2.flowTagTo[0] == p0.flowTagFrom[2]);
    CHECK(p0.flowTagTo[2] == uint32_t(callCheckOf(k, 3, a)));
    // Another count, dtype or kind on rank 2: every flow's tag differs.
    CallArgs more = a;
    more.count = 1001;
    CHECK(latencyPlan(k, 3, 2, more).flowTagFrom[0] != p0.flowTagTo[2]);
    CallArgs f32 = a;
    f32.dtype = DType::F32;
    CHECK(latencyPlan(k, 3, 2, f32).flowTagFrom[0] != p0.flowTagTo[2]);
  }
  CHECK(latencyPlan(CollKind::AllGather, 3, 2, a).flowTagFrom[0] != latencyPlan(CollKind::AllToAll, 3, 0, a).flowTagTo[2]);
  // AllToAllV: each flow's tag pairs both flows' lengths between two ranks.
  std::size_t counts[2] = {5, 5}, displs[2] = {0, 5}, more[2] = {6, 5}, moreDispls[2] = {0, 6};
  CallArgs v = args(kIn, kOut, 0);
  v.sendCounts = counts, v.sendDispls = displs, v.recvCounts = counts, v.recvDispls = displs, v.maxCount = 8;
  const Plan v0 = latencyPlan(CollKind::AllToAllV, 2, 0, v), v1 = latencyPlan(CollKind::AllToAllV, 2, 1, v);
  CHECK(v0.flowTagTo[1] == v1.flowTagFrom[0]);
  CHECK(v1.flowTagTo[0] == v0.flowTagFrom[1]);
  CallArgs w = v;
  w.recvCounts = more, w.recvDispls = moreDispls;  // rank 1 expects 6 from rank 0, which sends 5
  const Plan w1 = latencyPlan(CollKind::AllToAllV, 2, 1, w);
  CHECK(w1.flowTagFrom[0] != v0.flowTagTo[1]);
  CHECK(w1.flowTagTo[0] != v0.flowTagFrom[1]);
}

TEST_CASE("makePlan: a refusal says whose argument it was (this rank's own, or what every rank passes alike)") {
  // This rank's own: pointers (null, misaligned, overlapping); the launcher
  // then fails the communicator on every rank (Communicator::refuseCall).
  CHECK(refusalScopeOf(CollKind::AllReduce, 2, 0, args(nullptr, kOut, 5)) == RefusalScope::Own);
  CHECK(refusalScopeOf(CollKind::AllGather, 2, 0, args(kIn, nullptr, 5)) == RefusalScope::Own);
  CHECK(refusalScopeOf(CollKind::AllReduce, 2, 0, args(kIn + 1, kOut, 5)) == RefusalScope::Own);
  CHECK(refusalScopeOf(CollKind::ReduceScatter, 2, 0, args(kIn, const_cast<std::byte*>(kIn) + 2, 5)) == RefusalScope::Own);  // overlap
  // Alike on every rank: kind and world, count, dtype, op, root; every rank
  // making the same call refuses it too, and the communicator stays usable.
  CallArgs a = args(kIn, kOut, 5);
  a.dtype = DType(kNumDTypes);
  CHECK(refusalScopeOf(CollKind::AllGather, 2, 0, a) == RefusalScope::Shared);
  a = args(kIn, kOut, 5);
  a.op = RedOp(9);
  CHECK(refusalScopeOf(CollKind::AllReduce, 2, 0, a) == RefusalScope::Shared);
  CHECK(refusalScopeOf(CollKind::AllReduce, 2, 0, args(kIn, kOut, std::size_t(1) << 62)) == RefusalScope::Shared);
  a = args(kIn, kOut, 5);
  a.root = 7;
  CHECK(refusalScopeOf(CollKind::Broadcast, 2, 0, a) == RefusalScope::Shared);
  // A call that plans is Shared (nothing to tell).
  CHECK(refusalScopeOf(CollKind::AllReduce, 2, 0, args(kIn, kOut, 5)) == RefusalScope::Shared);
  // AllToAllV: this rank's rows of counts and displacements are its own;
  // the bound (maxCount) every rank shares.
  std::size_t counts[2] = {5, 5}, displs[2] = {0, 5}, big[2] = {5, 9};
  CallArgs v = args(kIn, kOut, 0);
  v.sendCounts = counts, v.sendDispls = displs, v.recvCounts = counts, v.recvDispls = displs, v.maxCount = 5;
  CHECK(refusalScopeOf(CollKind::AllToAllV, 2, 0, v) == RefusalScope::Shared);
  v.recvCounts = big;  // recvCounts[1] = 9 > maxCount
  CHECK(refusalScopeOf(CollKind::AllToAllV, 2, 0, v) == RefusalScope::Own);
  v.recvCounts = nullptr;
  CHECK(refusalScopeOf(CollKind::AllToAllV, 2, 0, v) == RefusalScope::Own);
  v.recvCounts = counts;
  v.maxCount = std::size_t(1) << 60;  // the shared bound too large
  CHECK(refusalScopeOf(CollKind::AllToAllV, 2, 0, v) == RefusalScope::Shared);
}
