/// @file link_ceiling.cu
/// @brief The link ceilings the benchmark summary draws (issue 17 item 8;
/// scripts/compare_series.py --ceilings): bytes per second per direction
/// between GPU 0 and GPU 1, moved by the copy engines (cudaMemcpyPeerAsync)
/// and by SM stores into the peer's memory (32 CTAs x 512 threads, 16-byte
/// vectors), one direction and both at once; median of 5 samples of 8
/// copies of 256 MiB each. With one GPU it measures the same transfers
/// within GPU 0 and names them "local" (not a link: the harness's dry run).
///
/// Usage: link_ceiling OUT.csv   (writes kind,dirs,GBps,min,max; prints the rows)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "micro_check.h"

#define LC_CK(call) MICRO_CUDA_CHECK("link_ceiling", call)

namespace {

constexpr std::size_t kBytes = std::size_t(256) << 20;
constexpr int kCopies = 8, kSamples = 5, kCtas = 32, kThreads = 512;

__global__ void storeKernel(uint4* dst, const uint4* src, std::size_t vectors) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

struct Direction {
  int device;          ///< where the work is issued (the source GPU)
  std::byte* dst;      ///< on the other GPU (or, with one GPU, the same)
  const std::byte* src;
  cudaStream_t stream;
};

/// GB/s per direction of `copies` transfers on every direction at once.
std::vector<double> measure(std::vector<Direction>& dirs, bool engine) {
  std::vector<double> out;
  std::vector<cudaEvent_t> a(dirs.size()), b(dirs.size());
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    LC_CK(cudaSetDevice(dirs[d].device));
    LC_CK(cudaEventCreate(&a[d]));
    LC_CK(cudaEventCreate(&b[d]));
  }
  for (int s = -1; s < kSamples; ++s) {  // sample -1 warms up
    for (std::size_t d = 0; d < dirs.size(); ++d) {
      LC_CK(cudaSetDevice(dirs[d].device));
      LC_CK(cudaEventRecord(a[d], dirs[d].stream));
      for (int c = 0; c < kCopies; ++c) {
        if (engine) {
          LC_CK(cudaMemcpyAsync(dirs[d].dst, dirs[d].src, kBytes, cudaMemcpyDeviceToDevice, dirs[d].stream));
        } else {
          storeKernel<<<kCtas, kThreads, 0, dirs[d].stream>>>(reinterpret_cast<uint4*>(dirs[d].dst),
                                                              reinterpret_cast<const uint4*>(dirs[d].src),
                                                              kBytes / sizeof(uint4));
          LC_CK(cudaGetLastError());
        }
      }
      LC_CK(cudaEventRecord(b[d], dirs[d].stream));
    }
    double worst = 0;
    for (std::size_t d = 0; d < dirs.size(); ++d) {
      LC_CK(cudaSetDevice(dirs[d].device));
      LC_CK(cudaEventSynchronize(b[d]));
      float ms = 0;
      LC_CK(cudaEventElapsedTime(&ms, a[d], b[d]));
      worst = std::max(worst, double(ms));
    }
    if (s >= 0) out.push_back(double(kCopies) * kBytes / (worst * 1e-3) / 1e9);
  }
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    LC_CK(cudaEventDestroy(a[d]));
    LC_CK(cudaEventDestroy(b[d]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: link_ceiling OUT.csv\n");
    return 2;
  }
  int gpus = 0;
  LC_CK(cudaGetDeviceCount(&gpus));
  if (gpus < 1) {
    std::fprintf(stderr, "link_ceiling: no GPU\n");
    return 2;
  }
  const bool link = gpus >= 2;
  const int peer = link ? 1 : 0;
  if (link) {
    int can = 0;
    LC_CK(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (!can) {
      std::fprintf(stderr, "link_ceiling: GPU 0 cannot access GPU 1\n");
      return 2;
    }
  }
  // buf[g][0] source, buf[g][1] destination of the transfers into GPU g
  // (with one GPU both sets on GPU 0: two disjoint transfers).
  std::byte* buf[2][2] = {};
  cudaStream_t st[2] = {};
  for (int g = 0; g < 2; ++g) {
    const int dev = link ? g : 0;
    LC_CK(cudaSetDevice(dev));
    if (link) (void)cudaDeviceEnablePeerAccess(1 - g, 0), (void)cudaGetLastError();
    LC_CK(cudaMalloc(&buf[g][0], kBytes));
    LC_CK(cudaMalloc(&buf[g][1], kBytes));
    LC_CK(cudaMemset(buf[g][0], 0x5a, kBytes));
    LC_CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
  }
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::fprintf(stderr, "link_ceiling: cannot write %s\n", argv[1]);
    return 2;
  }
  std::fprintf(f, "kind,dirs,GBps,min,max\n");
  const char* where = link ? "" : " (local on one GPU)";
  for (bool engine : {true, false})
    for (int dirs : {1, 2}) {
      // Direction 0: GPU 0 writes GPU 1's destination; direction 1 the reverse.
      std::vector<Direction> d;
      d.push_back({0, buf[1][1], buf[0][0], st[0]});
      if (dirs == 2) d.push_back({peer, buf[0][1], buf[1][0], st[1]});
      const std::vector<double> v = measure(d, engine);
      const std::string kind = std::string(engine ? "copy engine" : "SM stores 32 CTAs") + where;
      std::fprintf(f, "%s,%d,%.1f,%.1f,%.1f\n", kind.c_str(), dirs, v[v.size() / 2], v.front(), v.back());
      std::printf("%-36s dirs=%d  %8.1f GB/s per direction (%.1f-%.1f)\n", kind.c_str(), dirs, v[v.size() / 2],
                  v.front(), v.back());
    }
  std::fclose(f);
  return 0;
}
