/// @file atom_example_test.cu
/// @brief The docs/atom.md example, compiled by CI and run by gpu-all: a
/// user's own kernel calls the Atom directly. Two GPUs each compute
/// out = in_rank0 + in_rank1 (bf16, fp32 accumulation, ascending rank
/// order) by reducing their own input with the peer's over NVLink; the
/// results must be bitwise equal on both GPUs and to a host reference.
/// With one GPU it reduces two local buffers instead.
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "purlin/atom/atom.cuh"

namespace pa = purlin::atom;

#define EX_CK(call)                                                                             \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));    \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

/// A user kernel: each CTA reduces its share of the elements. Arch is chosen
/// on the host (the host pass cannot see the device's architecture), and the
/// kernel is compiled for several architectures, so the datapath is guarded.
template <class Arch>
__global__ void __launch_bounds__(512) sumOfTwo(__nv_bfloat16* out, const __nv_bfloat16* in0,
                                                const __nv_bfloat16* in1, std::size_t count) {
  using A = pa::Atom<Arch>;  // 8 stages x 16 KiB: kWorkspaceBytes of dynamic shared memory
  extern __shared__ __align__(16) std::byte workspace[];
  if constexpr (pa::kCompiled<Arch>) {
    const std::size_t lo = count * blockIdx.x / gridDim.x, hi = count * (blockIdx.x + 1) / gridDim.x;
    const std::byte* sources[2] = {reinterpret_cast<const std::byte*>(in0 + lo),   // rank 0 first:
                                   reinterpret_cast<const std::byte*>(in1 + lo)};  // same order everywhere
    A::template reduce<__nv_bfloat16, purlin::RedOp::Sum>(reinterpret_cast<std::byte*>(out + lo), sources,
                                                          (hi - lo) * sizeof(__nv_bfloat16), 2, workspace);
  } else {
    __trap();
  }
}

/// Launches sumOfTwo with the datapath of the device's architecture.
template <class Arch>
cudaError_t launch(__nv_bfloat16* out, const __nv_bfloat16* in0, const __nv_bfloat16* in1, std::size_t count,
                   cudaStream_t s) {
  const std::size_t smem = pa::Atom<Arch>::kWorkspaceBytes;
  if (smem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(sumOfTwo<Arch>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  sumOfTwo<Arch><<<8, 256, smem, s>>>(out, in0, in1, count);
  return cudaGetLastError();
}

cudaError_t launchNative(int dev, __nv_bfloat16* out, const __nv_bfloat16* in0, const __nv_bfloat16* in1,
                         std::size_t count, cudaStream_t s) {
  cudaDeviceProp p{};
  cudaError_t e = cudaGetDeviceProperties(&p, dev);
  if (e != cudaSuccess) return e;
  if (p.major >= 9) return launch<pa::Hopper>(out, in0, in1, count, s);
  if (p.major >= 8) return launch<pa::Ampere>(out, in0, in1, count, s);
  return launch<pa::Generic>(out, in0, in1, count, s);
}

int main() {
  int ngpu = 0;
  EX_CK(cudaGetDeviceCount(&ngpu));
  int peer = 0;
  if (ngpu >= 2) cudaDeviceCanAccessPeer(&peer, 0, 1);
  const int ranks = peer ? 2 : 1;
  if (ranks == 1) std::printf("SKIP peer part: one GPU (or no peer access); reducing two local buffers\n");
  const std::size_t count = (3u << 20) + 7;  // odd count: vector body and tails
  std::vector<__nv_bfloat16> h[2];
  for (int r = 0; r < 2; ++r) {
    h[r].resize(count);
    for (std::size_t i = 0; i < count; ++i) h[r][i] = __float2bfloat16_rn(0.001f * ((i * 7 + r * 13) % 2001) - 1.0f);
  }
  __nv_bfloat16 *in[2] = {}, *out[2] = {};
  for (int r = 0; r < 2; ++r) {
    const int dev = ranks == 2 ? r : 0;
    EX_CK(cudaSetDevice(dev));
    if (ranks == 2) {
      cudaError_t e = cudaDeviceEnablePeerAccess(1 - r, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) EX_CK(e);
      cudaGetLastError();
    }
    EX_CK(cudaMalloc(&in[r], count * sizeof(__nv_bfloat16)));
    EX_CK(cudaMalloc(&out[r], count * sizeof(__nv_bfloat16)));
    EX_CK(cudaMemcpy(in[r], h[r].data(), count * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  }
  for (int r = 0; r < ranks; ++r) {  // inputs are ready on both GPUs (synchronous copies above)
    EX_CK(cudaSetDevice(r));
    EX_CK(launchNative(r, out[r], in[0], in[1], count, 0));
  }
  std::vector<__nv_bfloat16> got(count);
  bool ok = true;
  for (int r = 0; r < ranks && ok; ++r) {
    EX_CK(cudaSetDevice(r));
    EX_CK(cudaDeviceSynchronize());
    EX_CK(cudaMemcpy(got.data(), out[r], count * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i) {
      const __nv_bfloat16 want = __float2bfloat16_rn(__bfloat162float(h[0][i]) + __bfloat162float(h[1][i]));
      if (std::memcmp(&want, &got[i], sizeof want) != 0) {
        std::printf("FAIL rank %d element %zu: got %g want %g\n", r, i, __bfloat162float(got[i]),
                    __bfloat162float(want));
        ok = false;
        break;
      }
    }
  }
  for (int r = 0; r < 2; ++r) { cudaFree(in[r]); cudaFree(out[r]); }
  std::printf("%s atom_example_test (%d GPU%s)\n", ok ? "PASS" : "FAIL", ranks, ranks > 1 ? "s" : "");
  return ok ? 0 : 1;
}
