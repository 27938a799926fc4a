/// @file nccl_colls.cpp
/// @brief NCCL calls of the benchmarked collectives (nccl_colls.h).
#include "nccl_colls.h"

#include <cstdlib>
#include <vector>

#include "purlin/host/bootstrap.h"
#include "purlin/host/error.h"

namespace purlin::bench {

ncclComm_t createNcclComm(Bootstrap &boot) { return createNcclComm(boot, NcclMode::Default); }

ncclComm_t createNcclComm(Bootstrap &boot, NcclMode mode) {
  if (mode == NcclMode::None) PURLIN_THROW(Status::InvalidArgument, "createNcclComm: NCCL mode 'none'");
  if (mode == NcclMode::LegacyRegister) setenv("NCCL_LEGACY_CUDA_REGISTER", "1", 1);
  ncclUniqueId id{};
  if (boot.rank() == 0) PURLIN_NCCL_CHECK(ncclGetUniqueId(&id));
  std::vector<ncclUniqueId> all(boot.size());
  boot.allGather(&id, all.data(), sizeof(id));
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (mode == NcclMode::CopyEngine) config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  PURLIN_NCCL_CHECK(ncclCommInitRankConfig(&comm, boot.size(), all[0], boot.rank(), &config));
  return comm;
}

NcclBuffers::NcclBuffers(ncclComm_t comm, NcclMode mode, std::size_t bytes)
    : comm_(comm), windows_(symmetricWindows(mode)) {
  if (!windows_) {
    PURLIN_CUDA_CHECK(cudaMalloc(&in, bytes));
    PURLIN_CUDA_CHECK(cudaMalloc(&out, bytes));
    return;
  }
  PURLIN_NCCL_CHECK(ncclMemAlloc(&in, bytes));
  PURLIN_NCCL_CHECK(ncclMemAlloc(&out, bytes));
  PURLIN_NCCL_CHECK(ncclCommWindowRegister(comm, in, bytes, &inWin_, NCCL_WIN_COLL_SYMMETRIC));
  PURLIN_NCCL_CHECK(ncclCommWindowRegister(comm, out, bytes, &outWin_, NCCL_WIN_COLL_SYMMETRIC));
}

NcclBuffers::~NcclBuffers() {
  if (!windows_) {
    (void)cudaFree(in);
    (void)cudaFree(out);
    return;
  }
  if (outWin_) (void)ncclCommWindowDeregister(comm_, outWin_);
  if (inWin_) (void)ncclCommWindowDeregister(comm_, inWin_);
  if (out) (void)ncclMemFree(out);
  if (in) (void)ncclMemFree(in);
}

void ncclCall(ncclComm_t comm, Coll c, const Shape &s, const void *in, void *out,
              cudaStream_t stream, bool alltoall) {
  switch (c) {
  case Coll::AllGather:
    PURLIN_NCCL_CHECK(ncclAllGather(in, out, s.count, ncclBfloat16, comm, stream));
    return;
  case Coll::ReduceScatter:
    PURLIN_NCCL_CHECK(ncclReduceScatter(in, out, s.count, ncclBfloat16, ncclSum, comm, stream));
    return;
  case Coll::AllReduce:
    PURLIN_NCCL_CHECK(ncclAllReduce(in, out, s.count, ncclBfloat16, ncclSum, comm, stream));
    return;
  case Coll::AllToAll: {
    if (alltoall) {
      PURLIN_NCCL_CHECK(ncclAlltoAll(in, out, s.count, ncclBfloat16, comm, stream));
      return;
    }
    int n = 0;
    PURLIN_NCCL_CHECK(ncclCommCount(comm, &n));
    const auto *src = static_cast<const char *>(in);
    auto *dst = static_cast<char *>(out);
    const std::size_t part = s.count * kElemBytes;
    PURLIN_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < n; ++p) {
      PURLIN_NCCL_CHECK(ncclSend(src + p * part, s.count, ncclBfloat16, p, comm, stream));
      PURLIN_NCCL_CHECK(ncclRecv(dst + p * part, s.count, ncclBfloat16, p, comm, stream));
    }
    PURLIN_NCCL_CHECK(ncclGroupEnd());
    return;
  }
  case Coll::Broadcast:
    PURLIN_NCCL_CHECK(ncclBroadcast(in, out, s.count, ncclBfloat16, kRoot, comm, stream));
    return;
  case Coll::Reduce:
    PURLIN_NCCL_CHECK(ncclReduce(in, out, s.count, ncclBfloat16, ncclSum, kRoot, comm, stream));
    return;
  case Coll::Scatter:
  case Coll::Gather: {
    // NCCL has no Scatter / Gather: grouped point-to-point from / to the root.
    int n = 0, rank = 0;
    PURLIN_NCCL_CHECK(ncclCommCount(comm, &n));
    PURLIN_NCCL_CHECK(ncclCommUserRank(comm, &rank));
    const std::size_t part = s.count * kElemBytes;
    PURLIN_NCCL_CHECK(ncclGroupStart());
    if (c == Coll::Scatter) {
      if (rank == kRoot)
        for (int p = 0; p < n; ++p)
          PURLIN_NCCL_CHECK(ncclSend(static_cast<const char *>(in) + p * part, s.count, ncclBfloat16, p, comm, stream));
      PURLIN_NCCL_CHECK(ncclRecv(out, s.count, ncclBfloat16, kRoot, comm, stream));
    } else {
      PURLIN_NCCL_CHECK(ncclSend(in, s.count, ncclBfloat16, kRoot, comm, stream));
      if (rank == kRoot)
        for (int p = 0; p < n; ++p)
          PURLIN_NCCL_CHECK(ncclRecv(static_cast<char *>(out) + p * part, s.count, ncclBfloat16, p, comm, stream));
    }
    PURLIN_NCCL_CHECK(ncclGroupEnd());
    return;
  }
  case Coll::AllToAllV: {
    int rank = 0;
    PURLIN_NCCL_CHECK(ncclCommUserRank(comm, &rank));
    const A2AVArrays a = a2avArrays(s, rank);
    PURLIN_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < s.n; ++p) {
      PURLIN_NCCL_CHECK(ncclSend(static_cast<const char *>(in) + a.sendDispls[p] * kElemBytes, a.sendCounts[p],
                                 ncclBfloat16, p, comm, stream));
      PURLIN_NCCL_CHECK(ncclRecv(static_cast<char *>(out) + a.recvDispls[p] * kElemBytes, a.recvCounts[p],
                                 ncclBfloat16, p, comm, stream));
    }
    PURLIN_NCCL_CHECK(ncclGroupEnd());
    return;
  }
  case Coll::AllGatherV:
  case Coll::ReduceScatterV: {
    // NCCL has no V forms: grouped point-to-point (AllGatherV), grouped
    // ncclReduce of every partition onto its rank (ReduceScatterV).
    int n = 0, rank = 0;
    PURLIN_NCCL_CHECK(ncclCommCount(comm, &n));
    PURLIN_NCCL_CHECK(ncclCommUserRank(comm, &rank));
    PURLIN_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < n; ++p) {
      const std::size_t at = displOf(s, p) * kElemBytes;
      if (c == Coll::AllGatherV) {
        PURLIN_NCCL_CHECK(ncclSend(in, s.counts[rank], ncclBfloat16, p, comm, stream));
        PURLIN_NCCL_CHECK(ncclRecv(static_cast<char *>(out) + at, s.counts[p], ncclBfloat16, p, comm, stream));
      } else {
        PURLIN_NCCL_CHECK(ncclReduce(static_cast<const char *>(in) + at, out, s.counts[p], ncclBfloat16, ncclSum, p,
                                     comm, stream));
      }
    }
    PURLIN_NCCL_CHECK(ncclGroupEnd());
    return;
  }
  }
  PURLIN_THROW(Status::InvalidArgument, "ncclCall: unknown collective");
}

} // namespace purlin::bench
