/// @file bounded_sync_test.cpp
/// @brief Destruction's bounded wait (bounded_sync.h): the synchronization
/// stands in for cudaDeviceSynchronize, spinning until the abort flag is
/// raised as a kernel's waits would; and the bound's sources (the
/// environment, checked mode's wait timeout).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "bounded_sync.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Spinner {
  volatile uint32_t* flag;
  std::chrono::milliseconds finishesAfter;  // the "kernel" ends by itself after this (unless aborted first)
};
/// A kernel waiting on a peer: returns when the abort flag is raised or
/// after finishesAfter.
void spinUntilAborted(void* arg) {
  const auto* s = static_cast<const Spinner*>(arg);
  const auto t0 = Clock::now();
  while (*s->flag == 0 && Clock::now() - t0 < s->finishesAfter) std::this_thread::yield();
}

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

} // namespace

TEST_CASE("destruction's wait raises the abort flag after its bound, and only then", "[bounded_sync]") {
  volatile uint32_t flag = 0;
  Spinner stuck{&flag, std::chrono::milliseconds(60'000)};  // a peer that never calls
  auto t0 = Clock::now();
  CHECK(purlin::detail::synchronizeBounded(spinUntilAborted, &stuck, &flag, 100, 0));
  const double took = secondsSince(t0);
  CHECK(flag == 1u);
  CHECK(took >= 0.09);
  CHECK(took < 5.0);

  flag = 0;
  Spinner quick{&flag, std::chrono::milliseconds(20)};  // kernels that end by themselves
  t0 = Clock::now();
  CHECK_FALSE(purlin::detail::synchronizeBounded(spinUntilAborted, &quick, &flag, 2'000, 0));
  CHECK(flag == 0u);
  CHECK(secondsSince(t0) < 1.5);  // returned when the work did, not at the bound

  // Without a bound (0) or a flag: the plain wait.
  Spinner brief{&flag, std::chrono::milliseconds(150)};
  CHECK_FALSE(purlin::detail::synchronizeBounded(spinUntilAborted, &brief, &flag, 0, 0));
  CHECK(flag == 0u);
  CHECK_FALSE(purlin::detail::synchronizeBounded(spinUntilAborted, &brief, nullptr, 50, 0));
  CHECK(flag == 0u);
}

TEST_CASE("destruction's bound: 10 s, checked mode's wait timeout, PURLIN_DESTROY_TIMEOUT_MS", "[bounded_sync]") {
  ::unsetenv("PURLIN_DESTROY_TIMEOUT_MS");
  purlin::CommOptions o;
  CHECK(purlin::detail::destroyWaitMs(o) == 10'000);
  o.checked = true;
  o.waitTimeoutUs = 2'000'000;
  CHECK(purlin::detail::destroyWaitMs(o) == 10'000);
  o.waitTimeoutUs = 60'000'000;  // its waits give up by themselves first
  CHECK(purlin::detail::destroyWaitMs(o) == 61'000);
  ::setenv("PURLIN_DESTROY_TIMEOUT_MS", "500", 1);
  CHECK(purlin::detail::destroyWaitMs(o) == 500);
  ::setenv("PURLIN_DESTROY_TIMEOUT_MS", "0", 1);  // without bound
  CHECK(purlin::detail::destroyWaitMs(o) == 0);
  ::setenv("PURLIN_DESTROY_TIMEOUT_MS", "5s", 1);  // not a number: the default
  CHECK(purlin::detail::destroyWaitMs(o) == 61'000);
  ::setenv("PURLIN_DESTROY_TIMEOUT_MS", "-3", 1);
  CHECK(purlin::detail::destroyWaitMs(o) == 61'000);
  ::unsetenv("PURLIN_DESTROY_TIMEOUT_MS");
}
