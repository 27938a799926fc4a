/// @file bench_args_test.cpp
/// @brief coll_bench's command line (bench_args.h): nccl-tests' spellings,
/// the message sizes they give, and every refusal with its reason.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "bench_args.h"

using namespace purlin::bench;

namespace {

ParseResult parse(std::vector<const char *> args, CollBenchOptions &o, std::string &error) {
  args.insert(args.begin(), "coll_bench");
  return parseCollBenchArgs(static_cast<int>(args.size()), args.data(), o, error);
}

} // namespace

TEST_CASE("coll_bench takes nccl-tests' -b -e -f -d -n", "[bench_args]") {
  CollBenchOptions o;
  std::string error;
  REQUIRE(parse({"out", "-b", "8K", "-e", "128M", "-f", "4", "-d", "bfloat16", "-n", "20"}, o, error) ==
          ParseResult::Run);
  CHECK(o.outDir == "out");
  CHECK(o.minBytes == 8192);
  CHECK(o.maxBytes == (std::size_t(128) << 20));
  CHECK(o.stepFactor == 4);
  CHECK(o.timing.calls == 20);
  const std::vector<std::size_t> sizes = messageSizes(o);
  REQUIRE(sizes.size() == 8);  // 8K, 32K, ..., 128M
  CHECK(sizes.front() == 8192);
  CHECK(sizes.back() == (std::size_t(128) << 20));
  for (std::size_t i = 1; i < sizes.size(); ++i) CHECK(sizes[i] == 4 * sizes[i - 1]);

  CollBenchOptions l;  // the long spellings and ours mean the same
  REQUIRE(parse({"--minbytes", "8K", "--maxbytes", "128M", "--stepfactor", "4", "--datatype", "bf16", "--iters",
                 "20", "out"}, l, error) == ParseResult::Run);
  CHECK(messageSizes(l) == sizes);
  CHECK(l.timing.calls == 20);
}

TEST_CASE("coll_bench's sizes: the default doubles from 1 KiB to 1 GiB; a max between steps is not passed",
          "[bench_args]") {
  CollBenchOptions o;
  std::string error;
  REQUIRE(parse({"out"}, o, error) == ParseResult::Run);
  const std::vector<std::size_t> sizes = messageSizes(o);
  CHECK(sizes.size() == 21);
  CHECK(sizes.back() == (std::size_t(1) << 30));
  CollBenchOptions m;
  REQUIRE(parse({"out", "-b", "1K", "-e", "100K", "-f", "3"}, m, error) == ParseResult::Run);
  CHECK(messageSizes(m) == std::vector<std::size_t>{1024, 3072, 9216, 27648, 82944});
  CollBenchOptions one;
  REQUIRE(parse({"out", "-b", "4M", "-e", "4M"}, one, error) == ParseResult::Run);
  CHECK(messageSizes(one) == std::vector<std::size_t>{std::size_t(4) << 20});
  CollBenchOptions top;  // the last step may not overflow past 4 GiB
  REQUIRE(parse({"out", "-b", "1G", "-e", "4G", "-f", "1024"}, top, error) == ParseResult::Run);
  CHECK(messageSizes(top) == std::vector<std::size_t>{std::size_t(1) << 30});
}

TEST_CASE("coll_bench refuses bad command lines with the reason", "[bench_args]") {
  struct Bad {
    std::vector<const char *> args;
    const char *why;
  };
  const std::vector<Bad> cases = {
      {{"out", "-d", "float"}, "bfloat16 only"},
      {{"out", "-f", "1"}, "step factor"},
      {{"out", "-b", "0.5"}, "at least 1 byte"},
      {{"out", "-f", "2.5"}, "step factor"},
      {{"out", "-b", "4M", "-e", "1M"}, "--min <= --max"},
      {{"out", "-e", "8G"}, "4 GiB"},
      {{"out", "-b"}, "needs a value"},
      {{"out", "-b", "lots"}, "positive number"},
      {{"out", "--colls", "ar,xx"}, "comma list"},
      {{"out", "--nccl", "fast"}, "unknown mode"},
      {{"out", "--frobnicate"}, "unknown option"},
      {{}, "RESULTS_DIR is required"},
      {{"a", "b"}, "one RESULTS_DIR"},
      {{"out", "--validate", "17"}, "at most 16"},
      {{"out", "--threads", "2"}, "--nccl none"},
      {{"out", "--threads", "9", "--nccl", "none"}, "2..8"},
      {{"out", "--purlin", "none", "--nccl", "none"}, "nothing to time"},
      {{"out", "--nccl", "none", "--colls", "bc"}, "device reference"},
  };
  for (const Bad &b : cases) {
    CollBenchOptions o;
    std::string error;
    INFO(b.why);
    CHECK(parse(b.args, o, error) == ParseResult::Error);
    CHECK(error.find(b.why) != std::string::npos);
  }
  CollBenchOptions o;
  std::string error;
  CHECK(parse({"-h"}, o, error) == ParseResult::Help);
  CHECK(std::string(kCollBenchUsage).find("-b|--min") != std::string::npos);
}

TEST_CASE("coll_bench's plan log goes where --plan-log says", "[bench_args]") {
  CollBenchOptions o;
  std::string error;
  REQUIRE(parse({"out", "--plan-log", "/tmp/p.log"}, o, error) == ParseResult::Run);
  CHECK(o.planLog == "/tmp/p.log");
  CollBenchOptions d;
  REQUIRE(parse({"out"}, d, error) == ParseResult::Run);
  CHECK(d.planLog.empty());  // coll_bench then writes out/plans.log
}

TEST_CASE("coll_bench --in-place adds in-place rows, carved as nccl-tests does", "[bench_args]") {
  CollBenchOptions o;
  std::string error;
  REQUIRE(parse({"out"}, o, error) == ParseResult::Run);
  CHECK_FALSE(o.inPlace);
  REQUIRE(parse({"out", "--in-place"}, o, error) == ParseResult::Run);
  CHECK(o.inPlace);
  CHECK(std::string(kCollBenchUsage).find("--in-place") != std::string::npos);
  // 3 ranks' blocks of 10 bf16 elements: rank 2's own block starts 40 bytes in.
  char in[128], out[128];
  const CallBuffers ag = callBuffers(Coll::AllGather, 10, 2, in, out, true);
  CHECK(ag.out == out);
  CHECK(ag.in == out + 40);
  const CallBuffers rs = callBuffers(Coll::ReduceScatter, 10, 2, in, out, true);
  CHECK(rs.in == out);  // both in the output allocation (a registered output covers them)
  CHECK(rs.out == out + 40);
  const CallBuffers ar = callBuffers(Coll::AllReduce, 10, 2, in, out, true);
  CHECK((ar.in == out && ar.out == out));
  const CallBuffers oop = callBuffers(Coll::AllGather, 10, 2, in, out, false);
  CHECK((oop.in == in && oop.out == out));
  CHECK(hasInPlaceForm(Coll::AllReduce));
  CHECK_FALSE(hasInPlaceForm(Coll::AllToAll));
}
