/// @file check.cu
/// @brief Kernels of the correctness checks (check.h).
#include "check.h"

#include <cuda_bf16.h>

#include "purlin/host/error.h"

namespace purlin::bench {
namespace {

__device__ uint32_t mix(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

__host__ __device__ inline uint32_t saltOf(int rank, uint32_t seed) {
  return seed * 0x9e3779b9U + static_cast<uint32_t>(rank) * 0x85ebca6bU;
}

/// Input element i of the rank and seed behind `salt`: k/64, k in [-64, 64].
__device__ float inputValue(uint32_t salt, std::size_t i) {
  const uint32_t h = mix(static_cast<uint32_t>(i) ^ mix(salt + static_cast<uint32_t>(i >> 32)));
  const int k = static_cast<int>(h % 129u) - 64;
  return static_cast<float>(k) / 64.0f;
}

__global__ void fillKernel(__nv_bfloat16 *buf, std::size_t elems, uint32_t salt) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < elems;
       i += (std::size_t)gridDim.x * blockDim.x)
    buf[i] = __float2bfloat16(inputValue(salt, i));
}

__global__ void referenceKernel(RefColl c, int n, int rank, std::size_t count, uint32_t seed, __nv_bfloat16 *out) {
  const std::size_t elems = c == RefColl::ReduceScatter || c == RefColl::AllReduce ? count : std::size_t(n) * count;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < elems;
       i += (std::size_t)gridDim.x * blockDim.x) {
    float v = 0;
    switch (c) {
      case RefColl::AllGather: v = inputValue(saltOf(int(i / count), seed), i % count); break;
      case RefColl::AllToAll: v = inputValue(saltOf(int(i / count), seed), rank * count + i % count); break;
      case RefColl::ReduceScatter:
      case RefColl::AllReduce: {
        const std::size_t at = c == RefColl::ReduceScatter ? rank * count + i : i;
        // Inputs are bf16 values k/64 (exact in bf16): their fp32 sum is exact.
        for (int p = 0; p < n; ++p) v += inputValue(saltOf(p, seed), at);
        break;
      }
    }
    out[i] = __float2bfloat16(v);
  }
}

__global__ void mismatchKernel(const uint16_t *got, const uint16_t *want, std::size_t elems,
                               bool tolerance, unsigned long long *count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < elems;
       i += (std::size_t)gridDim.x * blockDim.x) {
    const uint16_t g = got[i], w = want[i];
    if (!tolerance) {
      local += (g != w);
    } else {
      const float gf = __uint_as_float(static_cast<uint32_t>(g) << 16);
      const float wf = __uint_as_float(static_cast<uint32_t>(w) << 16);
      const bool ok = fabsf(gf - wf) <= 1e-2f * fabsf(wf) + 1e-2f; // false for NaN
      local += !ok;
    }
  }
  if (local) atomicAdd(count, local);
}

__global__ void checksumKernel(const uint16_t *buf, std::size_t elems, unsigned long long *sum) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < elems;
       i += (std::size_t)gridDim.x * blockDim.x)
    local += (static_cast<unsigned long long>(buf[i]) + 1) * (2 * i + 0x9e3779b97f4a7c15ULL);
  atomicAdd(sum, local);
}

constexpr int kThreads = 256;
int blocksFor(std::size_t elems) {
  std::size_t b = (elems + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > 1024 ? 1024 : b));
}

/// A device counter, zeroed, read back after the kernel.
struct DeviceCounter {
  unsigned long long *ptr = nullptr;
  explicit DeviceCounter(cudaStream_t s) {
    PURLIN_CUDA_CHECK(cudaMalloc(&ptr, sizeof(*ptr)));
    PURLIN_CUDA_CHECK(cudaMemsetAsync(ptr, 0, sizeof(*ptr), s));
  }
  ~DeviceCounter() { (void)cudaFree(ptr); }
  unsigned long long read(cudaStream_t s) {
    unsigned long long v = 0;
    PURLIN_CUDA_CHECK(cudaMemcpyAsync(&v, ptr, sizeof(v), cudaMemcpyDeviceToHost, s));
    PURLIN_CUDA_CHECK(cudaStreamSynchronize(s));
    return v;
  }
};

} // namespace

void fillInput(void *buf, std::size_t elems, int rank, uint32_t seed, cudaStream_t stream) {
  if (elems == 0) return;
  fillKernel<<<blocksFor(elems), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16 *>(buf), elems, saltOf(rank, seed));
  PURLIN_CUDA_CHECK(cudaGetLastError());
}

std::size_t countMismatches(const void *got, const void *want, std::size_t elems,
                            bool tolerance, cudaStream_t stream) {
  DeviceCounter c(stream);
  if (elems)
    mismatchKernel<<<blocksFor(elems), kThreads, 0, stream>>>(
        static_cast<const uint16_t *>(got), static_cast<const uint16_t *>(want), elems, tolerance, c.ptr);
  PURLIN_CUDA_CHECK(cudaGetLastError());
  return static_cast<std::size_t>(c.read(stream));
}

uint64_t checksum(const void *buf, std::size_t elems, cudaStream_t stream) {
  DeviceCounter c(stream);
  if (elems)
    checksumKernel<<<blocksFor(elems), kThreads, 0, stream>>>(static_cast<const uint16_t *>(buf), elems, c.ptr);
  PURLIN_CUDA_CHECK(cudaGetLastError());
  return c.read(stream);
}

void checksumInto(const void *buf, std::size_t elems, unsigned long long *slot, cudaStream_t stream) {
  PURLIN_CUDA_CHECK(cudaMemsetAsync(slot, 0, sizeof(*slot), stream));
  if (elems)
    checksumKernel<<<blocksFor(elems), kThreads, 0, stream>>>(static_cast<const uint16_t *>(buf), elems, slot);
  PURLIN_CUDA_CHECK(cudaGetLastError());
}

void referenceOutput(RefColl c, int n, int rank, std::size_t count, uint32_t seed, void *out, cudaStream_t stream) {
  const std::size_t elems = c == RefColl::ReduceScatter || c == RefColl::AllReduce ? count : std::size_t(n) * count;
  if (elems == 0) return;
  referenceKernel<<<blocksFor(elems), kThreads, 0, stream>>>(c, n, rank, count, seed,
                                                             static_cast<__nv_bfloat16 *>(out));
  PURLIN_CUDA_CHECK(cudaGetLastError());
}

} // namespace purlin::bench
