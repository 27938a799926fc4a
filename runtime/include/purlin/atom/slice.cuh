/// @file slice.cuh
/// @brief Slice: which of a group of cooperating threads this one is. The
/// Atom's CTA-collective calls use the whole CTA; the slice form of the same
/// calls lets a warp or any subset of threads share one transfer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

/// This thread is `tid` (0 <= tid < nthr) of `nthr` threads that call the
/// same Atom function with the same arguments.
struct Slice {
  unsigned tid;
  unsigned nthr;
};

#if defined(__CUDACC__)
/// The whole CTA, threads numbered x-fastest.
__device__ __forceinline__ Slice ctaSlice() {
  return Slice{threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z),
               blockDim.x * blockDim.y * blockDim.z};
}
/// The calling warp alone (all 32 lanes must call).
__device__ __forceinline__ Slice warpSlice() {
  return Slice{threadIdx.x % 32u, 32u};
}
#endif

/// Largest number of sources of Atom::reduce.
inline constexpr int kMaxSources = 8;

} // namespace purlin::atom
