/// @file error_test.cpp
/// @brief Unit tests of purlin::Error, the where() helper and the enum names.
#include <catch2/catch.hpp>

#include <cstring>

#include "purlin/host/error.h"
#include "purlin/types.h"

using namespace purlin;

TEST_CASE("Error carries a status and a message with file:line") {
  try {
    PURLIN_THROW(Status::InvalidArgument, "bad count 3");
    FAIL("not thrown");
  } catch (const Error &e) {
    CHECK(e.status() == Status::InvalidArgument);
    std::string what = e.what();
    CHECK(what.rfind("bad count 3 at error_test.cpp:", 0) == 0);
  }
  CHECK(where("x", "/a/b/c.cpp", 12) == "x at c.cpp:12");
  CHECK(where("x", "c.cpp", 1) == "x at c.cpp:1");
  CHECK(where("x", nullptr, 1) == "x at ?:1");
}

TEST_CASE("enum names") {
  CHECK(std::strcmp(toString(Status::Ok), "Ok") == 0);
  CHECK(std::strcmp(toString(Status::Timeout), "Timeout") == 0);
  CHECK(std::strcmp(toString(Status::BootstrapError), "BootstrapError") == 0);
  CHECK(std::strcmp(toString(static_cast<Status>(99)), "UnknownStatus") == 0);
  CHECK(std::strcmp(toString(DType::BF16), "bf16") == 0);
  CHECK(std::strcmp(toString(DType::F16), "f16") == 0);
  CHECK(std::strcmp(toString(RedOp::Max), "max") == 0);
  CHECK(std::strcmp(toString(static_cast<RedOp>(7)), "unknown-op") == 0);
  CHECK(dtypeSize(DType::F32) == 4);
  CHECK(dtypeSize(DType::BF16) == 2);
}
