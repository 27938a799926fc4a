/// @file device_queues.cpp
/// @brief CUDA_DEVICE_MAX_CONNECTIONS, read (and set where unset) while the
/// runtime library is loaded (purlin/host/device_queues.h).
#include "purlin/host/device_queues.h"

#include <cstdlib>
#include <string>

namespace purlin {
namespace {

/// During static initialization, before main and so (in a program that
/// links the runtime) before its first CUDA call. Never throws.
const int kQueuesAtLoad = [] {
  const char *v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (v == nullptr || *v == '\0') {
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(kDeviceQueuesSet).c_str(), 0);
    return kDeviceQueuesSet;
  }
  const int c = std::atoi(v);
  return c > 0 ? c : 8;  // CUDA ignores what it cannot read: its default
}();

} // namespace

int deviceQueues() { return kQueuesAtLoad; }

} // namespace purlin
