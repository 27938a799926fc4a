/// @file purlin_colls.cu
/// @brief Purlin calls of the benchmarked collectives (purlin_colls.h),
/// through the API purlinc generated from dsl_examples (library
/// purlin_generated), which is what users get.
#include "purlin_colls.h"

#include <string>

#include "purlin/host/communicator.h"
#include "purlin/host/error.h"
#include "purlin/snac/collective.cuh" // snac::lastError()

#if PURLIN_BENCH_GENERATED
#include "collectives.h" // generated/collectives.h from dsl_examples/collectives.pl
#else
#error "coll_bench needs the generated collectives (target purlin_generated)"
#endif

namespace purlin::bench {

const char *purlinApiName() { return "generated (purlin::gen, dsl_examples/collectives.pl)"; }

void purlinCall(Communicator &comm, Coll c, const Shape &s, const void *in, void *out,
                cudaStream_t stream) {
  Status st = Status::InvalidArgument;
  switch (c) {
  case Coll::AllGather:
    st = gen::allGather(comm, in, out, s.count, DType::BF16, stream);
    break;
  case Coll::ReduceScatter:
    st = gen::reduceScatter(comm, in, out, s.count, DType::BF16, RedOp::Sum, stream);
    break;
  case Coll::AllReduce:
    st = gen::allReduce(comm, in, out, s.count, DType::BF16, RedOp::Sum, stream);
    break;
  case Coll::AllToAll:
    st = gen::allToAll(comm, in, out, s.count, DType::BF16, stream);
    break;
  case Coll::Broadcast:
    st = gen::broadcast(comm, in, out, s.count, DType::BF16, kRoot, stream);
    break;
  case Coll::Reduce:
    st = gen::reduce(comm, in, out, s.count, DType::BF16, RedOp::Sum, kRoot, stream);
    break;
  case Coll::Scatter:
    st = gen::scatter(comm, in, out, s.count, DType::BF16, kRoot, stream);
    break;
  case Coll::Gather:
    st = gen::gather(comm, in, out, s.count, DType::BF16, kRoot, stream);
    break;
  case Coll::AllGatherV:
    st = gen::allGatherV(comm, in, out, s.counts, DType::BF16, stream);
    break;
  case Coll::ReduceScatterV:
    st = gen::reduceScatterV(comm, in, out, s.counts, DType::BF16, RedOp::Sum, stream);
    break;
  case Coll::AllToAllV: {
    const A2AVArrays a = a2avArrays(s, comm.rank());
    st = gen::allToAllV(comm, in, out, a.sendCounts, a.sendDispls, a.recvCounts, a.recvDispls, s.maxCount,
                        DType::BF16, stream);
    break;
  }
  }
  if (st != Status::Ok)
    PURLIN_THROW(st, std::string("Purlin ") + collName(c) + " failed: " + snac::lastError());
}

} // namespace purlin::bench
