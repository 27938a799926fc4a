/// @file fused_rmsnorm.cu
/// @brief AllReduce + residual add + RMSNorm (fused_rmsnorm.h): the fused
/// kernel runs allReduce's latency or throughput program through the device API
/// (allReduce_device, generated/allreduce.device.cuh; launched by
/// allReduce_launchDevice, generated/allreduce.programs.h), then the
/// add-and-norm of every row; the unfused path runs allReduce (the host
/// API) and then the same row code in a kernel of its own.
#include "fused_rmsnorm.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <string>

#include "allreduce.device.cuh"  // allReduce_device; includes allreduce.programs.h (allReduce_launchDevice)
#include "allreduce.h"           // allReduce (the host API)
#include "purlin/last_error.h"

namespace purlin::fused {
// A named namespace: nvcc's kernel stubs cannot name a kernel in an unnamed
// namespace nested in a named one when the unit has the global one too
// (allreduce.device.cuh's; purlin/snac/module_anchor.cuh).
namespace detail {

using Bf16 = __nv_bfloat16;
constexpr int kBf16Sum = pairIndex(DType::BF16, RedOp::Sum);

/// The row code both paths run: one warp per row, `hidden` a multiple of 8
/// and every row 16-byte aligned. Lane l takes the 8-element chunks l,
/// l + 32, ...: pass 1 writes residualOut and sums the squares of its
/// elements in ascending order (fp32); a butterfly of shuffles (each
/// lane's partial added to its partner's; a + b == b + a, so every lane
/// holds the same sum) gives the row's; pass 2 reads back the lane's own
/// chunks of residualOut and writes out. Independent of the grid and the
/// block size: the fused and the unfused kernel give the same bits.
template <class Out>
__device__ __forceinline__ void addRmsNormRow(const Bf16* x, const Bf16* residual, Bf16* residualOut,
                                              const Bf16* weight, Out* out, int hidden, float eps, float invScale,
                                              int lane) {
  const int chunks = hidden / 8;
  float sumSq = 0.f;
  for (int c = lane; c < chunks; c += 32) {
    const uint4 xv = reinterpret_cast<const uint4*>(x)[c];
    const uint4 rv = reinterpret_cast<const uint4*>(residual)[c];
    const Bf16* xe = reinterpret_cast<const Bf16*>(&xv);
    const Bf16* re = reinterpret_cast<const Bf16*>(&rv);
    uint4 hv;
    Bf16* he = reinterpret_cast<Bf16*>(&hv);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      he[j] = __float2bfloat16_rn(__bfloat162float(xe[j]) + __bfloat162float(re[j]));
      const float h = __bfloat162float(he[j]);
      sumSq = __fmaf_rn(h, h, sumSq);
    }
    reinterpret_cast<uint4*>(residualOut)[c] = hv;
  }
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) sumSq += __shfl_xor_sync(0xffffffffu, sumSq, m);
  const float rms = rsqrtf(sumSq / float(hidden) + eps);
  for (int c = lane; c < chunks; c += 32) {
    const uint4 hv = reinterpret_cast<const uint4*>(residualOut)[c];  // this lane's own stores
    const uint4 wv = reinterpret_cast<const uint4*>(weight)[c];
    const Bf16* he = reinterpret_cast<const Bf16*>(&hv);
    const Bf16* we = reinterpret_cast<const Bf16*>(&wv);
    if constexpr (sizeof(Out) == 2) {
      uint4 ov;
      Bf16* oe = reinterpret_cast<Bf16*>(&ov);
#pragma unroll
      for (int j = 0; j < 8; ++j) oe[j] = __float2bfloat16_rn((__bfloat162float(he[j]) * rms) * __bfloat162float(we[j]));
      reinterpret_cast<uint4*>(out)[c] = ov;
    } else {
      uint2 ov;
      auto* oe = reinterpret_cast<__nv_fp8_storage_t*>(&ov);
#pragma unroll
      for (int j = 0; j < 8; ++j)
        oe[j] = __nv_cvt_float_to_fp8(((__bfloat162float(he[j]) * rms) * __bfloat162float(we[j])) * invScale,
                                      __NV_SATFINITE, __NV_E4M3);
      reinterpret_cast<uint2*>(out)[c] = ov;
    }
  }
}

/// The rows of the call, one warp each, warps of the whole grid in turn.
template <class Out>
__device__ __forceinline__ void addRmsNormRows(const Bf16* x, const Bf16* residual, Bf16* residualOut,
                                               const Bf16* weight, Out* out, int tokens, int hidden, float eps,
                                               float invScale) {
  const int lane = threadIdx.x % 32;
  const int warps = int(gridDim.x) * int(blockDim.x / 32);
  for (int row = int(blockIdx.x) * int(blockDim.x / 32) + int(threadIdx.x / 32); row < tokens; row += warps) {
    const std::size_t at = std::size_t(row) * std::size_t(hidden);
    addRmsNormRow<Out>(x + at, residual + at, residualOut + at, weight, out + at, hidden, eps, invScale, lane);
  }
}

/// The fused kernel: allReduce's latency or throughput program (the one
/// the call's plan takes) on x (in place: call.in == call.out == x), every
/// CTA waiting for the whole grid's (GridSync::After), then the rows into
/// a bf16 `out`, or an e4m3 one when `fp8`. One kernel for both output
/// types (a uniform branch after the program): the programs' code is
/// compiled once, not per output type. Compiled for bf16 sum alone
/// (allReduce_device<Pair>); the launch bound the throughput program's
/// CTAs need (snac::kDeviceMaxThreads).
__global__ void __launch_bounds__(snac::kDeviceMaxThreads)
    fusedKernel(snac::DeviceCall call, const Bf16* residual, Bf16* residualOut, const Bf16* weight, void* out,
                bool fp8, int tokens, int hidden, float eps, float invScale) {
  if (!::allReduce_device<kBf16Sum>(call)) return;  // a wait gave up: asyncError() says why
  const auto* x = reinterpret_cast<const Bf16*>(call.out);
  if (fp8)
    addRmsNormRows<__nv_fp8_e4m3>(x, residual, residualOut, weight, static_cast<__nv_fp8_e4m3*>(out), tokens, hidden,
                                  eps, invScale);
  else
    addRmsNormRows<Bf16>(x, residual, residualOut, weight, static_cast<Bf16*>(out), tokens, hidden, eps, invScale);
}

/// The unfused path's second kernel.
template <class Out>
__global__ void addRmsNormKernel(const Bf16* x, const Bf16* residual, Bf16* residualOut, const Bf16* weight,
                                 Out* out, int tokens, int hidden, float eps, float invScale) {
  addRmsNormRows<Out>(x, residual, residualOut, weight, out, tokens, hidden, eps, invScale);
}

Status refuse(const std::string& why) {
  setLastError("purlin::fused::allReduceAddRmsNorm: " + why);
  return Status::InvalidArgument;
}

bool overlaps(const void* a, std::size_t aBytes, const void* b, std::size_t bBytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return aBytes != 0 && bBytes != 0 && x < y + bBytes && y < x + aBytes;
}

/// The checks of what every rank passes alike (the output type, the scale,
/// the shape): a refusal here is every rank's, and the communicator stays
/// usable.
Status checkShared(DType outType, float scale, std::size_t tokens, std::size_t hidden) {
  if (outType != DType::BF16 && outType != DType::F8E4M3)
    return refuse(std::string("the output is bf16 or f8e4m3, not ") + dtypeName(outType));
  if (outType == DType::F8E4M3 && !(scale > 0.f)) return refuse("an f8e4m3 output needs a scale > 0");
  if (hidden == 0 || hidden % 8 != 0 || hidden > 65536)
    return refuse("hidden = " + std::to_string(hidden) + ": a multiple of 8 in [8, 65536]");
  if (tokens > (std::size_t(1) << 31) / hidden) return refuse("tokens * hidden exceeds 2^31 elements");
  return Status::Ok;
}

/// The checks of this rank's own buffers (null, alignment, overlap): "" or
/// why. A collective call refuses them on every rank (Communicator::refuseCall),
/// since its peers may be making the call.
std::string checkOwn(const void* x, const Bf16* residual, const Bf16* residualOut, const Bf16* weight,
                     const void* out, DType outType, std::size_t tokens, std::size_t hidden) {
  for (const void* p : {x, static_cast<const void*>(residual), static_cast<const void*>(residualOut),
                        static_cast<const void*>(weight), out})
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
      return "every buffer must be non-null and 16-byte aligned";
  const std::size_t rowsBytes = tokens * hidden * 2, outBytes = tokens * hidden * (outType == DType::BF16 ? 2 : 1);
  const std::size_t weightBytes = hidden * 2;
  if (overlaps(x, rowsBytes, residual, rowsBytes) || overlaps(x, rowsBytes, residualOut, rowsBytes) ||
      overlaps(x, rowsBytes, out, outBytes) || overlaps(residualOut, rowsBytes, out, outBytes) ||
      overlaps(residual, rowsBytes, out, outBytes) ||
      (residual != residualOut && overlaps(residual, rowsBytes, residualOut, rowsBytes)) ||
      overlaps(weight, weightBytes, x, rowsBytes) || overlaps(weight, weightBytes, residualOut, rowsBytes) ||
      overlaps(weight, weightBytes, out, outBytes))
    return "the buffers overlap (only residualOut == residual is allowed)";
  return "";
}

Status launchAddRmsNorm(const Bf16* x, const Bf16* residual, Bf16* residualOut, const Bf16* weight, void* out,
                        DType outType, float scale, int tokens, int hidden, float eps, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int blocks = (tokens + kThreads / 32 - 1) / (kThreads / 32);
  if (outType == DType::BF16)
    addRmsNormKernel<Bf16><<<blocks, kThreads, 0, stream>>>(x, residual, residualOut, weight,
                                                            static_cast<Bf16*>(out), tokens, hidden, eps, 1.f);
  else
    addRmsNormKernel<__nv_fp8_e4m3><<<blocks, kThreads, 0, stream>>>(
        x, residual, residualOut, weight, static_cast<__nv_fp8_e4m3*>(out), tokens, hidden, eps, 1.f / scale);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    setLastError(std::string("purlin::fused: the add-and-norm kernel: ") + cudaGetErrorString(e));
    return Status::CudaError;
  }
  return Status::Ok;
}

} // namespace detail

using detail::Bf16;
using detail::kBf16Sum;

Status addRmsNorm(const Bf16* x, const Bf16* residual, Bf16* residualOut, const Bf16* weight, void* out,
                  DType outType, float scale, std::size_t tokens, std::size_t hidden, float eps, cudaStream_t stream) {
  if (const Status s = detail::checkShared(outType, scale, tokens, hidden); s != Status::Ok) return s;
  if (tokens == 0) return Status::Ok;
  if (const std::string why = detail::checkOwn(x, residual, residualOut, weight, out, outType, tokens, hidden);
      !why.empty())
    return detail::refuse(why);
  return detail::launchAddRmsNorm(x, residual, residualOut, weight, out, outType, scale, int(tokens), int(hidden), eps,
                          stream);
}

Status allReduceAddRmsNorm(Communicator& comm, Bf16* x, const Bf16* residual, Bf16* residualOut,
                           const Bf16* weight, void* out, DType outType, float scale, std::size_t tokens,
                           std::size_t hidden, float eps, cudaStream_t stream, Fusion mode, bool* fused) {
  if (fused != nullptr) *fused = false;
  if (const Status s = detail::checkShared(outType, scale, tokens, hidden); s != Status::Ok) return s;
  if (tokens == 0) return Status::Ok;
  if (const std::string why = detail::checkOwn(x, residual, residualOut, weight, out, outType, tokens, hidden);
      !why.empty()) {
    // This rank's own buffers: its peers may be making the call, so the
    // communicator fails on every rank (docs/failure-model.md).
    setLastError("purlin::fused::allReduceAddRmsNorm: " + why +
                 "; a refusal of this rank's own arguments fails the communicator on every rank");
    return comm.refuseCall(Status::InvalidArgument, why, stream);
  }
  const std::size_t count = tokens * hidden;
  const int t = int(tokens), h = int(hidden);
  if (mode != Fusion::Unfused) {
    const bool fp8 = outType == DType::F8E4M3;
    const Status s = gen::allReduce_launchDevice<kBf16Sum>(comm, x, x, count, DType::BF16, RedOp::Sum, stream,
                                                           detail::fusedKernel, residual, residualOut, weight, out, fp8,
                                                           t, h, eps, fp8 ? 1.f / scale : 1.f);
    // Unsupported: the kernel cannot hold the planned program's grid (the
    // same on every rank); nothing ran, so Auto runs the two kernels.
    if (s != Status::Unsupported || mode == Fusion::Fused) {
      if (s == Status::Ok && fused != nullptr) *fused = true;
      return s;
    }
  }
  if (const Status s = gen::allReduce(comm, x, x, count, DType::BF16, RedOp::Sum, stream); s != Status::Ok) return s;
  return detail::launchAddRmsNorm(x, residual, residualOut, weight, out, outType, scale, t, h, eps, stream);
}

} // namespace purlin::fused

extern "C" purlin_status_t purlin_allReduceAddRmsNorm(purlin_comm_t comm, void* x, const void* residual,
                                                      void* residualOut, const void* weight, void* out,
                                                      purlin_dtype_t outType, float scale, size_t tokens,
                                                      size_t hidden, float eps, cudaStream_t stream, int mode,
                                                      int* fused) {
  using namespace purlin;
  Communicator* communicator = purlin_comm_unwrap(comm);
  if (communicator == nullptr)
    return capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_allReduceAddRmsNorm: the communicator is NULL");
  if (mode < 0 || mode > 2)
    return capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_allReduceAddRmsNorm: mode is 0 (auto), 1 (fused) or 2 (unfused)");
  bool ran = false;
  const Status s = fused::allReduceAddRmsNorm(
      *communicator, static_cast<__nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(residual),
      static_cast<__nv_bfloat16*>(residualOut), static_cast<const __nv_bfloat16*>(weight), out,
      static_cast<DType>(outType), scale, tokens, hidden, eps, stream, static_cast<fused::Fusion>(mode), &ran);
  if (fused != nullptr) *fused = ran ? 1 : 0;
  if (s == Status::Ok) return PURLIN_OK;
  return capi::fail(static_cast<purlin_status_t>(s), purlin::lastError());
}
