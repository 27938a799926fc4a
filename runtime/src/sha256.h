/// @file sha256.h
/// @brief SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), and a
/// comparison whose time does not depend on where the bytes differ: what
/// the Unix-socket bootstrap's challenge-response needs (the job's secret is
/// proven, never sent). Host only, no dependencies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace purlin::detail {

using Digest = std::array<unsigned char, 32>;

/// SHA-256 of `bytes` bytes at `data`.
Digest sha256(const void *data, std::size_t bytes);

/// HMAC-SHA-256 of the message with the key (any length; longer than the
/// 64-byte block: hashed first, as RFC 2104 says).
Digest hmacSha256(const void *key, std::size_t keyBytes, const void *message, std::size_t messageBytes);

/// Whether a and b hold the same `bytes` bytes, reading all of them
/// whatever the first difference.
bool equalConstantTime(const void *a, const void *b, std::size_t bytes);

} // namespace purlin::detail
