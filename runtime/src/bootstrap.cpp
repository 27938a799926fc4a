/// @file bootstrap.cpp
/// @brief Bootstrap's shared members and bootstrapFromEnv (the environment
/// contract of purlin-launch).
#include "purlin/host/bootstrap.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace purlin {

Bootstrap::~Bootstrap() = default;

std::string randomHex(int bytes) {
  std::vector<unsigned char> raw(static_cast<std::size_t>(bytes));
  std::size_t got = 0;
  while (got < raw.size()) {
    const ssize_t r = ::getrandom(raw.data() + got, raw.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) PURLIN_THROW(Status::Internal, "getrandom failed: no random bytes for a job secret");
    got += static_cast<std::size_t>(r);
  }
  std::string hex(raw.size() * 2, '0');
  static const char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < raw.size(); ++i) {
    hex[2 * i] = digits[raw[i] >> 4];
    hex[2 * i + 1] = digits[raw[i] & 15];
  }
  return hex;
}

void Bootstrap::barrier() {
  const unsigned char mine = 1;
  std::string all(static_cast<std::size_t>(size()), '\0');
  allGather(&mine, all.data(), 1);
}

namespace {

/// Parses environment variable `name` as a decimal int in [lo, hi].
int envInt(const char *name, long lo, long hi, bool required, int fallback) {
  const char *text = std::getenv(name);
  if (!text || !*text) {
    if (required)
      PURLIN_THROW(Status::InvalidArgument,
                   std::string("environment variable ") + name +
                       " is not set (run the program with purlin-launch)");
    return fallback;
  }
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
    PURLIN_THROW(Status::InvalidArgument,
                 std::string("environment variable ") + name + "='" + text +
                     "' is not an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return static_cast<int>(v);
}

} // namespace

int bootstrapTimeoutMs() { return envInt("PURLIN_BOOTSTRAP_TIMEOUT_MS", 1, 1 << 30, false, 60000); }

std::unique_ptr<Bootstrap> bootstrapFromEnv() {
  int size = envInt("PURLIN_WORLD_SIZE", 1, 1 << 16, true, 0);
  int rank = envInt("PURLIN_RANK", 0, size - 1, true, 0);
  int timeoutMs = bootstrapTimeoutMs();
  const char *path = std::getenv("PURLIN_BOOTSTRAP");
  if (!path || !*path)
    PURLIN_THROW(Status::InvalidArgument,
                 "environment variable PURLIN_BOOTSTRAP (socket path) is not "
                 "set (run the program with purlin-launch)");
  const char *cookie = std::getenv("PURLIN_BOOTSTRAP_COOKIE");
  return std::make_unique<UnixSocketBootstrap>(path, rank, size, timeoutMs, cookie ? cookie : "");
}

} // namespace purlin
