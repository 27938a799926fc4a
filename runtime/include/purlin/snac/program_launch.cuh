/// @file program_launch.cuh
/// @brief Host primitives the printed host code (NAME_enqueue in the
/// generated .cu: the choice of program for a planned call) launches its
/// programs with: one kernel launch with the plan's shape, or the
/// copy-engine form's graph (graph.cuh), each failure reported as a Status
/// plus snac::lastError(). Nothing here throws.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "purlin/atom/elem.cuh"
#include "purlin/device_comm.h"
#include "purlin/last_error.h"
#include "purlin/snac/graph.cuh"

namespace purlin::snac {

namespace detail {
inline Status report(Status s, std::string message) {
  setLastError(std::move(message));
  return s;
}
} // namespace detail

/// The message of this thread's last failed launch ("" if none); the same
/// as purlin::lastError() (purlin/last_error.h, a host header).
inline const char* lastError() { return purlin::lastError(); }

/// Where and how one call's program is enqueued: the call's stream,
/// programmatic dependent launch for the kernels that may start while the
/// previous grid runs (latency, direct), the communicator's capture side
/// stream and events (the copy-engine form), and the collective's name for
/// messages.
struct LaunchContext {
  cudaStream_t stream = nullptr;
  bool pdl = false;
  const char* collective = "";
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  const cudaEvent_t* chunks = nullptr;
  int chunkEvents = 0;
  /// A kernel launchProgram enqueues right before the program, once every
  /// refusal of the printed code has passed (a device-count call's counts
  /// kernel: device_counts.cuh launchCountsKernel, whose argument is
  /// `preludeArg`); null: none. Enqueued earlier, a refusal after it would
  /// leave its signals at an epoch no program advanced.
  Status (*prelude)(const LaunchContext&, const void*) = nullptr;
  const void* preludeArg = nullptr;
  /// The device API (device_api.cuh launchDeviceProgram): when set,
  /// launchProgram launches the user's kernel of `deviceArg` in place of
  /// the latency or throughput kernel the printed code picked, with that
  /// kernel's grid, block, dynamic shared memory and serialization, and a
  /// DeviceCall of its parameters (dc, pl, in, out). Another program is
  /// refused (Internal: the device API's launch never plans one).
  Status (*device)(const LaunchContext&, const void* deviceArg, const DeviceComm&, const Plan&, const std::byte*,
                   std::byte*, int grid, int block, std::size_t smem, bool serialize) = nullptr;
  const void* deviceArg = nullptr;

  /// The prefix of every message: "purlin::snac::launch<NAME>: ".
  std::string who() const { return std::string("purlin::snac::launch<") + collective + ">: "; }
  /// A planned program the printed code does not have.
  Status refuse(Status s, const std::string& why) const { return detail::report(s, who() + why); }
  /// The copy-engine form's graph builder on this call's streams.
  EngineGraph graph() const { return EngineGraph(stream, side, fork, join, chunks, chunkEvents); }
  /// Ok, or the graph's first failure.
  Status finish(const EngineGraph& g) const {
    return g.ok() ? Status::Ok : detail::report(g.status(), who() + "direct (copy engine): " + g.error());
  }
};

/// The host code purlinc prints per collective (NAME_enqueue): picks the
/// planned program and enqueues it.
using ProgramEnqueue = Status (*)(const Plan&, const DeviceComm&, const DirectPeers&, const std::byte*, std::byte*,
                                  const LaunchContext&);

/// Launches `kernel` (grid x block threads, `smem` bytes of dynamic shared
/// memory) on the call's stream; `serialize`: with programmatic stream
/// serialization (the kernel waits for the previous grid in ctaBeginCall).
/// `program` names it in a failure's message.
template <class... P, class... A>
Status launchProgram(const LaunchContext& lc, const char* program, void (*kernel)(P...), int grid, int block,
                     std::size_t smem, bool serialize, A&&... args) {
  if (lc.device != nullptr) {  // the device API: the user's kernel in this one's place
    // The latency and throughput kernels' parameters; the direct kernel's
    // differ (the device API never plans it).
    if constexpr (std::is_same_v<void (*)(P...), void (*)(DeviceComm, Plan, const std::byte*, std::byte*)>) {
      if (lc.prelude != nullptr)
        if (const Status s = lc.prelude(lc, lc.preludeArg); s != Status::Ok) return s;
      return lc.device(lc, lc.deviceArg, std::forward<A>(args)..., grid, block, smem, serialize);
    } else {
      return lc.refuse(Status::Internal, std::string("the device API runs the latency or the throughput program, "
                                                     "not the ") + program);
    }
  }
  if (smem > 48 * 1024) {
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (err != cudaSuccess)
      return detail::report(Status::CudaError, lc.who() + "cudaFuncSetAttribute(" + std::to_string(smem) +
                                                   " B shared memory): " + cudaGetErrorString(err));
  }
  if (lc.prelude != nullptr)
    if (const Status s = lc.prelude(lc, lc.preludeArg); s != Status::Ok) return s;
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
  // cudaLaunchKernelEx reports this launch's own failure; cudaGetLastError
  // after a <<<>>> launch would also return (and clear) an error the caller
  // left pending, and report a launched kernel as failed.
  cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return detail::report(Status::CudaError, lc.who() + program + " launch (" + std::to_string(grid) + " CTAs x " +
                                                 std::to_string(block) + "): " + cudaGetErrorString(err));
  }
  return Status::Ok;
}

} // namespace purlin::snac
