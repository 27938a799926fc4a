/// @file device_queues.cpp
/// @brief CUDA_DEVICE_MAX_CONNECTIONS, read (and set where unset) while the
/// runtime library is loaded (purlin/host/device_queues.h).
#include "purlin/host/device_queues.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace purlin {
namespace {

/// CUDA's own default, in force where the variable is unset or unreadable
/// when CUDA starts.
constexpr int kCudaDefaultQueues = 8;

/// During static initialization, before main and so (in a program that
/// links the runtime) before its first CUDA call. Never throws.
const int kQueuesAtLoad = [] {
  // The Python package's note that CUDA had started in this process before
  // the variable was set (purlin/__init__.py): CUDA uses its default. Only
  // for the process that wrote it (children inherit the environment).
  if (const char *pid = std::getenv(kCudaStartedPidVariable); pid && std::atol(pid) == long(::getpid()))
    return kCudaDefaultQueues;
  const char *v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (v == nullptr || *v == '\0') {  // unset, or set to nothing (which CUDA reads as its default)
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(kDeviceQueuesSet).c_str(), 1);
    return kDeviceQueuesSet;
  }
  const int c = std::atoi(v);
  if (c <= 0) return kCudaDefaultQueues;  // CUDA ignores what it cannot read
  return c < kDeviceQueuesSet ? c : kDeviceQueuesSet;  // and uses at most 32
}();

} // namespace

int deviceQueues() { return kQueuesAtLoad; }

} // namespace purlin
