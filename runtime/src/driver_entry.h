/// @file driver_entry.h
/// @brief Resolves a CUDA driver API entry point through the runtime
/// (cudaGetDriverEntryPointByVersion, CUDA 12.0 ABI), so the runtime library
/// never links libcuda. Internal to runtime/src.
#pragma once

#include <cuda_runtime.h>

namespace purlin::detail {

/// The driver function `name` as a `Fn` pointer, or nullptr when this
/// driver lacks it (the runtime's error state is cleared either way).
template <class Fn>
Fn driverEntryPoint(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const bool ok = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
                  q == cudaDriverEntryPointSuccess;
  (void)cudaGetLastError();
  return ok ? reinterpret_cast<Fn>(fn) : nullptr;
}

} // namespace purlin::detail
