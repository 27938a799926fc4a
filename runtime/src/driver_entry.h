/// @file driver_entry.h
/// @brief Resolves a CUDA driver API entry point through the runtime
/// (cudaGetDriverEntryPointByVersion, CUDA 12.0 ABI), so the runtime library
/// never links libcuda. Internal to runtime/src.
#pragma once

#include <cuda_runtime.h>

namespace purlin::detail {

/// The driver function `name` as a `Fn` pointer (the ABI of CUDA `version`,
/// 12000 for 12.0), or nullptr when this driver lacks it (the runtime's error
/// state is cleared either way).
template <class Fn>
Fn driverEntryPoint(const char *name, unsigned version = 12000) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const bool ok = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q) == cudaSuccess &&
                  q == cudaDriverEntryPointSuccess;
  (void)cudaGetLastError();
  return ok ? reinterpret_cast<Fn>(fn) : nullptr;
}

} // namespace purlin::detail
