/// @file device_queues_test.cpp
/// @brief purlin::deviceQueues: CUDA_DEVICE_MAX_CONNECTIONS as the runtime
/// found it while loading, set to 32 where the process had not set it.
/// The value is fixed at static initialization, so each setting runs this
/// program again (the hidden probe case) under its own environment.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "purlin/host/device_queues.h"

namespace {

/// deviceQueues() of this program started under `envPrefix` (a shell
/// fragment before the command: `exec` keeps the shell's pid, $$).
int probe(const std::string& envPrefix) {
  char self[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  const std::string cmd = "sh -c '" + envPrefix + " exec " + std::string(self, std::size_t(n)) +
                          " \"[queues_probe]\"' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  int queues = -1;
  char line[256];
  while (std::fgets(line, sizeof line, p))
    if (std::sscanf(line, "queues=%d", &queues) == 1) break;
  ::pclose(p);
  return queues;
}

} // namespace

TEST_CASE("device queues: the probe", "[.][queues_probe]") {
  std::printf("queues=%d\n", purlin::deviceQueues());
}

TEST_CASE("device queues: the variable is set once the runtime is loaded, and read back") {
  const char* v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  REQUIRE(v != nullptr);  // set by the runtime's static initialization where it was unset
  CHECK(purlin::deviceQueues() >= 1);
  CHECK(purlin::deviceQueues() <= purlin::kDeviceQueuesSet);
  const std::string clean = "unset CUDA_DEVICE_MAX_CONNECTIONS PURLIN_CUDA_STARTED_PID;";
  CHECK(probe(clean) == 32);                                           // unset: set to 32
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=;") == 32);  // empty: CUDA's default otherwise
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=16;") == 16);
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=64;") == 32);  // CUDA uses at most 32
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=abc;") == 8);  // unreadable: CUDA's default
  // The Python package's note that CUDA started before the variable was
  // set: CUDA's default in that process only.
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=32 PURLIN_CUDA_STARTED_PID=$$;") == 8);
  CHECK(probe(clean + " export CUDA_DEVICE_MAX_CONNECTIONS=32 PURLIN_CUDA_STARTED_PID=1;") == 32);
}
