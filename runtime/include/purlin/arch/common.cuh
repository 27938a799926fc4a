/// @file common.cuh
/// @brief Raw PTX wrappers valid on every architecture the runtime targets
/// (sm_70 and newer): 16-byte vector global loads/stores with cache hints,
/// system-scope acquire/release accesses, acq_rel RMWs, fences, nanosleep.
///
/// Each wrapper is one instruction; its comment states the memory-model
/// semantics (PTX ISA, "Memory Consistency Model"). Device code only: the
/// whole header is empty outside nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)

/// The architecture the current compilation pass targets, as __CUDA_ARCH__
/// (800 for sm_80, ...). The host pass never emits device code, so it claims
/// every feature (a large value): host-side template instantiations then
/// type-check the same way the newest device pass does.
#if defined(__CUDA_ARCH__)
#define PURLIN_DEVICE_ARCH __CUDA_ARCH__
#else
#define PURLIN_DEVICE_ARCH 100000
#endif

namespace purlin::arch {

/// Shared-memory address (32-bit, the .shared window) of a generic pointer
/// that points into shared memory.
__device__ __forceinline__ uint32_t smemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------------------
// 16-byte vector loads. `p` must be 16-byte aligned. All are weak loads
// (no ordering beyond what a preceding acquire establishes).
// ---------------------------------------------------------------------------

/// ld.global.v4: default caching (L1 and L2).
__device__ __forceinline__ uint4 ldGlobal16(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

/// ld.global.L1::no_allocate.v4: does not allocate in L1, so a later read of
/// the same address after an acquire cannot hit a stale L1 line; the
/// preferred load for peer (NVLink) memory and for data read once.
__device__ __forceinline__ uint4 ldGlobal16NoAlloc(const void* p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

/// ld.volatile.global.v4: never served from a stale cache line; each call
/// performs the access (used for polling packets).
__device__ __forceinline__ uint4 ldVolatile16(const void* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ---------------------------------------------------------------------------
// 16-byte vector stores. `p` must be 16-byte aligned.
// ---------------------------------------------------------------------------

/// st.global.v4: write-back (default policy).
__device__ __forceinline__ void stGlobal16(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/// st.global.cs.v4: streaming store (evict-first), for data not re-read soon.
__device__ __forceinline__ void stGlobal16Streaming(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/// st.global.L1::no_allocate.v4: does not allocate the line in L1.
__device__ __forceinline__ void stGlobal16NoAlloc(void* p, uint4 v) {
  asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1,%2,%3,%4};"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/// st.volatile.global.v4: one 16-byte store performed as issued (packets).
__device__ __forceinline__ void stVolatile16(void* p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/// st.volatile.global.v2.u64: one 16-byte store of two 8-byte elements,
/// performed as issued. Each element is single-copy atomic (PTX memory
/// model: a vector access is a set of scalar accesses of its element size),
/// so a reader sees each 8-byte word either whole-old or whole-new; nothing
/// is promised across the two (packet groups, packet_group.cuh).
__device__ __forceinline__ void stVolatile2x64(void* p, uint64_t lo, uint64_t hi) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" :: "l"(p), "l"(lo), "l"(hi) : "memory");
}

/// ld.volatile.global.v2.u64: the load matching stVolatile2x64 (each 8-byte
/// element single-copy atomic; never served from a stale cache line).
__device__ __forceinline__ void ldVolatile2x64(const void* p, uint64_t& lo, uint64_t& hi) {
  asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(p) : "memory");
}

// ---------------------------------------------------------------------------
// Synchronization at system scope (across GPUs) and gpu scope.
// ---------------------------------------------------------------------------

/// ld.acquire.sys: reads *p; every access of this thread after it in program
/// order is ordered after the read (pairs with stReleaseSys on any GPU).
__device__ __forceinline__ uint64_t ldAcquireSys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ldAcquireSys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// ld.acquire.gpu / st.release.gpu: as the .sys forms, among the threads of
/// one GPU (a flag no peer reads: the device API's grid barrier).
__device__ __forceinline__ uint64_t ldAcquireGpu(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void stReleaseGpu(uint64_t* p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/// ld.relaxed.sys: a strong read without ordering (cheap polling; follow a
/// successful poll with fenceAcqRelSys() or re-read with ldAcquireSys()).
__device__ __forceinline__ uint64_t ldRelaxedSys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

/// st.release.sys: writes v to *p after every access of this thread before it
/// in program order (and, cumulatively, every write it has observed).
__device__ __forceinline__ void stReleaseSys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void stReleaseSys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

/// st.relaxed.sys: a strong write without ordering.
__device__ __forceinline__ void stRelaxedSys(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/// atom.add.acq_rel.gpu: returns the old value; acquire + release at gpu scope
/// (last-arriver counters among the CTAs of one GPU).
__device__ __forceinline__ uint32_t atomAddAcqRelGpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

/// atom.add.acq_rel.sys: as above at system scope.
__device__ __forceinline__ uint64_t atomAddAcqRelSys(uint64_t* p, uint64_t v) {
  uint64_t old;
  asm volatile("atom.add.acq_rel.sys.global.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}

/// red.release.sys.add: a release-ordered remote add without a return value.
__device__ __forceinline__ void redAddReleaseSys(uint64_t* p, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/// fence.acq_rel.sys: orders this thread's accesses before it against those
/// after it, at system scope (publishing writes to peers).
__device__ __forceinline__ void fenceAcqRelSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/// fence.acq_rel.gpu: as above at gpu scope.
__device__ __forceinline__ void fenceAcqRelGpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/// nanosleep: suspends the thread for about `ns` nanoseconds (0..1e6), a hint.
__device__ __forceinline__ void nanosleep(uint32_t ns) { asm volatile("nanosleep.u32 %0;" :: "r"(ns)); }

/// %globaltimer: nanoseconds of a global clock (coarse; for timeouts only).
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

} // namespace purlin::arch

#endif // __CUDACC__
