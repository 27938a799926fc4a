/// @file fused_rmsnorm.h
/// @brief AllReduce + residual add + RMSNorm in one kernel, built on the
/// device API (docs/device-api.md): the shipped example of a user's kernel
/// that runs a printed collective's program (allReduce of
/// dsl_examples/allreduce.pl, generated/allreduce.device.cuh) and then its
/// own code on the result. Part of libpurlin (the C function below is what
/// purlin.torch.all_reduce_add_rms_norm calls).
///
/// One call, on every rank of the communicator, with x of `tokens` rows of
/// `hidden` bf16 elements (this rank's partial sums, e.g. a row-parallel
/// GEMM's output):
///   x           <- AllReduce(x, sum)                    (in place)
///   h            = x + residual                         (fp32, per element)
///   residualOut <- bf16(h)
///   rms          = rsqrt(sum_i float(residualOut_i)^2 / hidden + eps)
///                  (fp32; per lane ascending, then a fixed butterfly: see
///                  addRmsNormRow in fused_rmsnorm.cu)
///   out         <- bf16((float(residualOut_i) * rms) * float(weight_i)), or
///                  for an fp8 (e4m3) output the same value / scale,
///                  saturated to the e4m3 range.
/// The fused and the unfused path (the AllReduce, then one add-and-norm
/// kernel) run the same row code, so their results are bitwise equal.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

#include "purlin/purlin.h"

#ifdef __cplusplus
#include <cuda_bf16.h>

#include "purlin/host/communicator.h"

namespace purlin::fused {

/// How allReduceAddRmsNorm runs: Fused (one kernel, the device API, with
/// the latency or the throughput program as the call's plan takes; a call
/// whose program the kernel cannot hold, e.g. ranks sharing a GPU beyond
/// its residency, is refused with Status::Unsupported and nothing runs),
/// Unfused (the AllReduce, then the add-and-norm kernel), or Auto (fused,
/// else unfused where Fused is refused: the same results).
enum class Fusion { Auto, Fused, Unfused };

/// The call above. `out` holds bf16 (outType DType::BF16) or e4m3
/// (DType::F8E4M3, with `scale` > 0). residualOut may be residual (in place);
/// nothing else may overlap. Every pointer 16-byte aligned, hidden a
/// multiple of 8 (at most 65536), tokens * hidden elements per buffer
/// (weight: hidden). `fused` (optional) tells which path ran.
Status allReduceAddRmsNorm(Communicator& comm, __nv_bfloat16* x, const __nv_bfloat16* residual,
                           __nv_bfloat16* residualOut, const __nv_bfloat16* weight, void* out, DType outType,
                           float scale, std::size_t tokens, std::size_t hidden, float eps, cudaStream_t stream,
                           Fusion mode = Fusion::Auto, bool* fused = nullptr);

/// The add-and-norm of the call alone, on x as it is (the unfused path's
/// second kernel; a reference for tests). Same arguments and checks.
Status addRmsNorm(const __nv_bfloat16* x, const __nv_bfloat16* residual, __nv_bfloat16* residualOut,
                  const __nv_bfloat16* weight, void* out, DType outType, float scale, std::size_t tokens,
                  std::size_t hidden, float eps, cudaStream_t stream);

} // namespace purlin::fused

extern "C" {
#endif

/// C ABI of allReduceAddRmsNorm: mode 0 Auto, 1 Fused, 2 Unfused; *fused
/// (optional) 1 when the fused kernel ran.
purlin_status_t purlin_allReduceAddRmsNorm(purlin_comm_t comm, void* x, const void* residual, void* residualOut,
                                           const void* weight, void* out, purlin_dtype_t outType, float scale,
                                           size_t tokens, size_t hidden, float eps, cudaStream_t stream, int mode,
                                           int* fused);

#ifdef __cplusplus
}
#endif
