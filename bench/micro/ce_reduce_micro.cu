/// @file ce_reduce_micro.cu
/// @brief Experiment E10 (bench/NOTES.md): can ReduceScatter / AllReduce on
/// two GPUs move their NVLink traffic on the copy engines, with an SM
/// reduction that starts on per-chunk flags written by stream memory
/// operations (cuStreamWriteValue32 / cuStreamWaitValue32) instead of
/// graph edges between copies and kernels?
///
/// One process, two GPUs with peer access, bf16 sum. Per rank r (peer q),
/// per call, captured in a CUDA graph:
///   main stream:  arrive kernel (handshake: the peer's stream reached the
///                 call) -> fork -> reduce kernel -> join -> finish kernel
///   side stream:  for chunk k: copy in[q-part][k] -> peer out[..][k];
///                 write RS[k] = 1 at the peer.
///                 AllReduce, then for chunk k: wait RED[k] >= G (own reduce
///                 kernel's CTAs finished chunk k); copy out[r][k] -> peer
///                 out[r][k]; write AG[k] = 1 at the peer.
///   reduce kernel (G CTAs): for chunk k: wait RS[k]; out[k] = in[k] + out[k];
///                 AllReduce: fence, RED[k] += 1 per CTA.
///   finish kernel: AllReduce waits for every AG[k]; resets the flags.
/// Checked against a host reference on a sample of elements after the
/// timed replays. Prints one line per (collective, bytes, chunks, ctas).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "micro_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "purlin/arch/common.cuh"

#define CK(call) MICRO_CUDA_CHECK("ce_reduce_micro", call)
#define CU(call)                                                                                       \
  do {                                                                                                 \
    CUresult r_ = (call);                                                                              \
    if (r_ != CUDA_SUCCESS) {                                                                          \
      std::fprintf(stderr, "ce_reduce_micro: CUresult %d at %s:%d: %s\n", int(r_), __FILE__, __LINE__, #call); \
      std::exit(2);                                                                                    \
    }                                                                                                  \
  } while (0)

namespace {

constexpr int kMaxChunks = 64;

/// Chunk k covers [off[k], off[k + 1]) bytes of a partition.
struct Chunks {
  int n;
  unsigned long long off[kMaxChunks + 1];
};

/// "uK": K equal chunks; "tF/M": each chunk is F x what is left, at least M
/// MiB (a taper: the last chunks, whose reduction is the tail, are small).
Chunks schedule(const std::string& spec, std::size_t part) {
  Chunks c{};
  std::vector<std::size_t> sizes;
  if (spec[0] == 'u') {
    const int k = std::atoi(spec.c_str() + 1);
    const std::size_t each = (part / k + 15) & ~std::size_t(15);
    for (std::size_t o = 0; o < part; o += each) sizes.push_back(std::min(each, part - o));
  } else {
    const double f = std::atof(spec.c_str() + 1);
    const std::size_t minc = std::size_t(std::atof(spec.c_str() + spec.find('/') + 1) * 1048576.0);
    for (std::size_t left = part; left > 0;) {
      std::size_t x = std::max(minc, std::size_t(double(left) * f)) & ~std::size_t(15);
      if (x == 0 || x > left) x = left;
      sizes.push_back(x);
      left -= x;
    }
  }
  if (int(sizes.size()) > kMaxChunks) { std::fprintf(stderr, "too many chunks\n"); std::exit(2); }
  c.n = int(sizes.size());
  for (int k = 0; k < c.n; ++k) c.off[k + 1] = c.off[k] + sizes[k];
  return c;
}

/// Per-rank flag block (device memory of that rank).
struct Flags {
  uint64_t seq;                // own call counter (arrive kernel)
  uint64_t arrived;            // written by the peer's arrive kernel
  uint32_t rs[kMaxChunks];     // written by the peer's copy branch
  uint32_t red[kMaxChunks];    // own reduce CTAs' count per chunk
  uint32_t ag[kMaxChunks];     // written by the peer's copy branch (AllReduce)
};

namespace arch = purlin::arch;

__global__ void arriveKernel(Flags* own, Flags* peer) {
  const uint64_t e = own->seq + 1;
  own->seq = e;
  arch::stReleaseSys(&peer->arrived, e);
  while (arch::ldAcquireSys(&own->arrived) < e) {
  }
}

__device__ __forceinline__ uint4 addBf16x8(uint4 a, uint4 b) {
  uint4 r;
  const __nv_bfloat162* x = reinterpret_cast<const __nv_bfloat162*>(&a);
  const __nv_bfloat162* y = reinterpret_cast<const __nv_bfloat162*>(&b);
  __nv_bfloat162* z = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) z[i] = __hadd2(x[i], y[i]);
  return r;
}

/// out[k] = mine[k] + out[k] for every chunk, after RS[k]; AllReduce counts RED[k].
__global__ void __launch_bounds__(1024) reduceKernel(Flags* own, const uint4* mine, uint4* out, Chunks ch, bool countRed) {
  const int c = blockIdx.x, C = gridDim.x;
  for (int k = 0; k < ch.n; ++k) {
    const std::size_t base = ch.off[k] / 16;
    const std::size_t len = (ch.off[k + 1] - ch.off[k]) / 16;
    if (threadIdx.x == 0)
      while (arch::ldAcquireSys(&own->rs[k]) == 0) {
      }
    __syncthreads();
    const std::size_t per = (len + C - 1) / C;
    const std::size_t lo = per * c < len ? per * c : len, hi = lo + per < len ? lo + per : len;
    const uint4* a = mine + base;
    uint4* b = out + base;
    std::size_t i = lo + threadIdx.x;
    for (; i + 3 * blockDim.x < hi; i += 4 * blockDim.x) {
      uint4 x0 = a[i], x1 = a[i + blockDim.x], x2 = a[i + 2 * blockDim.x], x3 = a[i + 3 * blockDim.x];
      uint4 y0 = b[i], y1 = b[i + blockDim.x], y2 = b[i + 2 * blockDim.x], y3 = b[i + 3 * blockDim.x];
      b[i] = addBf16x8(x0, y0);
      b[i + blockDim.x] = addBf16x8(x1, y1);
      b[i + 2 * blockDim.x] = addBf16x8(x2, y2);
      b[i + 3 * blockDim.x] = addBf16x8(x3, y3);
    }
    for (; i < hi; i += blockDim.x) b[i] = addBf16x8(a[i], b[i]);
    if (countRed) {
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence_system();
        atomicAdd(&own->red[k], 1u);
      }
    }
  }
}

__global__ void finishKernel(Flags* own, int chunks, bool waitAg) {
  if (waitAg)
    for (int k = 0; k < chunks; ++k)
      while (arch::ldAcquireSys(&own->ag[k]) == 0) {
      }
  for (int k = 0; k < chunks; ++k) {
    own->rs[k] = 0;
    own->red[k] = 0;
    own->ag[k] = 0;
  }
  __threadfence_system();
}

__global__ void fillKernel(__nv_bfloat16* p, std::size_t n, int rank) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(float(int((i * 7 + rank * 13) % 17) - 8) * 0.25f);
}

PFN_cuStreamWriteValue32_v11070 writeValue = nullptr;
PFN_cuStreamWaitValue32_v11070 waitValue = nullptr;

void loadDriver() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) { std::fprintf(stderr, "no cuStreamWriteValue32\n"); std::exit(2); }
  writeValue = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(fn);
  CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) { std::fprintf(stderr, "no cuStreamWaitValue32\n"); std::exit(2); }
  waitValue = reinterpret_cast<PFN_cuStreamWaitValue32_v11070>(fn);
}

struct Rank {
  int dev;
  cudaStream_t s, t;
  cudaEvent_t fork, join;
  Flags* flags;
  __nv_bfloat16 *in, *out;
};

/// Captures one call of rank r into the streams (already capturing).
void enqueueCall(Rank* R, int r, bool allReduce, std::size_t bytes, const Chunks& ch, int ctas, int threads) {
  Rank& me = R[r];
  Rank& pe = R[1 - r];
  const int q = 1 - r;
  const std::size_t part = bytes / 2;  // partition bytes (two ranks)
  auto* in = reinterpret_cast<std::byte*>(me.in);
  auto* out = reinterpret_cast<std::byte*>(me.out);
  auto* peerOut = reinterpret_cast<std::byte*>(pe.out);
  // Where q's contribution to partition r lands here, and where this rank's
  // contribution to partition q goes: RS output is one partition; AR output
  // is the full vector (partition p at p * part).
  const std::size_t landOff = allReduce ? r * part : 0;     // own partition in own output
  const std::size_t sendOff = allReduce ? q * part : 0;     // peer partition in peer output
  arriveKernel<<<1, 1, 0, me.s>>>(me.flags, pe.flags);
  CK(cudaGetLastError());
  CK(cudaEventRecord(me.fork, me.s));
  CK(cudaStreamWaitEvent(me.t, me.fork, 0));
  for (int k = 0; k < ch.n; ++k) {
    const std::size_t o = ch.off[k], len = ch.off[k + 1] - o;
    CK(cudaMemcpyAsync(peerOut + sendOff + o, in + q * part + o, len, cudaMemcpyDeviceToDevice, me.t));
    CU(writeValue(me.t, reinterpret_cast<CUdeviceptr>(&pe.flags->rs[k]), 1, CU_STREAM_WRITE_VALUE_DEFAULT));
  }
  if (allReduce) {
    for (int k = 0; k < ch.n; ++k) {
      const std::size_t o = ch.off[k], len = ch.off[k + 1] - o;
      CU(waitValue(me.t, reinterpret_cast<CUdeviceptr>(&me.flags->red[k]), unsigned(ctas), CU_STREAM_WAIT_VALUE_GEQ));
      CK(cudaMemcpyAsync(peerOut + landOff + o, out + landOff + o, len, cudaMemcpyDeviceToDevice, me.t));
      CU(writeValue(me.t, reinterpret_cast<CUdeviceptr>(&pe.flags->ag[k]), 1, CU_STREAM_WRITE_VALUE_DEFAULT));
    }
  }
  CK(cudaEventRecord(me.join, me.t));
  reduceKernel<<<ctas, threads, 0, me.s>>>(me.flags, reinterpret_cast<const uint4*>(in + r * part),
                                       reinterpret_cast<uint4*>(out + landOff), ch, allReduce);
  CK(cudaGetLastError());
  CK(cudaStreamWaitEvent(me.s, me.join, 0));
  finishKernel<<<1, 1, 0, me.s>>>(me.flags, ch.n, allReduce);
  CK(cudaGetLastError());
}

float bf(float x) { return __bfloat162float(__float2bfloat16(x)); }

bool check(Rank* R, bool allReduce, std::size_t bytes) {
  const std::size_t part = bytes / 2, pe = part / 2;  // elements per partition
  bool ok = true;
  for (int r = 0; r < 2; ++r) {
    CK(cudaSetDevice(R[r].dev));
    const std::size_t outElems = allReduce ? 2 * pe : pe;
    std::vector<std::size_t> idx = {0, 1, 7, outElems / 3, outElems / 2 + 5, outElems - 1};
    for (std::size_t i : idx) {
      __nv_bfloat16 h;
      CK(cudaMemcpy(&h, R[r].out + i, 2, cudaMemcpyDeviceToHost));
      const std::size_t g = allReduce ? i : r * pe + i;  // global element index
      const float a = float(int((g * 7 + 0 * 13) % 17) - 8) * 0.25f;
      const float b = float(int((g * 7 + 1 * 13) % 17) - 8) * 0.25f;
      const float want = bf(a + b);
      if (__bfloat162float(h) != want) {
        std::printf("MISMATCH rank %d elem %zu got %g want %g\n", r, i, __bfloat162float(h), want);
        ok = false;
      }
    }
  }
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  int ndev = 0;
  CK(cudaGetDeviceCount(&ndev));
  if (ndev < 2) { std::fprintf(stderr, "needs 2 GPUs\n"); return 2; }
  loadDriver();
  const int calls = argc > 1 ? std::atoi(argv[1]) : 16;
  Rank R[2];
  const std::size_t maxBytes = std::size_t(1) << 30;
  for (int r = 0; r < 2; ++r) {
    R[r].dev = r;
    CK(cudaSetDevice(r));
    CK(cudaDeviceEnablePeerAccess(1 - r, 0));
    CK(cudaStreamCreateWithFlags(&R[r].s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&R[r].t, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&R[r].fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&R[r].join, cudaEventDisableTiming));
    CK(cudaMalloc(&R[r].flags, sizeof(Flags)));
    CK(cudaMemset(R[r].flags, 0, sizeof(Flags)));
    CK(cudaMalloc(&R[r].in, maxBytes));
    CK(cudaMalloc(&R[r].out, maxBytes));
    fillKernel<<<1024, 256>>>(R[r].in, maxBytes / 2, r);
    CK(cudaDeviceSynchronize());
  }
  std::printf("%-14s %10s %8s %6s %5s %7s %10s %9s %s\n", "collective", "MiB", "schedule", "chunks", "ctas", "threads", "us/call",
              "algGB/s", "ok");
  struct Cfg { bool ar; std::size_t mib; std::string sched; int ctas; int threads = 512; };
  std::vector<Cfg> cfgs;
  for (std::size_t mib : {128, 256, 512, 1024}) {
    for (const char* sc : {"u8", "t0.5/8", "t0.5/4", "t0.33/8", "t0.33/4"})
      for (int th : {512, 1024}) cfgs.push_back({false, mib, sc, 32, th});
    for (const char* sc : {"u2", "u3"})
      for (int th : {512, 1024}) cfgs.push_back({true, mib, sc, 32, th});
  }
  bool allOk = true;
  for (const Cfg& c : cfgs) {
    const std::size_t bytes = c.mib << 20;
    cudaGraphExec_t ge[2];
    const Chunks ch = schedule(c.sched, bytes / 2);
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaMemset(R[r].out, 0, maxBytes));
      CK(cudaDeviceSynchronize());
      CK(cudaStreamBeginCapture(R[r].s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < calls; ++i) enqueueCall(R, r, c.ar, bytes, ch, c.ctas, c.threads);
      ge[r] = instantiateCapture(R[r].s, "ce_reduce_micro");
    }
    const float ms = replayOnTwoGpus(ge, {R[0].s, R[1].s}, 4, "ce_reduce_micro");
    const double us = ms * 1000.0 / (4.0 * calls);
    const bool ok = check(R, c.ar, bytes);
    allOk = allOk && ok;
    std::printf("%-14s %10zu %8s %6d %5d %7d %10.1f %9.1f %s\n", c.ar ? "AllReduce" : "ReduceScatter", c.mib,
                c.sched.c_str(), ch.n, c.ctas, c.threads,
                us, double(bytes) / (us * 1e3), ok ? "ok" : "WRONG");
    std::fflush(stdout);
    for (int r = 0; r < 2; ++r) { CK(cudaSetDevice(r)); CK(cudaGraphExecDestroy(ge[r])); }
  }
  return allOk ? 0 : 1;
}
