/// @file demo_ranks.h
/// @brief How the demos (demo_*_test.cu) run their ranks: under
/// purlin-launch (PURLIN_RANK set) this process's rank on its GPU;
/// otherwise one thread per GPU in this process, and with one GPU
/// `sharedRanks` ranks sharing it (the communicator sizes the programs so
/// that their CTAs are resident together).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"

namespace demo {

/// Runs runRank(bootstrap, device) on every rank as above; a rank's
/// exception is reported and counted in `failures`. Returns false (after
/// "SKIP") when no GPU is visible in-process.
inline bool runDemoRanks(const char *what, int sharedRanks,
                         const std::function<void(purlin::Bootstrap &, int)> &runRank, std::atomic<int> &failures) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  try {
    if (std::getenv("PURLIN_RANK")) {
      auto b = purlin::bootstrapFromEnv();
      const char *d = std::getenv("PURLIN_DEVICE");
      const int device = d ? std::atoi(d) : b->rank() % std::max(gpus, 1);
      std::printf("demo: multi-process, rank %d of %d on GPU %d\n", b->rank(), b->size(), device);
      runRank(*b, device);
      return true;
    }
    if (gpus < 1) {
      std::printf("SKIP: the %s demo needs a GPU, found none\n", what);
      return false;
    }
    const int n = gpus >= 2 ? std::min(gpus, purlin::kMaxRanks) : sharedRanks;
    std::printf("demo: in-process, %d ranks on %d GPU(s) (one thread each): %s from dsl_examples/\n", n,
                std::min(gpus, n), what);
    purlin::InProcessGroup group(n);
    std::vector<std::unique_ptr<purlin::Bootstrap>> boots;
    for (int r = 0; r < n; ++r) boots.push_back(group.bootstrap(r));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        try {
          runRank(*boots[r], r % gpus);
        } catch (const std::exception &e) {
          std::printf("FAIL rank %d: %s\n", r, e.what());
          ++failures;
        }
      });
    for (auto &t : threads) t.join();
  } catch (const std::exception &e) {
    std::printf("FAIL: %s\n", e.what());
    ++failures;
  }
  return true;
}

} // namespace demo
