/// @file coll_launch.cuh
/// @brief The four unrooted collectives as the tests name them (Coll, their
/// Transform types) and launchColl<P>, which runs one through snac::launch
/// with the programs purlinc printed (generated/NAME.programs.h): their
/// kernels are compiled once, in the purlin_generated library the tests
/// link; a test's policy changes only the host side (world constants),
/// never the kernels, which exist for the generated policy's Atom.
///
/// coll_programs.cu defines COLLTEST_PROGRAMS and instantiates launchColl
/// for the harness's policies (PAuto, PTput) into the colltest_programs
/// library every test links. A test with policies of its own (the perf
/// tests, tp_loopback_micro) defines COLLTEST_PROGRAMS before including
/// this header, which then also defines launchColl.
#pragma once

#include "test_policies.cuh"

#include "allgather.programs.h"
#include "allreduce.programs.h"
#include "alltoall.programs.h"
#include "reducescatter.programs.h"

namespace colltest {

using AG = sn::Transform<sn::Consume::Copy, sn::Layout::Packed, sn::Layout::Scattered>;
using RS = sn::Transform<sn::Consume::Reduce, sn::Layout::Scattered, sn::Layout::Packed>;
using A2A = sn::Transform<sn::Consume::Copy, sn::Layout::Scattered, sn::Layout::Transposed>;
using AR = sn::Compose<RS, AG>;

enum class Coll { AllGather, ReduceScatter, AllReduce, AllToAll };
inline const char* name(Coll c) {
  static const char* n[] = {"AllGather", "ReduceScatter", "AllReduce", "AllToAll"};
  return n[int(c)];
}
inline bool isReduce(Coll c) { return c == Coll::ReduceScatter || c == Coll::AllReduce; }

/// Runs collective c with policy P through snac::launch.
template <class P>
Status launchColl(Coll c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s);

#ifdef COLLTEST_PROGRAMS
template <class P>
Status launchColl(Coll c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s) {
  switch (c) {
    case Coll::AllGather: return sn::launch<AG, P, Datapath, purlin::gen::allGather_Programs>(comm, a, s);
    case Coll::ReduceScatter: return sn::launch<RS, P, Datapath, purlin::gen::reduceScatter_Programs>(comm, a, s);
    case Coll::AllReduce: return sn::launch<AR, P, Datapath, purlin::gen::allReduce_Programs>(comm, a, s);
    case Coll::AllToAll: return sn::launch<A2A, P, Datapath, purlin::gen::allToAll_Programs>(comm, a, s);
  }
  return Status::Internal;
}
#endif

/// snac::makePlan of a call of collective c with its printed rules
/// (NAME_PlanRules), as launchColl plans it.
inline Status planColl(Coll c, int n, int rank, const sn::CallArgs& a, const sn::WorldConsts& w, std::size_t staging,
                       std::size_t packetHalfBytes, sn::Plan& p, std::string& err, int atomStages) {
  const sn::CollKind k = sn::CollKind(int(c));
  switch (c) {
    case Coll::AllGather:
      return sn::makePlan(k, n, rank, a, w, staging, packetHalfBytes, p, err, atomStages, purlin::gen::allGather_PlanRules{});
    case Coll::ReduceScatter:
      return sn::makePlan(k, n, rank, a, w, staging, packetHalfBytes, p, err, atomStages, purlin::gen::reduceScatter_PlanRules{});
    case Coll::AllReduce:
      return sn::makePlan(k, n, rank, a, w, staging, packetHalfBytes, p, err, atomStages, purlin::gen::allReduce_PlanRules{});
    case Coll::AllToAll:
      return sn::makePlan(k, n, rank, a, w, staging, packetHalfBytes, p, err, atomStages, purlin::gen::allToAll_PlanRules{});
  }
  return Status::Internal;
}

// Compiled once, in colltest_programs (coll_programs.cu).
extern template Status launchColl<PAuto>(Coll, Communicator&, const sn::CallArgs&, cudaStream_t);
extern template Status launchColl<PTput>(Coll, Communicator&, const sn::CallArgs&, cudaStream_t);

} // namespace colltest
