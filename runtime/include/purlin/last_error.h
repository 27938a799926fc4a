/// @file last_error.h
/// @brief The message of this thread's last failed Purlin call, readable
/// from host code: every generated collective (purlin::gen::NAME and its C
/// ABI, whose purlin_last_error() returns the same text), snac::launch and
/// the communicator's C ABI set it when they return an error status. One
/// thread-local string for the whole program (an inline function's static),
/// plain C++: no CUDA header needed.
#pragma once

#include <string>
#include <utility>

namespace purlin {

/// The storage (not a `detail` namespace: generated code uses both purlin
/// and purlin::snac, whose `detail` it names unqualified).
inline std::string &lastErrorString() {
  thread_local std::string message;
  return message;
}

/// "" if no call of this thread has failed yet.
inline const char *lastError() { return lastErrorString().c_str(); }

/// Records `message` as this thread's last error (the runtime's and the
/// generated code's failure paths).
inline void setLastError(std::string message) { lastErrorString() = std::move(message); }

} // namespace purlin
