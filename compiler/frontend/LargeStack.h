/// @file LargeStack.h
/// @brief Runs a function on a thread with a large stack, so that deeply
/// nested (but accepted) input cannot overflow the parser's recursion.
#pragma once

#include <cstddef>
#include <functional>

namespace purlin {

/// Default stack for runWithLargeStack: 512 MiB (reserved, touched lazily).
constexpr size_t kLargeStackBytes = size_t(512) << 20;

/// Runs `fn` on a new thread with `stackBytes` of stack and returns its
/// result; runs it on the calling thread if such a thread cannot be made.
int runWithLargeStack(const std::function<int()> &fn, size_t stackBytes = kLargeStackBytes);

} // namespace purlin
