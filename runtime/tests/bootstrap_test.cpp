/// @file bootstrap_test.cpp
/// @brief Unit tests of the bootstraps that run without a GPU: InProcessGroup
/// (threads), UnixSocketBootstrap (threads and forked processes, abstract and
/// filesystem sockets), failures (mismatch, timeout, bad arguments) and
/// bootstrapFromEnv.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"

using namespace purlin;

namespace {

/// A private directory (mkdtemp: mode 0700) for filesystem sockets.
const std::string &privateDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/purlin-bootstrap-test-XXXXXX";
    const char *d = ::mkdtemp(tmpl);
    return std::string(d ? d : "/nonexistent");
  }();
  return dir;
}

/// A socket path unique to this test process and call.
std::string freshPath(bool abstract) {
  static std::atomic<int> counter{0};
  std::string name = "purlin-test-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter++);
  return abstract ? "@" + name : privateDir() + "/" + name + ".sock";
}

/// Connects to the abstract socket `path` ('@name') as a stranger would;
/// -1 on failure. Retries until rank 0 listens.
int connectRaw(const std::string &path) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    addr.sun_path[0] = '\0';
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

/// True once the peer closed `fd` within `ms`: reads (rank 0's challenge
/// first) end in end of file, or a reset (the peer closed with bytes of
/// ours unread).
bool closedByPeer(int fd, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return false;
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

const std::string kCookie = "00112233445566778899aabbccddeeff";

/// Runs body(rank) on `n` threads; returns the first exception's message
/// per rank ("" = success).
std::vector<std::string> onThreads(int n, const std::function<void(int)> &body) {
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception &e) {
        errors[r] = e.what();
        if (errors[r].empty())
          errors[r] = "?";
      }
    });
  for (auto &t : threads)
    t.join();
  return errors;
}

/// Each rank contributes `bytes` bytes of value (rank * 7 + round + i); checks
/// the gathered buffer. Returns false on a wrong byte.
bool gatherRound(Bootstrap &b, std::size_t bytes, int round) {
  std::vector<unsigned char> mine(bytes), all(bytes * b.size());
  for (std::size_t i = 0; i < bytes; ++i)
    mine[i] = static_cast<unsigned char>(b.rank() * 7 + round + i);
  b.allGather(mine.data(), all.data(), bytes);
  for (int p = 0; p < b.size(); ++p)
    for (std::size_t i = 0; i < bytes; ++i)
      if (all[p * bytes + i] != static_cast<unsigned char>(p * 7 + round + i))
        return false;
  return true;
}

/// Waits for the forked ranks `pids`; each must have exited with status 0.
void expectExitedOk(const std::vector<pid_t> &pids) {
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

} // namespace

TEST_CASE("InProcessGroup allGather returns every rank's bytes in rank order") {
  for (int n : {1, 2, 3, 8}) {
    InProcessGroup group(n);
    std::vector<std::unique_ptr<Bootstrap>> boots;
    for (int r = 0; r < n; ++r)
      boots.push_back(group.bootstrap(r));
    std::atomic<int> bad{0};
    auto errors = onThreads(n, [&](int r) {
      for (int round = 0; round < 200; ++round) {
        std::size_t bytes = (round * 37) % 1000; // includes 0
        if (!gatherRound(*boots[r], bytes, round))
          ++bad;
        if (round % 50 == 0)
          boots[r]->barrier();
      }
    });
    for (auto &e : errors)
      CHECK(e.empty());
    CHECK(bad == 0);
  }
}

TEST_CASE("InProcessGroup rejects bad ranks and mismatched byte counts") {
  InProcessGroup group(2, 2000);
  REQUIRE_THROWS_AS(group.bootstrap(2), Error);
  REQUIRE_THROWS_WITH(group.bootstrap(-1), Catch::Contains("rank -1"));
  auto b0 = group.bootstrap(0), b1 = group.bootstrap(1);
  REQUIRE_THROWS_WITH(group.bootstrap(0), Catch::Contains("already"));
  auto errors = onThreads(2, [&](int r) {
    int x[4] = {};
    std::vector<int> all(8);
    (r == 0 ? b0 : b1)->allGather(x, all.data(), r == 0 ? 8 : 16);
  });
  // One rank sees the mismatch; the other is woken by the poisoned group or
  // is itself the one that notices it. Nobody hangs.
  CHECK(!errors[0].empty());
  CHECK(!errors[1].empty());
  CHECK((errors[0] + errors[1]).find("gathers") != std::string::npos);
}

TEST_CASE("InProcessGroup times out when a rank never arrives") {
  InProcessGroup group(2, 200);
  auto b0 = group.bootstrap(0);
  int x = 1, all[2];
  try {
    b0->allGather(&x, all, sizeof x);
    FAIL("expected a timeout");
  } catch (const Error &e) {
    CHECK(e.status() == Status::BootstrapError);
    CHECK(std::string(e.what()).find("timed out") != std::string::npos);
    CHECK(std::string(e.what()).find("1 of 2 ranks") != std::string::npos);
  }
}

TEST_CASE("UnixSocketBootstrap between threads, abstract and filesystem sockets") {
  for (bool abstract : {true, false}) {
    for (int n : {1, 2, 4}) {
      std::string path = freshPath(abstract);
      std::atomic<int> bad{0};
      auto errors = onThreads(n, [&](int r) {
        UnixSocketBootstrap b(path, r, n, 10000, kCookie);
        CHECK(b.rank() == r);
        CHECK(b.size() == n);
        for (int round = 0; round < 50; ++round)
          if (!gatherRound(b, (round * 1031) % 70000, round)) // up to ~68 KB
            ++bad;
        b.barrier();
      });
      for (auto &e : errors)
        CHECK(e.empty());
      CHECK(bad == 0);
      if (!abstract)
        CHECK(::access(path.c_str(), F_OK) != 0); // rank 0 removed the file
    }
  }
}

TEST_CASE("UnixSocketBootstrap between forked processes") {
  const int n = 3;
  std::string path = freshPath(true);
  std::vector<pid_t> pids;
  for (int r = 1; r < n; ++r) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        UnixSocketBootstrap b(path, r, n, 10000, kCookie);
        for (int round = 0; round < 20; ++round)
          if (!gatherRound(b, 100 + round, round))
            code = 1;
      } catch (...) {
        code = 2;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  {
    UnixSocketBootstrap b(path, 0, n, 10000, kCookie);
    for (int round = 0; round < 20; ++round)
      ok = gatherRound(b, 100 + round, round) && ok;
  }
  CHECK(ok);
  expectExitedOk(pids);
}

TEST_CASE("UnixSocketBootstrap fails cleanly") {
  SECTION("a peer that finds nobody listening times out") {
    try {
      UnixSocketBootstrap b(freshPath(true), 1, 2, 300, kCookie);
      FAIL("expected a timeout");
    } catch (const Error &e) {
      CHECK(e.status() == Status::BootstrapError);
      CHECK(std::string(e.what()).find("connecting to rank 0") != std::string::npos);
    }
  }
  SECTION("rank 0 times out waiting for peers") {
    REQUIRE_THROWS_WITH(UnixSocketBootstrap(freshPath(true), 0, 3, 300, kCookie),
                        Catch::Contains("waiting for 2 of 2 peers"));
  }
  SECTION("bad arguments") {
    REQUIRE_THROWS_AS(UnixSocketBootstrap("@x", 2, 2), Error);
    REQUIRE_THROWS_AS(UnixSocketBootstrap("@x", -1, 2), Error);
    REQUIRE_THROWS_WITH(UnixSocketBootstrap("", 0, 2), Catch::Contains("path"));
    REQUIRE_THROWS_WITH(UnixSocketBootstrap(std::string(200, 'a'), 0, 2),
                        Catch::Contains("path"));
  }
  SECTION("mismatched byte counts and a vanished peer") {
    std::string path = freshPath(true);
    auto errors = onThreads(2, [&](int r) {
      UnixSocketBootstrap b(path, r, 2, 2000, kCookie);
      std::vector<char> mine(64), all(128);
      b.allGather(mine.data(), all.data(), r == 0 ? 32 : 64);
    });
    CHECK(errors[0].find("gathers 64 bytes") != std::string::npos);
    CHECK(!errors[1].empty()); // rank 0 closed the connection
  }
  SECTION("wrong world size at the peer: dropped, named in rank 0's timeout") {
    std::string path = freshPath(true);
    auto errors = onThreads(2, [&](int r) {
      UnixSocketBootstrap b(path, r, r == 0 ? 2 : 3, 1000, kCookie);
      if (r == 1) b.barrier();  // rank 0 closed this connection
    });
    CHECK(errors[0].find("waiting for 1 of 1 peers") != std::string::npos);
    CHECK(errors[0].find("a peer of world size 3, expected 2") != std::string::npos);
    CHECK(!errors[1].empty());
  }
  SECTION("a malformed cookie is refused") {
    REQUIRE_THROWS_WITH(UnixSocketBootstrap("@x", 0, 1, 100, "abc"), Catch::Contains("32 hex digits"));
    REQUIRE_THROWS_WITH(UnixSocketBootstrap("@x", 0, 1, 100, std::string(32, 'g')), Catch::Contains("32 hex digits"));
  }
}

TEST_CASE("UnixSocketBootstrap drops strangers and keeps waiting for the job's ranks") {
  // Before the real rank 1 connects: a junk hello, a hello with another
  // cookie, a connection that sends nothing. Each is closed; the job's
  // ranks still meet.
  std::string path = freshPath(true);
  std::atomic<bool> ready{false};
  int junk = -1, impostor = -1, silent = -1;
  std::thread strangers([&] {
    junk = connectRaw(path);
    const char garbage[40] = "GET / HTTP/1.0 and more bytes here....";
    (void)::send(junk, garbage, sizeof garbage, MSG_NOSIGNAL);
    impostor = connectRaw(path);
    struct { uint32_t magic; int32_t rank, size; unsigned char cookie[16]; } h{0x504c4e42, 1, 2, {}};
    (void)::send(impostor, &h, sizeof h, MSG_NOSIGNAL);  // right magic, rank and size; no cookie
    silent = connectRaw(path);
    ready = true;
  });
  auto errors = onThreads(2, [&](int r) {
    if (r == 1)
      while (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    UnixSocketBootstrap b(path, r, 2, 10000, kCookie);
    CHECK(gatherRound(b, 64, 1));
  });
  strangers.join();
  CHECK(errors[0].empty());
  CHECK(errors[1].empty());
  CHECK(closedByPeer(junk, 2000));
  CHECK(closedByPeer(impostor, 2000));
  CHECK(closedByPeer(silent, 2000));
  for (int fd : {junk, impostor, silent}) ::close(fd);
}

TEST_CASE("UnixSocketBootstrap: a flood of strangers cannot hold rank 0 past its deadline") {
  std::string path = freshPath(true);
  std::atomic<bool> stop{false};
  std::thread flood([&] {
    while (!stop) {
      int fd = connectRaw(path);
      if (fd >= 0) {
        const char junk[28] = "junk junk junk junk junk..";
        (void)::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
        ::close(fd);
      }
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    UnixSocketBootstrap b(path, 0, 2, 300, kCookie);
  } catch (const Error &e) {
    error = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stop = true;
  flood.join();
  INFO("error: " << error);
  CHECK(error.find("timed out waiting for 1 of 1 peers") != std::string::npos);
  CHECK(error.find("(dropped: ") != std::string::npos);
  CHECK(s < 2.0);
}

TEST_CASE("Bootstrap::abort ends a wait at once, on this rank and its peers") {
  // Rank 1 waits in an allGather rank 0 never joins; abort from another
  // thread ends it long before the 10 s timeout.
  for (bool unix : {false, true}) {
    INFO((unix ? "UnixSocketBootstrap" : "InProcessGroup"));
    const std::string path = freshPath(true);
    InProcessGroup group(2, 10000);
    std::unique_ptr<Bootstrap> boots[2];
    if (unix) {
      auto errors = onThreads(2, [&](int r) { boots[r] = std::make_unique<UnixSocketBootstrap>(path, r, 2, 10000, kCookie); });
      REQUIRE(errors[0].empty());
      REQUIRE(errors[1].empty());
    } else {
      boots[0] = group.bootstrap(0);
      boots[1] = group.bootstrap(1);
    }
    Status status = Status::Ok;
    std::string what;
    const auto t0 = std::chrono::steady_clock::now();
    std::thread waiter([&] {
      try {
        int x = 1, all[2];
        boots[1]->allGather(&x, all, sizeof x);
      } catch (const Error &e) {
        status = e.status();
        what = e.what();
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    boots[1]->abort();
    waiter.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(what);
    CHECK(status == Status::Aborted);
    CHECK(s < 2.0);
    // Later calls fail at once, and so does the peer's next exchange.
    int x = 1, all[2];
    REQUIRE_THROWS_AS(boots[1]->allGather(&x, all, sizeof x), Error);
    const auto t1 = std::chrono::steady_clock::now();
    REQUIRE_THROWS_AS(boots[0]->allGather(&x, all, sizeof x), Error);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() < 2.0);
  }
}

TEST_CASE("UnixSocketBootstrap: no secret, no job of more than one rank") {
  REQUIRE_THROWS_WITH(UnixSocketBootstrap(freshPath(true), 0, 2, 200), Catch::Contains("no job secret"));
  REQUIRE_THROWS_WITH(UnixSocketBootstrap(freshPath(true), 1, 2, 200, ""), Catch::Contains("no job secret"));
  UnixSocketBootstrap solo(freshPath(true), 0, 1, 200);  // one rank: nobody to authenticate
  CHECK(solo.size() == 1);
}

TEST_CASE("UnixSocketBootstrap: a peer with another secret is refused; rank 0 keeps waiting") {
  const std::string path = freshPath(true);
  auto errors = onThreads(2, [&](int r) {
    UnixSocketBootstrap b(path, r, 2, 1500, r == 0 ? kCookie : std::string("ffeeddccbbaa99887766554433221100"));
  });
  CHECK(errors[0].find("timed out waiting for 1 of 1 peers") != std::string::npos);
  CHECK(errors[0].find("a hello without proof of this job's secret") != std::string::npos);
  CHECK(!errors[1].empty());
}

TEST_CASE("UnixSocketBootstrap: a squatter on the rendezvous name learns nothing and is refused") {
  // A process of the same user binds the name first and plays rank 0: it
  // sends a challenge, reads the hello, and answers without the secret.
  const std::string path = freshPath(true);
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  addr.sun_path[0] = '\0';
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr *>(&addr), len) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  std::vector<unsigned char> heard;
  std::thread squatter([&] {
    int fd = ::accept(lfd, nullptr, nullptr);
    if (fd < 0) return;
    const struct { uint32_t magic, protocol; unsigned char nonce[16]; } challenge{0x504c4e42, 2, {1, 2, 3}};
    (void)::send(fd, &challenge, sizeof challenge, MSG_NOSIGNAL);
    unsigned char buf[256];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 500) > 0) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      heard.insert(heard.end(), buf, buf + n);
      if (heard.size() >= 60) break;  // the hello
    }
    const struct { uint32_t magic; unsigned char mac[32]; } welcome{0x504c4e42, {}};
    (void)::send(fd, &welcome, sizeof welcome, MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::close(fd);
  });
  std::string error;
  try {
    UnixSocketBootstrap b(path, 1, 2, 2000, kCookie);
  } catch (const Error &e) {
    error = e.what();
  }
  squatter.join();
  ::close(lfd);
  CHECK(error.find("does not prove this job's secret") != std::string::npos);
  // The secret's bytes never went on the wire.
  const unsigned char secret[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  CHECK(heard.size() >= 60);
  CHECK(std::search(heard.begin(), heard.end(), secret, secret + 16) == heard.end());
  CHECK(std::search(heard.begin(), heard.end(), kCookie.begin(), kCookie.end()) == heard.end());
}

TEST_CASE("UnixSocketBootstrap: silent strangers do not delay the job's ranks") {
  // 60 connections that never say anything, made before rank 1 connects:
  // handled at once, each dropped after its own second, not one after another.
  const std::string path = freshPath(true);
  std::vector<int> silent;
  std::atomic<bool> ready{false};
  std::thread strangers([&] {
    for (int i = 0; i < 60; ++i) {
      const int fd = connectRaw(path);
      if (fd >= 0) silent.push_back(fd);
    }
    ready = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto errors = onThreads(2, [&](int r) {
    if (r == 1)
      while (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    UnixSocketBootstrap b(path, r, 2, 10000, kCookie);
    CHECK(gatherRound(b, 32, 3));
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  strangers.join();
  CHECK(errors[0].empty());
  CHECK(errors[1].empty());
  CHECK(silent.size() == 60);
  CHECK(s < 3.0);
  for (int fd : silent) ::close(fd);
}

TEST_CASE("UnixSocketBootstrap: a process of another user is dropped") {
  if (::geteuid() != 0) {
    WARN("not root: cannot start a process of another user (CI runs as root)");
    return;
  }
  const std::string path = freshPath(true);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // nobody (65534) connects and waits
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    const int fd = connectRaw(path);
    if (fd < 0) ::_exit(4);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::_exit(0);
  }
  std::string error;
  try {
    UnixSocketBootstrap b(path, 0, 2, 800, kCookie);
  } catch (const Error &e) {
    error = e.what();
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  INFO("error: " << error);
  CHECK(error.find("a process of another user (uid 65534)") != std::string::npos);
}

TEST_CASE("UnixSocketBootstrap: filesystem sockets only in a private directory, only its own removed") {
  // A world-writable directory (as /tmp usually is; made here, so that the
  // test does not depend on the machine's /tmp): refused.
  const std::string shared = privateDir() + "/shared";
  REQUIRE(::mkdir(shared.c_str(), 0700) == 0);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  REQUIRE_THROWS_WITH(UnixSocketBootstrap(shared + "/purlin-public.sock", 0, 2, 200, kCookie),
                      Catch::Contains("must be private"));
  ::rmdir(shared.c_str());
  // A regular file where the socket would go: an error, and the file stays.
  const std::string file = privateDir() + "/not-a-socket";
  { std::ofstream(file) << "precious"; }
  REQUIRE_THROWS_WITH(UnixSocketBootstrap(file, 0, 2, 200, kCookie), Catch::Contains("is not a socket of this user: not removed"));
  struct stat st{};
  CHECK(::stat(file.c_str(), &st) == 0);
  CHECK(st.st_size == 8);
  ::unlink(file.c_str());
}

TEST_CASE("bootstrapFromEnv reads purlin-launch's variables") {
  ::unsetenv("PURLIN_RANK");
  ::unsetenv("PURLIN_WORLD_SIZE");
  ::unsetenv("PURLIN_BOOTSTRAP");
  REQUIRE_THROWS_WITH(bootstrapFromEnv(), Catch::Contains("PURLIN_WORLD_SIZE is not set"));
  ::setenv("PURLIN_WORLD_SIZE", "2", 1);
  ::setenv("PURLIN_RANK", "2", 1);
  REQUIRE_THROWS_WITH(bootstrapFromEnv(), Catch::Contains("PURLIN_RANK='2'"));
  ::setenv("PURLIN_RANK", "0x", 1);
  REQUIRE_THROWS_WITH(bootstrapFromEnv(), Catch::Contains("not an integer"));
  ::setenv("PURLIN_RANK", "0", 1);
  REQUIRE_THROWS_WITH(bootstrapFromEnv(), Catch::Contains("PURLIN_BOOTSTRAP"));
  ::setenv("PURLIN_WORLD_SIZE", "1", 1);
  ::setenv("PURLIN_BOOTSTRAP", "@purlin-env-test", 1);
  auto b = bootstrapFromEnv();
  CHECK(b->rank() == 0);
  CHECK(b->size() == 1);
  int x = 5, all = 0;
  b->allGather(&x, &all, sizeof x);
  CHECK(all == 5);
  ::unsetenv("PURLIN_RANK");
  ::unsetenv("PURLIN_WORLD_SIZE");
  ::unsetenv("PURLIN_BOOTSTRAP");
}

namespace {
/// torchrun's variables for rank `r` of `n` on one node (and no purlin-launch ones).
void setTorchrunEnv(int r, int n, int localSize, const char* cookie, const std::string& port) {
  for (const char* v : {"PURLIN_RANK", "PURLIN_WORLD_SIZE", "PURLIN_BOOTSTRAP"}) ::unsetenv(v);
  ::setenv("RANK", std::to_string(r).c_str(), 1);
  ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(localSize).c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", port.c_str(), 1);
  ::setenv("TORCHELASTIC_RUN_ID", "purlin-bootstrap-test", 1);
  if (cookie) ::setenv("PURLIN_BOOTSTRAP_COOKIE", cookie, 1);
  else ::unsetenv("PURLIN_BOOTSTRAP_COOKIE");
}
void clearTorchrunEnv() {
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
                        "PURLIN_BOOTSTRAP_COOKIE"})
    ::unsetenv(v);
}
} // namespace

TEST_CASE("bootstrapFromEnv under torchrun: one node, the user's secret, a name derived from it") {
  const std::string port = std::to_string(20000 + ::getpid() % 20000);
  setTorchrunEnv(0, 2, 2, nullptr, port);
  REQUIRE_THROWS_WITH(bootstrapFromEnv(), Catch::Contains("PURLIN_BOOTSTRAP_COOKIE is not set"));
  setTorchrunEnv(0, 4, 2, kCookie.c_str(), port);
  try {
    (void)bootstrapFromEnv();
    FAIL("ranks on two nodes were accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::Unsupported);
    CHECK(std::string(e.what()).find("span several nodes") != std::string::npos);
  }
  // purlin-launch's variables win where both are set.
  setTorchrunEnv(0, 2, 2, kCookie.c_str(), port);
  ::setenv("PURLIN_WORLD_SIZE", "1", 1);
  ::setenv("PURLIN_RANK", "0", 1);
  ::setenv("PURLIN_BOOTSTRAP", "@purlin-env-precedence-test", 1);
  CHECK(bootstrapFromEnv()->size() == 1);
  // Three processes, each with its own RANK: they meet without PURLIN_BOOTSTRAP.
  const int n = 3;
  std::vector<pid_t> pids;
  for (int r = 1; r < n; ++r) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        setTorchrunEnv(r, n, n, kCookie.c_str(), port);
        auto b = bootstrapFromEnv();
        for (int round = 0; round < 5; ++round)
          if (b->rank() != r || b->size() != n || !gatherRound(*b, 300 + round, round)) code = 1;
      } catch (...) {
        code = 2;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  setTorchrunEnv(0, n, n, kCookie.c_str(), port);
  bool ok = true;
  {
    auto b = bootstrapFromEnv();
    CHECK(b->rank() == 0);
    CHECK(b->size() == n);
    for (int round = 0; round < 5; ++round) ok = gatherRound(*b, 300 + round, round) && ok;
  }
  CHECK(ok);
  expectExitedOk(pids);
  clearTorchrunEnv();
}
