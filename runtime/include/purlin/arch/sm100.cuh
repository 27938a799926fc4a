/// @file sm100.cuh
/// @brief Raw PTX wrappers introduced with Blackwell (sm_100): 32-byte
/// (256-bit) vector global loads and stores. Using them in a pass for an
/// older architecture is a compile-time error with a message.
#pragma once

#include "purlin/arch/sm90.cuh"

#if defined(__CUDACC__)

namespace purlin::arch {

/// 32 bytes as two 16-byte halves.
struct alignas(32) Vec32 {
  uint4 lo, hi;
};

/// ld.global.L1::no_allocate.v8.u32 (sm_100+): one 32-byte load.
/// Precondition: p 32-byte aligned.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ Vec32 ldGlobal32NoAlloc(const void* p) {
  static_assert(kArch >= 1000, "256-bit ld.global.v8 needs sm_100 or newer");
  Vec32 v;
  asm volatile("ld.global.L1::no_allocate.v8.u32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
               : "=r"(v.lo.x), "=r"(v.lo.y), "=r"(v.lo.z), "=r"(v.lo.w),
                 "=r"(v.hi.x), "=r"(v.hi.y), "=r"(v.hi.z), "=r"(v.hi.w)
               : "l"(p));
  return v;
}

/// st.global.v8.u32 (sm_100+): one 32-byte store. Precondition: p 32-byte aligned.
template <int kArch = PURLIN_DEVICE_ARCH>
__device__ __forceinline__ void stGlobal32(void* p, const Vec32& v) {
  static_assert(kArch >= 1000, "256-bit st.global.v8 needs sm_100 or newer");
  asm volatile("st.global.v8.u32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8};"
               :: "l"(p), "r"(v.lo.x), "r"(v.lo.y), "r"(v.lo.z), "r"(v.lo.w),
                  "r"(v.hi.x), "r"(v.hi.y), "r"(v.hi.z), "r"(v.hi.w)
               : "memory");
}

} // namespace purlin::arch

#endif // __CUDACC__
