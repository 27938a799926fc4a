/// @file device_api.cuh
/// @brief The device API (docs/device-api.md): a user's kernel runs a
/// printed collective's latency or throughput program and then its own
/// code on the result, in one kernel (AllReduce + residual add + RMSNorm:
/// examples/fused_rmsnorm). purlinc prints, per collective, the device
/// entry NAME_device (NAME.device.cuh: the latency or throughput kernel's
/// CTA body, then deviceCallEnd) and the host launcher NAME_launchDevice
/// (NAME.programs.h: the call's checks and plan, as NAME's, then the user's
/// kernel launched in place of the planned program's kernel with a
/// DeviceCall as its first parameter).
/// This header holds what those two share: the DeviceCall, the grid
/// barrier and the type-erased launch of the user's kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime.h>

#include "purlin/device_comm.h"
#include "purlin/limits.h"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/primitives.cuh"
#include "purlin/snac/program_launch.cuh"
#include "purlin/snac/protocol.h"

namespace purlin::snac {

/// One call of the device API, the first parameter (by value) of the user's
/// kernel: the communicator's device view, the call's plan (its program:
/// Plan::latency) and the call's buffers, as the printed kernels take them.
struct DeviceCall {
  DeviceComm dc;
  Plan pl;
  const std::byte* in;
  std::byte* out;
};

/// What NAME_device does after the program: GridSync::After (the default)
/// waits until every CTA of the grid has finished it, so that every CTA may
/// then read any part of the output (a row that several CTAs wrote);
/// GridSync::None returns as soon as this CTA's part is done (its packet
/// groups: docs/device-api.md says which bytes those are).
enum class GridSync { After, None };

/// The launch bound a user's kernel declares, `__launch_bounds__(snac::
/// kDeviceMaxThreads)`, when its NAME_device may run the throughput
/// program (its CTAs of up to limits::kMaxThroughputThreads threads must
/// be resident, at most 128 registers per thread, as the printed
/// throughput kernel's). A policy whose latency program has more threads
/// per CTA than this bound gets its calls refused (Unsupported: no CTA of
/// that size is resident).
inline constexpr int kDeviceMaxThreads = limits::kMaxThroughputThreads;

/// The launch shape of a one-rank call (no latency plan: a communicator of
/// one rank copies its block, deviceLocalCall), unless the policy's
/// world[1] gives the latency shape.
inline constexpr int kDeviceLocalCtas = 32;
inline constexpr int kDeviceLocalThreads = 512;

#if defined(__CUDACC__)
/// Grid barrier of one device-API call (CTA-collective, every CTA of the
/// grid), at gpu scope: the output it orders is this GPU's memory, written
/// and read by this grid only. Each CTA's thread 0, after a CTA barrier,
/// arrives on the counter kGridBarrierCounter (atom.add.acq_rel.gpu); the
/// last to arrive resets it and releases this rank's GRID signal with the
/// call's epoch value (st.release.gpu); the others acquire it (a bounded
/// spin: it gives up as every wait does, SpinBound). So every CTA's writes
/// before the barrier are visible to every CTA after it. One CTA: a CTA
/// barrier only. False in every thread if the wait gave up.
template <int = 0>
__device__ __forceinline__ bool ctaGridBarrier(const DeviceComm& dc, uint64_t epoch) {
  if (gridDim.x == 1) {
    __syncthreads();
    return true;
  }
  int ok = 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t* arrivals = &dc.state->counters[kGridBarrierCounter];
    uint64_t* grid = dc.signals[dc.rank] + kGridBarrierIndex;
    const uint64_t value = signalValue(epoch, 0);
    arch::fenceAcqRelGpu();  // the CTA's writes, observed through the CTA barrier
    if (arch::atomAddAcqRelGpu(arrivals, 1u) == gridDim.x - 1) {
      atomicExch(arrivals, 0u);  // ready for the next call (ordered before the release)
      arch::stReleaseGpu(grid, value);
    } else {
      SpinBound bound;
      uint64_t v;
      while ((v = arch::ldAcquireGpu(grid)) < value)
        if (!bound.step(dc, WaitKind::Signal, kGridBarrierIndex, value, v)) {
          ok = 0;
          break;
        }
    }
  }
  return __syncthreads_and(ok) != 0;
}

/// The end of NAME_device (CTA-collective): the grid barrier when `sync`
/// asks for it, then true in every thread of the CTA when no wait of this
/// rank gave up (aborted(): a wait of the program that gave up returned
/// early and left its part of the output unwritten).
template <int = 0>
__device__ __forceinline__ bool deviceCallEnd(const DeviceComm& dc, uint64_t epoch, GridSync sync) {
  if (sync == GridSync::After && !ctaGridBarrier(dc, epoch)) return false;
  return __syncthreads_and(threadIdx.x != 0 || !aborted(dc)) != 0;
}

/// NAME_device on a communicator of one rank (CTA-collective): every
/// collective is then a copy of this rank's block to itself (as
/// snac::launch's cudaMemcpyAsync for the printed programs), here by the
/// grid's threads (16-byte words where both ends are co-aligned), within
/// the call's epoch, then deviceCallEnd with the grid barrier whatever the
/// caller's GridSync: the copy's bytes are spread over the whole grid, not
/// over packet groups, so no CTA's part is done before every CTA's is.
template <int = 0>
__device__ __forceinline__ bool deviceLocalCall(const DeviceCall& c) {
  gridDependencyWait();
  const uint64_t e = ctaEpoch(c.dc);
  const std::byte* src = c.in + c.pl.txOff[0];
  std::byte* dst = c.out + c.pl.rxOff[0];
  const std::size_t bytes = c.pl.txLen[0];
  if (src != dst) {
    const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
    std::size_t head = 0;
    if (((reinterpret_cast<std::uintptr_t>(src) ^ reinterpret_cast<std::uintptr_t>(dst)) & 15) == 0) {
      head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
      if (head > bytes) head = bytes;
      const std::size_t words = (bytes - head) / 16;
      for (std::size_t i = tid; i < words; i += threads)
        reinterpret_cast<uint4*>(dst + head)[i] = reinterpret_cast<const uint4*>(src + head)[i];
      for (std::size_t i = head + words * 16 + tid; i < bytes; i += threads) dst[i] = src[i];
      for (std::size_t i = tid; i < head; i += threads) dst[i] = src[i];
    } else {
      for (std::size_t i = tid; i < bytes; i += threads) dst[i] = src[i];
    }
  }
  ctaEndCall(c.dc, e);
  return deviceCallEnd(c.dc, e, GridSync::After);
}
#endif

/// The user's kernel as NAME_launchDevice hands it to snac::launch
/// (CallArgs::deviceLaunch): its address, and the addresses of its
/// parameters after the DeviceCall, in order (cudaLaunchKernelExC's form).
/// `pair`: the reduction pair the kernel's NAME_device<Pair> is compiled
/// for (kAnyPair: every pair of the instantiation table).
struct DeviceLaunch {
  const void* kernel = nullptr;
  void* const* args = nullptr;
  int argc = 0;
  int pair = -1;
  /// The most parameters after the DeviceCall.
  static constexpr int kMaxArgs = 24;
};

/// The values of the user's kernel parameters after the DeviceCall, each
/// converted to its parameter's type, and their addresses (what
/// DeviceLaunch::args points to: valid while this object lives, i.e. for
/// the NAME_launchDevice call that made it).
template <class... K> struct DeviceArgs {
  std::tuple<K...> values;
  void* ptrs[sizeof...(K) + 1] = {};
  // Direct-initialized, not cast: a value that does not convert to its
  // parameter's type (e.g. a void* for a T*) does not compile.
  template <class... A> explicit DeviceArgs(A&&... a) : values(std::forward<A>(a)...) {
    fill(std::index_sequence_for<K...>{});
  }
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;

 private:
  template <std::size_t... I> void fill(std::index_sequence<I...>) { ((ptrs[I] = &std::get<I>(values)), ...); }
};

/// The DeviceLaunch of `kernel` with the parameter values `args`, for the
/// reduction pair `Pair` (kAnyPair: any) its NAME_device is compiled for.
template <int Pair, class... K>
DeviceLaunch deviceLaunchOf(void (*kernel)(DeviceCall, K...), DeviceArgs<K...>& args) {
  static_assert(sizeof...(K) <= DeviceLaunch::kMaxArgs, "the device API takes at most DeviceLaunch::kMaxArgs "
                                                          "kernel parameters after the DeviceCall");
  DeviceLaunch d;
  d.kernel = reinterpret_cast<const void*>(kernel);
  d.args = args.ptrs;
  d.argc = int(sizeof...(K));
  d.pair = Pair;
  return d;
}

/// Launches the user's kernel of `d` with `call` as its first parameter,
/// grid x block threads and `smem` bytes of dynamic shared memory (the
/// throughput program's workspace; 0 for the latency program) on lc's
/// stream, with programmatic stream serialization when `serialize` (as the
/// printed kernel it replaces: NAME_device waits for the previous grid
/// first). Host only.
template <int = 0>
Status launchDeviceKernel(const LaunchContext& lc, const DeviceLaunch& d, const DeviceCall& call, int grid, int block,
                          std::size_t smem, bool serialize) {
  if (d.argc < 0 || d.argc > DeviceLaunch::kMaxArgs)
    return detail::report(Status::InvalidArgument, lc.who() + "the device API takes at most " +
                                                       std::to_string(DeviceLaunch::kMaxArgs) +
                                                       " kernel parameters after the DeviceCall");
  if (smem > 48 * 1024) {
    if (const cudaError_t err = cudaFuncSetAttribute(d.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        err != cudaSuccess) {
      (void)cudaGetLastError();
      return detail::report(Status::CudaError, lc.who() + "the device API's kernel: cudaFuncSetAttribute(" +
                                                   std::to_string(smem) + " B shared memory): " + cudaGetErrorString(err));
    }
  }
  void* argv[DeviceLaunch::kMaxArgs + 1];
  argv[0] = const_cast<DeviceCall*>(&call);
  for (int i = 0; i < d.argc; ++i) argv[i + 1] = d.args[i];
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3(unsigned(grid));
  cfg.blockDim = dim3(unsigned(block));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = lc.stream;
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = serialize ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelExC(&cfg, d.kernel, argv);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return detail::report(Status::CudaError, lc.who() + "the device API's kernel launch (" + std::to_string(grid) +
                                                 " CTAs x " + std::to_string(block) + "): " + cudaGetErrorString(err));
  }
  return Status::Ok;
}

/// LaunchContext::device for the device API: the user's kernel of
/// `deviceArg` (a DeviceLaunch) in place of the printed program's kernel,
/// with its launch shape and a DeviceCall of its parameters. Host only.
template <int = 0>
Status launchDeviceProgram(const LaunchContext& lc, const void* deviceArg, const DeviceComm& dc, const Plan& pl,
                           const std::byte* in, std::byte* out, int grid, int block, std::size_t smem,
                           bool serialize) {
  const DeviceCall call{dc, pl, in, out};
  return launchDeviceKernel(lc, *static_cast<const DeviceLaunch*>(deviceArg), call, grid, block, smem, serialize);
}

/// CTAs of the user's kernel (`block` threads, `smem` bytes of dynamic
/// shared memory) that are resident at once on this GPU, shared by `grids`
/// grids (the ranks sharing it, each running the same kernel, two grids
/// each with programmatic dependent launch): the grid barrier and the
/// programs' waits need every CTA of every rank sharing the GPU resident
/// together. 0 if none fits (the same on every rank: one kernel, GPUs of
/// one model), -1 if the query failed (this rank's CUDA error); `error`
/// says which. Host only.
/// The queries are made once per (kernel, block, shared memory, device)
/// and thread, and kept (the last kKnown of them): a few microseconds of
/// host time each, on every call's path otherwise. Inline in the caller's
/// unit: its CUDA runtime is the one that knows the kernel
/// (purlin/snac/module_anchor.cuh).
template <int = 0>
int residentDeviceCtas(const DeviceLaunch& d, int device, int block, std::size_t smem, int grids, std::string& error) {
  struct Known {
    const void* kernel = nullptr;
    int block = 0, device = -1, ctas = 0;
    std::size_t smem = 0;
  };
  constexpr int kKnown = 8;
  static thread_local Known known[kKnown];
  static thread_local int next = 0;
  int gpuCtas = -1;
  for (const Known& k : known)
    if (k.kernel == d.kernel && k.block == block && k.smem == smem && k.device == device) gpuCtas = k.ctas;
  if (gpuCtas < 0) {
    int perSm = 0, sms = 0, optin = 0;
    cudaFuncAttributes fa{};
    cudaError_t err = cudaFuncGetAttributes(&fa, d.kernel);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (err == cudaSuccess && fa.sharedSizeBytes + smem > std::size_t(optin)) {
      // The kernel's static shared memory and the workspace exceed what a
      // CTA may have on this GPU (every rank alike): no CTA fits.
      error = "the device API's kernel: its " + std::to_string(fa.sharedSizeBytes) + " B of static shared memory and " +
              "the program's " + std::to_string(smem) + " B of workspace exceed this GPU's " + std::to_string(optin) +
              " B per CTA";
      return 0;
    }
    if (err == cudaSuccess && fa.maxThreadsPerBlock < block) {  // its __launch_bounds__ or its registers
      error = "the device API's kernel: at most " + std::to_string(fa.maxThreadsPerBlock) + " threads per CTA (its "
              "launch bound or registers); the program's CTAs have " + std::to_string(block);
      return 0;
    }
    if (err == cudaSuccess && smem > 48 * 1024)
      err = cudaFuncSetAttribute(d.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, d.kernel, block, smem);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      error = std::string("the device API's kernel: occupancy query: ") + cudaGetErrorString(err);
      return -1;
    }
    gpuCtas = perSm * sms;
    known[next] = Known{d.kernel, block, device, gpuCtas, smem};
    next = (next + 1) % kKnown;
  }
  const int resident = gpuCtas / (grids > 0 ? grids : 1);
  if (resident < 1)
    error = "the device API's kernel: no CTA of " + std::to_string(block) + " threads" +
            (smem ? " and " + std::to_string(smem) + " B of dynamic shared memory" : std::string()) +
            " is resident (its registers or shared memory exceed the SM's share)";
  return resident;
}

} // namespace purlin::snac
