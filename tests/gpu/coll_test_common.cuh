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

/// Rank r's expected output element i of collective c over n ranks with
/// `count` elements per block (inputs from fill(seed, rank)): copies exact,
/// reductions the fp32 ascending-rank reference rounded once.
inline void expectedElem(Coll c, DType t, RedOp op, std::size_t count, int n, int r, uint32_t seed, std::size_t i,
                         std::byte* want) {
  switch (c) {
    case Coll::AllGather: fromFloat(t, inputValue(seed, uint32_t(i / count), i % count), want); return;
    case Coll::AllToAll: fromFloat(t, inputValue(seed, uint32_t(i / count), r * count + i % count), want); return;
    case Coll::ReduceScatter:
    case Coll::AllReduce: {
      const std::size_t at = c == Coll::ReduceScatter ? r * count + i : i;
      float acc = inputValue(seed, 0, at);
      for (int p = 1; p < n; ++p) acc = hostOp(op, acc, inputValue(seed, uint32_t(p), at));
      fromFloat(t, acc, want);
      return;
    }
  }
}

/// Elements of a rank's input and output for collective c.
inline std::size_t inElems(Coll c, int n, std::size_t count) {
  return c == Coll::AllGather || c == Coll::AllReduce ? count : std::size_t(n) * count;
}
inline std::size_t outElems(Coll c, int n, std::size_t count) {
  return c == Coll::ReduceScatter || c == Coll::AllReduce ? count : std::size_t(n) * count;
}

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
