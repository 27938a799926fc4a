/// @file sha256.cpp
/// @brief sha256(), hmacSha256(), equalConstantTime() (sha256.h), written
/// from FIPS 180-4 section 6.2 and RFC 2104.
#include "sha256.h"

#include <cstring>
#include <vector>

namespace purlin::detail {

namespace {

/// FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
/// roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/// FIPS 180-4 5.3.3: the initial hash value.
constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// One 64-byte block into the state (6.2.2).
void compress(uint32_t state[8], const unsigned char *block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(block[4 * t]) << 24 | uint32_t(block[4 * t + 1]) << 16 | uint32_t(block[4 * t + 2]) << 8 |
           uint32_t(block[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6],
           h = state[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d;
  state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

} // namespace

Digest sha256(const void *data, std::size_t bytes) {
  uint32_t state[8];
  std::memcpy(state, kInitial, sizeof state);
  const auto *p = static_cast<const unsigned char *>(data);
  std::size_t left = bytes;
  for (; left >= 64; left -= 64, p += 64) compress(state, p);
  // Padding (5.1.1): a 1 bit, zeros, the message length in bits (64 bits, big-endian).
  unsigned char tail[128] = {};
  std::memcpy(tail, p, left);
  tail[left] = 0x80;
  const std::size_t tailBytes = left + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = uint64_t(bytes) * 8;
  for (int i = 0; i < 8; ++i) tail[tailBytes - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (std::size_t off = 0; off < tailBytes; off += 64) compress(state, tail + off);
  Digest out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<unsigned char>(state[i] >> (24 - 8 * j));
  return out;
}

Digest hmacSha256(const void *key, std::size_t keyBytes, const void *message, std::size_t messageBytes) {
  unsigned char block[64] = {};
  if (keyBytes > 64) {
    const Digest k = sha256(key, keyBytes);
    std::memcpy(block, k.data(), k.size());
  } else {
    std::memcpy(block, key, keyBytes);
  }
  std::vector<unsigned char> inner(64 + messageBytes);
  for (int i = 0; i < 64; ++i) inner[i] = block[i] ^ 0x36;
  if (messageBytes) std::memcpy(inner.data() + 64, message, messageBytes);
  const Digest innerHash = sha256(inner.data(), inner.size());
  unsigned char outer[64 + 32];
  for (int i = 0; i < 64; ++i) outer[i] = block[i] ^ 0x5c;
  std::memcpy(outer + 64, innerHash.data(), innerHash.size());
  return sha256(outer, sizeof outer);
}

bool equalConstantTime(const void *a, const void *b, std::size_t bytes) {
  const auto *x = static_cast<const volatile unsigned char *>(a);
  const auto *y = static_cast<const volatile unsigned char *>(b);
  unsigned char diff = 0;
  for (std::size_t i = 0; i < bytes; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

} // namespace purlin::detail
