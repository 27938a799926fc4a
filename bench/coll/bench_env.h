/// @file bench_env.h
/// @brief Process set-up shared by coll_bench and the tuner: the
/// environment (no NVLink multicast anywhere), the GPU of a rank and the
/// run's metadata file (argument parsing: bench_args.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench_args.h"
#include "coll_shape.h"

namespace purlin::bench {

class Log;

/// Sets NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
/// NVSHMEM_DISABLE_NVLS=1 in this process (before NCCL is initialized), so
/// NVLink SHARP / multicast is never used whatever the caller's environment.
void setBenchEnvironment();

/// The CUDA device of `rank`: $PURLIN_DEVICE if set, else rank modulo the
/// number of visible devices. Throws purlin::Error if there is no device.
int deviceForRank(int rank);

/// Rank 0 writes <dir>/meta.txt (date, device, world size, NCCL and CUDA
/// versions, commit from $PURLIN_COMMIT, API) and logs it. Other ranks do
/// nothing. `extra`: more key,value lines (e.g. the series and their legends).
void writeMeta(const std::string &dir, int rank, int worldSize, int device,
               const char *api, Log &log,
               const std::vector<std::pair<std::string, std::string>> &extra = {});

} // namespace purlin::bench
