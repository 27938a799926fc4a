/// @file LargeStack.h
/// @brief Runs a function on a thread with a large stack, so that deeply
/// nested (but accepted) input cannot overflow the parser's recursion.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace purlin {

/// Default stack for runWithLargeStack: 512 MiB (reserved, touched lazily).
constexpr size_t kLargeStackBytes = size_t(512) << 20;

/// Runs `fn` on a new thread with `stackBytes` of stack and returns its
/// result. When such a thread cannot be made (an address-space limit,
/// `ulimit -v`), `fn` does not run: `error` says why and the result is -1
/// (the calling thread's stack could not hold what the limits admit).
int runWithLargeStack(const std::function<int()> &fn, std::string &error, size_t stackBytes = kLargeStackBytes);

} // namespace purlin
