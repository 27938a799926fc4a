/// @file micro_common.cuh
/// @brief Shared pieces of the Atom microbenchmarks: error handling, the
/// datapaths measured (the four tags and the Hopper tuning candidates), the
/// copy kernel with a run-time choice of pipeline depth, and timing helpers
/// (events around plain launches, or a CUDA graph of many launches).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "micro_check.h"

#include "purlin/atom/atom.cuh"

namespace micro {

namespace pa = purlin::atom;

/// Aborts the benchmark with a message (a benchmark has nothing to recover).
#define MICRO_CK(call) MICRO_CUDA_CHECK("atom_micro", call)

/// Stage bytes of every pipelined configuration measured (the paper's H200 value).
inline constexpr int kStageBytes = 16384;

/// Pipeline tunings measured: Ampere (plain) and the Hopper candidates.
using TAmpere = pa::AmpereTuning;
using TL2Hint = pa::Tuning<true, pa::StoreKind::Plain, false, 800>;
using TStCs = pa::Tuning<false, pa::StoreKind::Streaming, false, 800>;
using TStNa = pa::Tuning<false, pa::StoreKind::NoAlloc, false, 800>;
using TBulkPf = pa::Tuning<false, pa::StoreKind::Plain, true, 900>;
using THopper = pa::HopperTuning;

/// Each CTA copies a contiguous share of the range, cut at 16-byte multiples.
template <class A>
__global__ void copyKernel(std::byte* dst, const std::byte* src, std::size_t bytes) {
  extern __shared__ __align__(16) std::byte ws[];
  if constexpr (pa::kAtomCompiled<A>) {
    const std::size_t per = (bytes / gridDim.x + 15) & ~std::size_t{15};
    const std::size_t lo = per * blockIdx.x < bytes ? per * blockIdx.x : bytes;
    const std::size_t hi = lo + per < bytes ? lo + per : bytes;
    A::copy(dst + lo, src + lo, hi - lo, ws);
  } else {
    __trap();
  }
}

using CopyFn = void (*)(std::byte*, const std::byte*, std::size_t);

/// A copy kernel and the dynamic shared memory it needs.
struct CopyKernel {
  CopyFn fn = nullptr;
  std::size_t smem = 0;
};

template <class A>
CopyKernel makeKernel() {
  CopyKernel k{copyKernel<A>, A::kWorkspaceBytes};
  if (k.smem > 48 * 1024)
    MICRO_CK(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(k.smem)));
  return k;
}

template <class T, int... S>
CopyKernel pipelined(int stages, std::integer_sequence<int, S...>) {
  CopyKernel k;
  ((stages == S + 1 ? (k = makeKernel<pa::Atom<T, S + 1, kStageBytes>>(), 0) : 0), ...);
  return k;
}

/// The copy kernel of datapath `name` ("generic", "ampere", "hopper",
/// "l2hint", "st.cs", "st.na", "bulkpf") with `stages` stages of 16 KiB.
inline CopyKernel kernelFor(const std::string& name, int stages) {
  auto seq = std::make_integer_sequence<int, 8>{};
  if (name == "generic") return makeKernel<pa::Atom<pa::Generic>>();
  if (name == "ampere") return pipelined<TAmpere>(stages, seq);
  if (name == "hopper") return pipelined<THopper>(stages, seq);
  if (name == "l2hint") return pipelined<TL2Hint>(stages, seq);
  if (name == "st.cs") return pipelined<TStCs>(stages, seq);
  if (name == "st.na") return pipelined<TStNa>(stages, seq);
  if (name == "bulkpf") return pipelined<TBulkPf>(stages, seq);
  return {};
}

/// GB/s of `launches` back-to-back copies of `bytes` (after one warm-up),
/// timed with events on `stream` of the current device.
inline double timeCopies(const CopyKernel& k, int ctas, int threads, std::byte* dst, const std::byte* src,
                         std::size_t bytes, int launches, cudaStream_t stream) {
  cudaEvent_t e0, e1;
  MICRO_CK(cudaEventCreate(&e0));
  MICRO_CK(cudaEventCreate(&e1));
  k.fn<<<ctas, threads, k.smem, stream>>>(dst, src, bytes);
  MICRO_CK(cudaGetLastError());
  MICRO_CK(cudaEventRecord(e0, stream));
  for (int i = 0; i < launches; ++i) k.fn<<<ctas, threads, k.smem, stream>>>(dst, src, bytes);
  MICRO_CK(cudaEventRecord(e1, stream));
  MICRO_CK(cudaEventSynchronize(e1));
  float ms = 0;
  MICRO_CK(cudaEventElapsedTime(&ms, e0, e1));
  MICRO_CK(cudaEventDestroy(e0));
  MICRO_CK(cudaEventDestroy(e1));
  return static_cast<double>(bytes) * launches / (ms * 1e-3) / 1e9;
}

/// The paper's method: capture `perGraph` launches in a CUDA graph, replay
/// once to warm up, time `replays` replays; returns GB/s per copy.
inline double timeCopiesGraph(const CopyKernel& k, int ctas, int threads, std::byte* dst, const std::byte* src,
                              std::size_t bytes, int perGraph, int replays, cudaStream_t stream) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  MICRO_CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < perGraph; ++i) k.fn<<<ctas, threads, k.smem, stream>>>(dst, src, bytes);
  MICRO_CK(cudaStreamEndCapture(stream, &g));
  MICRO_CK(cudaGraphInstantiate(&ge, g, 0));
  MICRO_CK(cudaGraphLaunch(ge, stream));
  cudaEvent_t e0, e1;
  MICRO_CK(cudaEventCreate(&e0));
  MICRO_CK(cudaEventCreate(&e1));
  MICRO_CK(cudaEventRecord(e0, stream));
  for (int r = 0; r < replays; ++r) MICRO_CK(cudaGraphLaunch(ge, stream));
  MICRO_CK(cudaEventRecord(e1, stream));
  MICRO_CK(cudaEventSynchronize(e1));
  float ms = 0;
  MICRO_CK(cudaEventElapsedTime(&ms, e0, e1));
  MICRO_CK(cudaEventDestroy(e0));
  MICRO_CK(cudaEventDestroy(e1));
  MICRO_CK(cudaGraphExecDestroy(ge));
  MICRO_CK(cudaGraphDestroy(g));
  return static_cast<double>(bytes) * perGraph * replays / (ms * 1e-3) / 1e9;
}

} // namespace micro
