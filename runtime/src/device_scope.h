/// @file device_scope.h
/// @brief DeviceScope (internal): makes a CUDA device current for a scope and
/// restores the previous one, unless release() keeps the new one current.
#pragma once

#include <cuda_runtime_api.h>

#include "purlin/host/error.h"

namespace purlin::detail {

class DeviceScope {
public:
  explicit DeviceScope(int device) {
    PURLIN_CUDA_CHECK(cudaGetDevice(&previous_));
    PURLIN_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() {
    if (previous_ >= 0)
      (void)cudaSetDevice(previous_);
  }
  /// Leaves the new device current after the scope.
  void release() { previous_ = -1; }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  int previous_ = -1;
};

/// Sets `device` current while destroying resources; never throws.
class QuietDeviceScope {
public:
  explicit QuietDeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess)
      previous_ = -1;
    (void)cudaSetDevice(device);
  }
  ~QuietDeviceScope() {
    if (previous_ >= 0)
      (void)cudaSetDevice(previous_);
  }

private:
  int previous_ = -1;
};

} // namespace purlin::detail
