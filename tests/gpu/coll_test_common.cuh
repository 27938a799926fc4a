/// @file coll_test_common.cuh
/// @brief The harness (coll_test_base.cuh) with the device programs of the
/// four unrooted collectives purlinc printed (generated/), their types and
/// one launch switch over them.
#pragma once

#include "coll_test_base.cuh"

// The device programs purlinc printed for dsl_examples (generated/), without
// their host API: the tests launch them with their own policies.
#define PURLIN_GEN_DEVICE_ONLY
#include "allgather.cu"
#include "allreduce.cu"
#include "alltoall.cu"
#include "reducescatter.cu"

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
Status launchColl(Coll c, Communicator& comm, const sn::CallArgs& a, cudaStream_t s) {
  switch (c) {
    case Coll::AllGather: return sn::launch<AG, P, Datapath, allGather_Programs>(comm, a, s);
    case Coll::ReduceScatter: return sn::launch<RS, P, Datapath, reduceScatter_Programs>(comm, a, s);
    case Coll::AllReduce: return sn::launch<AR, P, Datapath, allReduce_Programs>(comm, a, s);
    case Coll::AllToAll: return sn::launch<A2A, P, Datapath, allToAll_Programs>(comm, a, s);
  }
  return Status::Internal;
}

} // namespace colltest
