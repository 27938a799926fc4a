/// @file tune_launch.cu
/// @brief The tuner's calls into the runtime (tune_launch.h): the eleven
/// collectives as the SNAC types purlinc emits for dsl_examples with the
/// device programs it printed for them (generated/), the Hopper datapath,
/// and a few compiled-in pipeline variants, launched through the same
/// snac::launch the generated code calls.
///
/// Run-time knobs: snac::launch reads `P::world[n]` when it plans a call, so
/// a policy type whose `world` is a mutable static array (set just before
/// each call) passes WorldConsts at run time without touching the runtime.
/// Not thread-safe; the tuner calls from one thread per process.
#include "tune_launch.h"

#include <string>

#include "purlin/host/communicator.h"
#include "purlin/host/error.h"
#include "purlin/snac/collective.cuh"

// The programs purlinc printed for dsl_examples (generated/NAME.programs.h;
// their kernels compiled once, in purlin_generated): the tuner launches them
// with its own run-time policy.
#include "allgather.programs.h"
#include "allgatherv.programs.h"
#include "allreduce.programs.h"
#include "alltoall.programs.h"
#include "alltoallv.programs.h"
#include "broadcast.programs.h"
#include "gather.programs.h"
#include "reduce.programs.h"
#include "reducescatter.programs.h"
#include "reducescatterv.programs.h"
#include "scatter.programs.h"

namespace purlin::bench {
namespace {

using Datapath = gen::allReduce_Datapath;  // the generated kernels' datapath

constexpr std::size_t kStagingBytes = std::size_t(256) << 20;

/// A policy type whose compile-time part is one pipeline variant and whose
/// per-world knobs are set at run time (see the file comment).
template <int S, int B> struct TunePolicy {
  static constexpr int pipelineStages = S;
  static constexpr int stageBytes = B;
  /// The tuner times bf16 sums only (tunedCall); the kernels serve every pair.
  static constexpr std::size_t stagingBytes = kStagingBytes;
  static inline snac::WorldConsts world[kMaxRanks + 1] = {};
};

/// The variants: the pipeline the generated kernels were compiled for (the
/// built-in policy's, S = 8 x 16 KiB: paper §5.2, the H200 bandwidth-delay
/// product with 8 CTAs). The kernels exist for that Atom only (issue 33:
/// linked from purlin_generated, not compiled here for every variant); a
/// sweep over other pipelines builds the tuner against purlinc output of a
/// policy that sets them.
using GenPolicy = gen::allReduce_Policy;
constexpr PipelineVariant kVariants[] = {{GenPolicy::pipelineStages, GenPolicy::stageBytes}};

template <class P>
Status callWith(Communicator &comm, Coll c, const snac::CallArgs &a, cudaStream_t st,
                const snac::WorldConsts &w) {
  P::world[comm.size()] = w;
  switch (c) {
#define PURLIN_TUNE_CALL(K, id) \
  case Coll::K: return snac::launch<gen::id##_Collective, P, Datapath, gen::id##_Programs>(comm, a, st);
  PURLIN_TUNE_CALL(AllGather, allGather)
  PURLIN_TUNE_CALL(ReduceScatter, reduceScatter)
  PURLIN_TUNE_CALL(AllReduce, allReduce)
  PURLIN_TUNE_CALL(AllToAll, allToAll)
  PURLIN_TUNE_CALL(Broadcast, broadcast)
  PURLIN_TUNE_CALL(Reduce, reduce)
  PURLIN_TUNE_CALL(Scatter, scatter)
  PURLIN_TUNE_CALL(Gather, gather)
  PURLIN_TUNE_CALL(AllGatherV, allGatherV)
  PURLIN_TUNE_CALL(ReduceScatterV, reduceScatterV)
  PURLIN_TUNE_CALL(AllToAllV, allToAllV)
#undef PURLIN_TUNE_CALL
  }
  return Status::InvalidArgument;
}

} // namespace

int numVariants() { return int(sizeof(kVariants) / sizeof(kVariants[0])); }
PipelineVariant variant(int i) { return kVariants[i]; }
std::size_t tuneStagingBytes() { return kStagingBytes; }

void tunedCall(Communicator &comm, Coll c, const Shape &s, const void *in, void *out,
               cudaStream_t stream, const snac::WorldConsts &world, int v) {
  snac::CallArgs a{};
  a.in = in;
  a.out = out;
  a.count = s.count;
  a.dtype = DType::BF16;
  a.op = RedOp::Sum;
  a.root = kRoot;
  a.counts = s.counts;  // the V forms (coll_shape.h: the paper's split)
  const A2AVArrays arrays = a2avArrays(s, comm.rank());
  a.sendCounts = arrays.sendCounts, a.sendDispls = arrays.sendDispls;
  a.recvCounts = arrays.recvCounts, a.recvDispls = arrays.recvDispls;
  a.maxCount = s.maxCount;
  Status st = Status::InvalidArgument;
  switch (v) {
  case 0: st = callWith<TunePolicy<GenPolicy::pipelineStages, GenPolicy::stageBytes>>(comm, c, a, stream, world); break;
  default: PURLIN_THROW(Status::InvalidArgument, "tunedCall: no pipeline variant " + std::to_string(v));
  }
  if (st != Status::Ok)
    PURLIN_THROW(st, std::string("Purlin ") + collName(c) + ": " + snac::lastError());
}

} // namespace purlin::bench
