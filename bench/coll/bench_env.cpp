/// @file bench_env.cpp
/// @brief Process set-up of the benchmark programs (bench_env.h).
#include "bench_env.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <ctime>

#include "bench_log.h"
#include "purlin/host/error.h"

namespace purlin::bench {

void setBenchEnvironment() {
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  ::setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  ::setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

int deviceForRank(int rank) {
  int count = 0;
  PURLIN_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count <= 0) PURLIN_THROW(Status::CudaError, "no CUDA device visible");
  if (const char *d = std::getenv("PURLIN_DEVICE"); d && *d) {
    char *end = nullptr;
    long v = std::strtol(d, &end, 10);
    if (*end != '\0' || v < 0 || v >= count)
      PURLIN_THROW(Status::InvalidArgument, std::string("PURLIN_DEVICE='") + d + "' is not a device index below " +
                                                std::to_string(count));
    return static_cast<int>(v);
  }
  return rank % count;
}

void writeMeta(const std::string &dir, int rank, int worldSize, int device, const char *api,
               Log &log, const std::vector<std::pair<std::string, std::string>> &extra) {
  if (rank != 0) return;
  cudaDeviceProp prop{};
  PURLIN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int ncclVer = 0, rt = 0, drv = 0;
  (void)ncclGetVersion(&ncclVer);
  (void)cudaRuntimeGetVersion(&rt);
  (void)cudaDriverGetVersion(&drv);
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  const char *commit = std::getenv("PURLIN_COMMIT");
  Csv meta(dir, "meta.txt", "key,value");
  meta.row("date,%s", date);
  meta.row("device,%s", prop.name);
  meta.row("sm,%d%d", prop.major, prop.minor);
  meta.row("sms,%d", prop.multiProcessorCount);
  meta.row("world_size,%d", worldSize);
  meta.row("nccl,%d", ncclVer);
  meta.row("cuda_runtime,%d", rt);
  meta.row("cuda_driver,%d", drv);
  meta.row("commit,%s", commit && *commit ? commit : "unknown");
  meta.row("purlin_api,%s", api);
  for (const auto &[key, value] : extra) meta.row("%s,%s", key.c_str(), value.c_str());
  log.root("coll_bench: %s, %s x%d (sm_%d%d, %d SMs), NCCL %d, CUDA runtime %d, driver %d, commit %s, API %s\n",
           date, prop.name, worldSize, prop.major, prop.minor, prop.multiProcessorCount, ncclVer, rt, drv,
           commit && *commit ? commit : "unknown", api);
}

} // namespace purlin::bench
