/// @file atom_micro.cu
/// @brief Atom microbenchmarks between GPU 0 and GPU 1 over NVLink, the
/// paper's Figures 3, 6 and 9:
///   fig3_pull_sweep.csv   256 MiB pull, CTAs 1..64 x {256, 512} threads x
///                         stages 1..8, every datapath and tuning candidate;
///   fig9_stage_ablation.csv  256 MiB pull and push at 8 CTAs x 256 threads,
///                         stages 1..8;
///   fig6_bandwidth.csv    pull vs push, 256 KiB..1 GiB (CUDA graph method);
///   fig6_latency.csv      push / push+fence / pull / packet one-way latency, 64 B..4 KiB.
/// Usage: atom_micro [OUT_DIR]   (default $OUT, else the current directory)
#include <algorithm>
#include <cstring>
#include <vector>

#include "micro_common.cuh"
#include "micro_latency.cuh"

using namespace micro;

namespace {

struct Peers {
  std::byte* a[2];   // 1 GiB source on each GPU
  std::byte* b[2];   // 1 GiB destination on each GPU
  cudaStream_t s0;   // stream on GPU 0 (all copies run there)
};

constexpr std::size_t kBig = 1ull << 30;
constexpr std::size_t kSweepBytes = 256ull << 20;
const char* const kPipelined[] = {"ampere", "hopper", "l2hint", "st.cs", "st.na", "bulkpf"};
/// The Figure 3 sweep leaves out bulkpf: it measured 6 GB/s everywhere in
/// fig9 (2026-11-30), and at that rate it would dominate the run time.
const char* const kSweep[] = {"ampere", "hopper", "l2hint", "st.cs", "st.na"};

FILE* openCsv(const std::string& dir, const char* name, const char* header) {
  const std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "atom_micro: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::fprintf(f, "%s\n", header);
  return f;
}

/// Pull: GPU 0 reads GPU 1's memory. Push: GPU 0 writes GPU 1's memory.
std::pair<std::byte*, const std::byte*> endpoints(const Peers& p, bool pull) {
  return pull ? std::make_pair(p.b[0], static_cast<const std::byte*>(p.a[1]))
              : std::make_pair(p.b[1], static_cast<const std::byte*>(p.a[0]));
}

void fig3(const Peers& p, const std::string& dir) {
  FILE* f = openCsv(dir, "fig3_pull_sweep.csv", "datapath,threads,ctas,stages,stage_bytes,bytes,gbps");
  const int ctasList[] = {1, 2, 4, 8, 16, 32, 64};
  auto [dst, src] = endpoints(p, true);
  for (int threads : {256, 512}) {
    for (int ctas : ctasList) {
      const double g = timeCopies(kernelFor("generic", 0), ctas, threads, dst, src, kSweepBytes, 3, p.s0);
      std::fprintf(f, "generic,%d,%d,0,0,%zu,%.1f\n", threads, ctas, kSweepBytes, g);
      for (const char* dp : kSweep) {
        for (int st = 1; st <= 8; ++st) {
          const double gb = timeCopies(kernelFor(dp, st), ctas, threads, dst, src, kSweepBytes, 3, p.s0);
          std::fprintf(f, "%s,%d,%d,%d,%d,%zu,%.1f\n", dp, threads, ctas, st, kStageBytes, kSweepBytes, gb);
          if (ctas == 8 && st == 8 && threads == 256)
            std::printf("fig3: %-8s 8 CTAs x 256 thr x 8 stages pull 256 MiB: %.1f GB/s\n", dp, gb);
        }
      }
      std::printf("fig3: generic  %2d CTAs x %d thr pull 256 MiB: %.1f GB/s\n", ctas, threads, g);
      std::fflush(stdout);
    }
  }
  std::fclose(f);
}

void fig9(const Peers& p, const std::string& dir) {
  FILE* f = openCsv(dir, "fig9_stage_ablation.csv", "datapath,direction,ctas,threads,stages,stage_bytes,bytes,gbps");
  for (bool pull : {true, false}) {
    auto [dst, src] = endpoints(p, pull);
    const char* d = pull ? "pull" : "push";
    const double g = timeCopies(kernelFor("generic", 0), 8, 256, dst, src, kSweepBytes, 3, p.s0);
    std::fprintf(f, "generic,%s,8,256,0,0,%zu,%.1f\n", d, kSweepBytes, g);
    for (const char* dp : kPipelined) {
      for (int st = 1; st <= 8; ++st) {
        const double gb = timeCopies(kernelFor(dp, st), 8, 256, dst, src, kSweepBytes, 3, p.s0);
        std::fprintf(f, "%s,%s,8,256,%d,%d,%zu,%.1f\n", dp, d, st, kStageBytes, kSweepBytes, gb);
      }
    }
  }
  std::fclose(f);
}

void fig6Bandwidth(const Peers& p, const std::string& dir) {
  FILE* f = openCsv(dir, "fig6_bandwidth.csv", "datapath,direction,ctas,threads,stages,bytes,gbps");
  for (const char* dp : {"hopper", "generic"}) {
    for (int ctas : {8, 16}) {
      for (bool pull : {true, false}) {
        auto [dst, src] = endpoints(p, pull);
        for (std::size_t bytes = 256u << 10; bytes <= kBig; bytes *= 4) {
          const int perGraph = static_cast<int>(std::clamp<std::size_t>((2ull << 30) / bytes, 2, 128));
          const int replays = bytes <= (16u << 20) ? 8 : 2;
          const double gb = timeCopiesGraph(kernelFor(dp, 8), ctas, 256, dst, src, bytes, perGraph, replays, p.s0);
          std::fprintf(f, "%s,%s,%d,256,%d,%zu,%.1f\n", dp, pull ? "pull" : "push", ctas,
                       std::strcmp(dp, "generic") ? 8 : 0, bytes, gb);
          if (bytes == kBig || bytes == (256u << 10))
            std::printf("fig6: %-8s %s %2d CTAs %10zu B: %.1f GB/s\n", dp, pull ? "pull" : "push", ctas, bytes, gb);
        }
      }
    }
  }
  std::fclose(f);
}

/// Returns false when a wait timed out.
bool fig6Latency(const Peers& p, const std::string& dir) {
  using A = pa::Atom<pa::Hopper>;
  FILE* f = openCsv(dir, "fig6_latency.csv", "mode,datapath,bytes,iters,round_trip_us,one_way_us");
  std::byte *mine[2], *out[2];
  uint64_t* flag[2];
  int* err[2];
  cudaStream_t st[2];
  for (int d = 0; d < 2; ++d) {
    MICRO_CK(cudaSetDevice(d));
    MICRO_CK(cudaMalloc(&mine[d], 1 << 20));
    MICRO_CK(cudaMalloc(&out[d], 1 << 20));
    MICRO_CK(cudaMalloc(&flag[d], 64));
    MICRO_CK(cudaMalloc(&err[d], sizeof(int)));
    MICRO_CK(cudaMemset(mine[d], 0, 1 << 20));
    MICRO_CK(cudaMemset(out[d], d + 1, 1 << 20));
    MICRO_CK(cudaMemset(flag[d], 0, 64));
    MICRO_CK(cudaMemset(err[d], 0, sizeof(int)));
    MICRO_CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    auto k = pingPong<A>;
    MICRO_CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(A::kWorkspaceBytes)));
    MICRO_CK(cudaDeviceSynchronize());
  }
  uint64_t base = 0;
  bool ok = true;
  auto run = [&](Mode m, std::size_t bytes, int iters) -> double {
    cudaEvent_t e0, e1;
    MICRO_CK(cudaSetDevice(0));
    MICRO_CK(cudaEventCreate(&e0));
    MICRO_CK(cudaEventCreate(&e1));
    MICRO_CK(cudaEventRecord(e0, st[0]));
    for (int d = 0; d < 2; ++d) {
      MICRO_CK(cudaSetDevice(d));
      pingPong<A><<<1, 256, A::kWorkspaceBytes, st[d]>>>(m, mine[d], mine[1 - d], out[d], flag[d], flag[1 - d],
                                                          bytes, iters, base, d == 0, err[d]);
      MICRO_CK(cudaGetLastError());
      if (d == 0) MICRO_CK(cudaEventRecord(e1, st[0]));
    }
    base += iters;
    for (int d = 0; d < 2; ++d) { MICRO_CK(cudaSetDevice(d)); MICRO_CK(cudaStreamSynchronize(st[d])); }
    float ms = 0;
    MICRO_CK(cudaSetDevice(0));
    MICRO_CK(cudaEventElapsedTime(&ms, e0, e1));
    MICRO_CK(cudaEventDestroy(e0));
    MICRO_CK(cudaEventDestroy(e1));
    int e[2] = {0, 0};
    for (int d = 0; d < 2; ++d) MICRO_CK(cudaMemcpy(&e[d], err[d], sizeof(int), cudaMemcpyDeviceToHost));
    if (e[0] || e[1]) {
      std::printf("fig6 latency: %s %zu B: a wait timed out (GPU0 %d, GPU1 %d)\n", modeName(m), bytes, e[0], e[1]);
      ok = false;
      for (int d = 0; d < 2; ++d) MICRO_CK(cudaMemset(err[d], 0, sizeof(int)));
      return -1;
    }
    return ms * 1e3 / iters;  // microseconds per round trip
  };
  for (Mode m : {Mode::Push, Mode::PushFence, Mode::Pull, Mode::Packet}) {
    for (std::size_t bytes = 64; bytes <= 4096; bytes *= 2) {
      run(m, bytes, 200);  // warm-up
      const int iters = 3000;
      const double rt = run(m, bytes, iters);
      std::fprintf(f, "%s,hopper,%zu,%d,%.3f,%.3f\n", modeName(m), bytes, iters, rt, rt / 2);
      if (bytes == 64 || bytes == 4096)
        std::printf("fig6 latency: %-6s %4zu B: round trip %.3f us, one way %.3f us\n", modeName(m), bytes, rt, rt / 2);
    }
  }
  std::fclose(f);
  for (int d = 0; d < 2; ++d) {
    MICRO_CK(cudaSetDevice(d));
    cudaFree(mine[d]); cudaFree(out[d]); cudaFree(flag[d]); cudaFree(err[d]);
    cudaStreamDestroy(st[d]);
  }
  MICRO_CK(cudaSetDevice(0));
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : (std::getenv("OUT") ? std::getenv("OUT") : ".");
  int n = 0;
  MICRO_CK(cudaGetDeviceCount(&n));
  int can01 = 0, can10 = 0;
  if (n >= 2) {
    MICRO_CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    MICRO_CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
  }
  if (n < 2 || !can01 || !can10) {
    std::printf("SKIP atom_micro: needs 2 GPUs with peer access (found %d)\n", n);
    return 0;
  }
  cudaDeviceProp prop{};
  MICRO_CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("atom_micro: %s x%d, sm_%d%d, writing CSV to %s\n", prop.name, n, prop.major, prop.minor, dir.c_str());
  if (prop.major * 100 + prop.minor * 10 < 900) {
    std::printf("SKIP atom_micro: the sweep includes Hopper datapaths and needs sm_90+\n");
    return 0;
  }
  Peers p{};
  for (int d = 0; d < 2; ++d) {
    MICRO_CK(cudaSetDevice(d));
    cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) MICRO_CK(e);
    MICRO_CK(cudaMalloc(&p.a[d], kBig));
    MICRO_CK(cudaMalloc(&p.b[d], kBig));
    MICRO_CK(cudaMemset(p.a[d], 0x11 * (d + 1), kBig));
    MICRO_CK(cudaMemset(p.b[d], 0, kBig));
    MICRO_CK(cudaDeviceSynchronize());
  }
  MICRO_CK(cudaSetDevice(0));
  MICRO_CK(cudaStreamCreateWithFlags(&p.s0, cudaStreamNonBlocking));
  const bool latOk = fig6Latency(p, dir);
  fig9(p, dir);
  fig6Bandwidth(p, dir);
  fig3(p, dir);
  for (int d = 0; d < 2; ++d) {
    MICRO_CK(cudaSetDevice(d));
    cudaFree(p.a[d]);
    cudaFree(p.b[d]);
  }
  std::printf("%s atom_micro\n", latOk ? "DONE" : "FAIL (latency wait timed out)");
  return latOk ? 0 : 1;
}
