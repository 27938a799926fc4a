/// @file plan_fixtures.h
/// @brief What the makePlan unit tests share: a world row, staging and
/// packet sizes, call arguments and fake device addresses.
#pragma once

#include <cstdint>

#include "purlin/snac/plan.h"

namespace plantest {

using namespace purlin;
using namespace purlin::snac;

/// The Atom pipeline stages of the kernels the plans are for (even: 2 push lanes fit).
constexpr int kAtomStages = 8;
constexpr WorldConsts kWorld{512u << 10, 16, 512, 8, 16, 8, 512, 2u << 20, false};
constexpr std::size_t kStaging = std::size_t(256) << 20, kPackets = std::size_t(16) << 20;

inline CallArgs args(const void* in, void* out, std::size_t count, DType t = DType::BF16) {
  CallArgs a;
  a.in = in;
  a.out = out;
  a.count = count;
  a.dtype = t;
  return a;
}
/// Distinct fake device addresses (never dereferenced by makePlan).
inline const std::byte* const kIn = reinterpret_cast<const std::byte*>(std::uintptr_t(1) << 40);
inline std::byte* const kOut = reinterpret_cast<std::byte*>(std::uintptr_t(1) << 41);

} // namespace plantest
