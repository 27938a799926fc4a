/// @file sha256_test.cpp
/// @brief SHA-256 and HMAC-SHA-256 (runtime/src/sha256.h) against the
/// published test vectors (FIPS 180-4 examples, RFC 4231), and the
/// constant-time comparison.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "sha256.h"

using namespace purlin::detail;

namespace {
std::string hex(const Digest &d) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (unsigned char c : d) s += digits[c >> 4], s += digits[c & 15];
  return s;
}
} // namespace

TEST_CASE("sha256: FIPS 180-4 examples") {
  CHECK(hex(sha256("abc", 3)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256("", 0)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 448 bits: a second padding block
  CHECK(hex(sha256(two.data(), two.size())) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  CHECK(hex(sha256(million.data(), million.size())) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("hmacSha256: RFC 4231 test cases 1, 2 and 6") {
  unsigned char k1[20];
  std::memset(k1, 0x0b, sizeof k1);
  CHECK(hex(hmacSha256(k1, sizeof k1, "Hi There", 8)) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hex(hmacSha256("Jefe", 4, "what do ya want for nothing?", 28)) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  unsigned char k6[131];
  std::memset(k6, 0xaa, sizeof k6);  // longer than a block: hashed first
  const std::string m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  CHECK(hex(hmacSha256(k6, sizeof k6, m6.data(), m6.size())) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("equalConstantTime compares every byte") {
  unsigned char a[32] = {}, b[32] = {};
  CHECK(equalConstantTime(a, b, 32));
  b[31] = 1;
  CHECK_FALSE(equalConstantTime(a, b, 32));
  CHECK(equalConstantTime(a, b, 31));
  b[0] = 1;
  CHECK_FALSE(equalConstantTime(a, b, 1));
  CHECK(equalConstantTime(a, b, 0));
}
