/// @file last_error_test.cpp
/// @brief purlin::lastError() (purlin/last_error.h): the message of the
/// calling thread's last failure, "" before any, replaced by the next, and
/// per thread (a failure on one rank's thread does not show on another's).
/// The generated code, snac::launch (snac::lastError() returns the same
/// string) and the C ABI (purlin_last_error()) all write and read it.
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "purlin/last_error.h"

TEST_CASE("lastError: per thread, the latest message") {
  std::string seenByOther = "unset";
  std::thread t([&] { seenByOther = purlin::lastError(); });
  purlin::setLastError("first");
  t.join();
  CHECK(std::string(purlin::lastError()) == "first");
  purlin::setLastError("second failure");
  CHECK(std::string(purlin::lastError()) == "second failure");
  std::thread u([&] {
    seenByOther = purlin::lastError();
    purlin::setLastError("other thread");
  });
  u.join();
  CHECK(seenByOther.empty());  // a new thread has no failure yet
  CHECK(std::string(purlin::lastError()) == "second failure");
}
