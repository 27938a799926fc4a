/// @file bounded_sync.cpp
/// @brief destroyWaitMs, synchronizeBounded (see bounded_sync.h).
#include "bounded_sync.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace purlin::detail {

long destroyWaitMs(const CommOptions& options) {
  if (const char* env = std::getenv("PURLIN_DESTROY_TIMEOUT_MS"); env != nullptr && *env != 0) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != nullptr && *end == 0 && v >= 0) return v;
  }
  long ms = 10'000;
  if (options.checked) {
    const long checkedMs = long(options.waitTimeoutUs / 1000) + 1000;
    if (checkedMs > ms) ms = checkedMs;
  }
  return ms;
}

bool synchronizeBounded(void (*synchronize)(void*), void* arg, volatile uint32_t* abortFlag, long boundMs,
                        int rank) noexcept {
  if (boundMs <= 0 || abortFlag == nullptr) {
    synchronize(arg);
    return false;
  }
  std::mutex doneMutex;
  std::condition_variable doneChanged;
  bool done = false, fired = false;
  std::thread watchdog;
  try {
    watchdog = std::thread([&] {
      std::unique_lock<std::mutex> lock(doneMutex);
      if (doneChanged.wait_for(lock, std::chrono::milliseconds(boundMs), [&] { return done; })) return;
      fired = true;
      *abortFlag = 1u;
      std::atomic_thread_fence(std::memory_order_seq_cst);
    });
  } catch (const std::exception&) {
    synchronize(arg);  // no thread: without bound, as before
    return false;
  }
  synchronize(arg);
  {
    std::lock_guard<std::mutex> lock(doneMutex);
    done = true;
  }
  doneChanged.notify_one();
  watchdog.join();
  if (fired)
    std::fprintf(stderr,
                 "purlin: rank %d: destroying the communicator: its kernels were still running after %ld ms (a peer "
                 "gone, or a call it never made); they were aborted (PURLIN_DESTROY_TIMEOUT_MS)\n",
                 rank, boundMs);
  return fired;
}

} // namespace purlin::detail
