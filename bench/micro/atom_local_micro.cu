/// @file atom_local_micro.cu
/// @brief The Atom's datapaths on one GPU (issue 34: the TMA datapath
/// against the cp.async pipeline): local copy and 2-source bf16 sum reduce
/// of 256 KiB .. 1 GiB, each CTA one contiguous share, 512 threads, 8
/// stages x 16 KiB, 16 / 32 / 132 CTAs; whole CTAs and the two lanes of a
/// CTA (lane.cuh: half the stages each). Median of 5 repetitions of a
/// timed batch of calls (at least ~2 ms). Output CSV on stdout:
///   datapath,op,split,ctas,bytes,us,gbps   (gbps: payload bytes / time)
/// Usage: atom_local_micro [--quick]   (--quick: 3 sizes, 32 CTAs)
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "purlin/atom/atom.cuh"

namespace pa = purlin::atom;
using purlin::RedOp;

namespace {

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "atom_local_micro: %s: %s\n", #x, cudaGetErrorString(e_));          \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

constexpr int kThreads = 512;

/// One share per CTA (kLanes: per half CTA, its own half of the workspace).
template <class A, bool kReduce, bool kLanes>
__global__ void __launch_bounds__(kThreads) atomKernel(std::byte* dst, const std::byte* a, const std::byte* b,
                                                       std::size_t bytes) {
  extern __shared__ __align__(128) std::byte ws[];
  if constexpr (pa::kAtomCompiled<A>) {
    const unsigned parts = kLanes ? 2u : 1u, per = blockDim.x / parts, part = threadIdx.x / per;
    const std::size_t shares = std::size_t(gridDim.x) * parts, k = std::size_t(blockIdx.x) * parts + part;
    const std::size_t units = bytes / 16, lo = units * k / shares * 16, hi = units * (k + 1) / shares * 16;
    const pa::Slice s{threadIdx.x % per, per};
    std::byte* w = ws + part * A::kWorkspaceBytes;
    if constexpr (kReduce) {
      const std::byte* srcs[2] = {a + lo, b + lo};
      A::template reduce<__nv_bfloat16, RedOp::Sum>(dst + lo, srcs, hi - lo, 2, w, s);
    } else {
      A::copy(dst + lo, a + lo, hi - lo, w, s);
    }
  } else {
    __trap();
  }
}

struct Buffers {
  std::byte *a, *b, *dst;
};

template <class A, bool kReduce, bool kLanes>
double timeOne(const Buffers& m, std::size_t bytes, int ctas, cudaStream_t st) {
  auto k = atomKernel<A, kReduce, kLanes>;
  const std::size_t smem = A::kWorkspaceBytes * (kLanes ? 2 : 1);
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  auto launch = [&] { k<<<ctas, kThreads, smem, st>>>(m.dst, m.a, m.b, bytes); };
  launch();
  CK(cudaStreamSynchronize(st));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // Calls per batch: about 2 ms of work at ~3 TB/s.
  const int calls = int(std::max<std::size_t>(3, std::min<std::size_t>(2000, (std::size_t(6) << 30) / bytes)));
  std::vector<double> us;
  for (int rep = 0; rep < 5; ++rep) {
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < calls; ++i) launch();
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    us.push_back(1000.0 * ms / calls);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(us.begin(), us.end());
  return us[2];
}

/// Checks dst against the host's expectation for the last call (first and
/// last 4 KiB and a stride of the rest): the benchmark measures correct runs.
bool check(const Buffers& m, std::size_t bytes, bool reduce, const char* name) {
  std::vector<__nv_bfloat16> a(bytes / 2), b(bytes / 2), d(bytes / 2);
  const std::size_t step = bytes > (std::size_t(64) << 20) ? 4099 : 1;
  CK(cudaMemcpy(d.data(), m.dst, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(a.data(), m.a, bytes, cudaMemcpyDeviceToHost));
  if (reduce) CK(cudaMemcpy(b.data(), m.b, bytes, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < bytes / 2; i += (i < 2048 || i + 2048 >= bytes / 2) ? 1 : step) {
    const float want = reduce ? __bfloat162float(a[i]) + __bfloat162float(b[i]) : __bfloat162float(a[i]);
    const __nv_bfloat16 w = __float2bfloat16(want);
    if (std::memcmp(&w, &d[i], 2) != 0) {
      std::fprintf(stderr, "atom_local_micro: %s %s %zu bytes: wrong element %zu\n", name, reduce ? "reduce" : "copy",
                   bytes, i);
      return false;
    }
  }
  return true;
}

template <class A, class Lane>
bool sweep(const char* name, const Buffers& m, const std::vector<std::size_t>& sizes, const std::vector<int>& ctasList,
           cudaStream_t st) {
  bool ok = true;
  for (int reduce = 0; reduce < 2; ++reduce)
    for (int lanes = 0; lanes < 2; ++lanes)
      for (int ctas : ctasList)
        for (std::size_t bytes : sizes) {
          double us;
          if (reduce && lanes) us = timeOne<Lane, true, true>(m, bytes, ctas, st);
          else if (reduce) us = timeOne<A, true, false>(m, bytes, ctas, st);
          else if (lanes) us = timeOne<Lane, false, true>(m, bytes, ctas, st);
          else us = timeOne<A, false, false>(m, bytes, ctas, st);
          std::printf("%s,%s,%s,%d,%zu,%.2f,%.1f\n", name, reduce ? "reduce_bf16_sum" : "copy", lanes ? "lanes" : "cta",
                      ctas, bytes, us, double(bytes) / us / 1e3);
          std::fflush(stdout);
          if (ctas == ctasList.front() && (bytes == sizes.front() || bytes == sizes.back()))
            ok &= check(m, bytes, reduce != 0, name);
        }
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int major = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("atom_local_micro: needs sm_90 (the TMA datapath); device is sm_%d0\n", major);
    return 2;
  }
  std::vector<std::size_t> sizes;
  for (std::size_t s = std::size_t(256) << 10; s <= (std::size_t(1) << 30); s *= 4) sizes.push_back(s);
  std::vector<int> ctasList = {16, 32, 132};
  if (quick) sizes = {std::size_t(256) << 10, std::size_t(16) << 20, std::size_t(256) << 20}, ctasList = {32};
  const std::size_t cap = sizes.back();
  Buffers m{};
  CK(cudaMalloc(&m.a, cap));
  CK(cudaMalloc(&m.b, cap));
  CK(cudaMalloc(&m.dst, cap));
  {
    std::vector<uint16_t> h(cap / 2);
    uint32_t x = 12345;
    for (auto& v : h) {
      x = x * 1664525u + 1013904223u;
      v = uint16_t(0x3c00u | ((x >> 16) & 0x03ffu));  // finite bf16 values
    }
    CK(cudaMemcpy(m.a, h.data(), cap, cudaMemcpyHostToDevice));
    for (auto& v : h) v = uint16_t(v ^ 0x0155u);
    CK(cudaMemcpy(m.b, h.data(), cap, cudaMemcpyHostToDevice));
  }
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::printf("datapath,op,split,ctas,bytes,us,gbps\n");
  bool ok = true;
  ok &= sweep<pa::Atom<pa::Hopper, 8, 16384>, pa::Atom<pa::Hopper, 4, 16384>>("cp.async", m, sizes, ctasList, st);
  ok &= sweep<pa::Atom<pa::HopperTma, 8, 16384>, pa::Atom<pa::HopperTma, 4, 16384>>("tma", m, sizes, ctasList, st);
  CK(cudaFree(m.a));
  CK(cudaFree(m.b));
  CK(cudaFree(m.dst));
  std::fprintf(stderr, "atom_local_micro: %s\n", ok ? "results checked" : "WRONG RESULTS");
  return ok ? 0 : 1;
}
