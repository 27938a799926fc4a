/// @file workspace_test.cpp
/// @brief Unit tests of computeLayout: alignment, disjoint regions, sizes,
/// invalid options.
#include <catch2/catch.hpp>

#include "purlin/host/communicator.h"
#include "purlin/host/workspace.h"

using namespace purlin;

TEST_CASE("default layout holds the protocol's regions, 256-byte aligned") {
  CommOptions o;
  WorkspaceLayout l = computeLayout(o, 2);
  CHECK(l.numSignals == 38050);  // docs/snac-protocol.md: numSignals
  CHECK(l.signalsOffset == 0);
  CHECK(l.signalsBytes >= 38050 * sizeof(uint64_t));
  for (std::size_t off : {l.signalsOffset, l.packetsOffset, l.stagingOffset,
                          l.stateOffset, l.totalBytes, l.packetHalfBytes,
                          l.stagingHalfBytes})
    CHECK(off % kWorkspaceAlign == 0);
  CHECK(l.packetHalfBytes == (16u << 20));
  CHECK(l.stagingHalfBytes == (256u << 20));
  CHECK(l.packetsOffset >= l.signalsOffset + l.signalsBytes);
  CHECK(l.stagingOffset >= l.packetsOffset + 2 * l.packetHalfBytes);
  CHECK(l.stateOffset >= l.stagingOffset + 2 * l.stagingHalfBytes);
  CHECK(l.stateBytes >= sizeof(DeviceState));
  CHECK(l.totalBytes == l.stateOffset + l.stateBytes);
}

TEST_CASE("half sizes round up to the alignment") {
  CommOptions o;
  o.stagingHalfBytes = 1000;
  o.packetHalfBytes = 17;
  WorkspaceLayout l = computeLayout(o, 8);
  CHECK(l.stagingHalfBytes == 1024);
  CHECK(l.packetHalfBytes == 256);
  CHECK(l.stagingOffset == l.packetsOffset + 512);
  CHECK(l.stateOffset == l.stagingOffset + 2048);
}

TEST_CASE("layout is the same for every world size (symmetric)") {
  CommOptions o;
  o.stagingHalfBytes = 1 << 20;
  WorkspaceLayout a = computeLayout(o, 1), b = computeLayout(o, 8);
  CHECK(a.totalBytes == b.totalBytes);
  CHECK(a.stateOffset == b.stateOffset);
}

TEST_CASE("invalid layouts are rejected with a message") {
  CommOptions o;
  REQUIRE_THROWS_WITH(computeLayout(o, 0), Catch::Contains("world size 0"));
  REQUIRE_THROWS_WITH(computeLayout(o, 9), Catch::Contains("outside [1, 8]"));
  o.stagingHalfBytes = 0;
  REQUIRE_THROWS_WITH(computeLayout(o, 2), Catch::Contains("stagingHalfBytes must be > 0"));
  o.stagingHalfBytes = ~std::size_t(0) / 2;
  try {
    computeLayout(o, 2);
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.status() == Status::InvalidArgument);
    CHECK(std::string(e.what()).find("too large") != std::string::npos);
  }
}

TEST_CASE("alignUp") {
  CHECK(alignUp(0, 256) == 0);
  CHECK(alignUp(1, 256) == 256);
  CHECK(alignUp(256, 256) == 256);
  CHECK(alignUp(257, 256) == 512);
}
