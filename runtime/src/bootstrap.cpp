/// @file bootstrap.cpp
/// @brief Bootstrap's shared members and bootstrapFromEnv (the environment
/// contract of purlin-launch, and torchrun's on one node).
#include "purlin/host/bootstrap.h"

#include "sha256.h"

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
                       " is not set (run the program with purlin-launch, or with torchrun on one node)");
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

namespace {

bool envSet(const char *name) {
  const char *v = std::getenv(name);
  return v && *v;
}
std::string envText(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

/// torchrun's (torch.distributed.elastic's) variables: RANK, WORLD_SIZE,
/// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID. One
/// node only (a Unix-socket rendezvous); the job secret is the user's
/// PURLIN_BOOTSTRAP_COOKIE (torchrun has none to give), and the rendezvous
/// name, unless PURLIN_BOOTSTRAP names one, is derived from the secret and
/// the job (an HMAC), so that another user cannot predict it and bind it
/// first.
std::unique_ptr<Bootstrap> torchrunBootstrap() {
  const int size = envInt("WORLD_SIZE", 1, 1 << 16, true, 0);
  const int rank = envInt("RANK", 0, size - 1, true, 0);
  const int local = envInt("LOCAL_WORLD_SIZE", 1, 1 << 16, false, size);
  if (local != size)
    PURLIN_THROW(Status::Unsupported, "torchrun: WORLD_SIZE=" + std::to_string(size) + " but LOCAL_WORLD_SIZE=" +
                                          std::to_string(local) +
                                          ": the ranks span several nodes, and Purlin's bootstrap and collectives "
                                          "are within one node (one NVLink domain)");
  const std::string cookie = envText("PURLIN_BOOTSTRAP_COOKIE");
  if (size > 1 && cookie.empty())
    PURLIN_THROW(Status::InvalidArgument,
                 "torchrun: PURLIN_BOOTSTRAP_COOKIE is not set: torchrun has no job secret to give, so set the same "
                 "32 hex digits for every rank where torchrun starts (e.g. "
                 "PURLIN_BOOTSTRAP_COOKIE=$(openssl rand -hex 16) torchrun ...)");
  std::string path = envText("PURLIN_BOOTSTRAP");
  if (path.empty()) {
    const std::string job = "purlin torchrun rendezvous " + envText("MASTER_ADDR") + ":" + envText("MASTER_PORT") +
                            " " + envText("TORCHELASTIC_RUN_ID") + " " + std::to_string(size);
    const detail::Digest d = detail::hmacSha256(cookie.data(), cookie.size(), job.data(), job.size());
    static const char digits[] = "0123456789abcdef";
    path = "@purlin-";
    for (int i = 0; i < 16; ++i) path += digits[d[i] >> 4], path += digits[d[i] & 15];
  }
  return std::make_unique<UnixSocketBootstrap>(path, rank, size, bootstrapTimeoutMs(), cookie);
}

} // namespace

std::unique_ptr<Bootstrap> bootstrapFromEnv() {
  // purlin-launch's variables first; else torchrun's.
  if (!envSet("PURLIN_WORLD_SIZE") && !envSet("PURLIN_RANK") && envSet("WORLD_SIZE") && envSet("RANK"))
    return torchrunBootstrap();
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
