/// @file device_queues_test.cpp
/// @brief purlin::deviceQueues: CUDA_DEVICE_MAX_CONNECTIONS as the runtime
/// found it while loading, set to 32 where the process had not set it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "purlin/host/device_queues.h"

TEST_CASE("device queues: the variable is set once the runtime is loaded, and read back") {
  const char* v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  REQUIRE(v != nullptr);  // set by the runtime's static initialization where it was unset
  CHECK(std::atoi(v) == purlin::deviceQueues());
  CHECK(purlin::deviceQueues() >= 1);
  CHECK(purlin::kDeviceQueuesSet == 32);  // CUDA's most
}
