/// @file launch_test.cpp
/// @brief Tests of purlin-launch (runtime/tools/purlin_launch.cpp) as a
/// program: the first failing rank's status, the environment it gives the
/// ranks (a cookie, PURLIN_DEVICE only with --devices), signals forwarded
/// to every rank, and no rank outliving a launcher that was SIGKILLed.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *launcher() { return PURLIN_LAUNCH_PATH; }

/// Starts purlin-launch with `args` (then `sh -c script`); returns its pid.
pid_t start(const std::vector<std::string> &args, const std::string &script) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char *> argv{const_cast<char *>(launcher())};
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(const_cast<char *>("sh"));
    argv.push_back(const_cast<char *>("-c"));
    argv.push_back(const_cast<char *>(script.c_str()));
    argv.push_back(nullptr);
    ::execv(launcher(), argv.data());
    ::_exit(127);
  }
  return pid;
}

/// Waits for `pid`; its exit status (128+signal when signalled).
int wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string tempFile(const char *tag) {
  return "/tmp/purlin-launch-test-" + std::to_string(::getpid()) + "-" + tag;
}

std::vector<std::string> lines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Waits until `path` has `count` lines (the ranks wrote their pids).
bool waitLines(const std::string &path, std::size_t count, int ms) {
  for (int i = 0; i < ms / 10; ++i) {
    if (lines(path).size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// Whether process `pid` runs (a zombie, dead but not yet reaped by init,
/// does not).
bool running(const std::string &pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close = all.rfind(')');
  return close != std::string::npos && close + 2 < all.size() && all[close + 2] != 'Z';
}

/// True once no process of `pids` runs (within `ms`).
bool allGone(const std::vector<std::string> &pids, int ms) {
  for (int i = 0; i < ms / 10; ++i) {
    bool any = false;
    for (const std::string &p : pids) any = any || running(p);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

} // namespace

TEST_CASE("purlin-launch: the first failing rank's status; the ranks' environment") {
  CHECK(wait(start({"-n", "3"}, "[ \"$PURLIN_RANK\" = 1 ] && exit 7; sleep 5")) == 7);
  CHECK(wait(start({"-n", "2"}, "exit 0")) == 0);
  const std::string env = tempFile("env");
  ::unlink(env.c_str());
  REQUIRE(wait(start({"-n", "3"}, "echo \"$PURLIN_RANK ${PURLIN_DEVICE-unset} ${#PURLIN_BOOTSTRAP_COOKIE}\" >> " + env)) == 0);
  auto got = lines(env);
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"0 unset 32", "1 unset 32", "2 unset 32"});
  ::unlink(env.c_str());
  REQUIRE(wait(start({"-n", "3", "--devices", "4,5"}, "echo \"$PURLIN_RANK ${PURLIN_DEVICE-unset}\" >> " + env)) == 0);
  got = lines(env);
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"0 4", "1 5", "2 4"});
  ::unlink(env.c_str());
}

TEST_CASE("purlin-launch: SIGTERM and SIGINT reach every rank") {
  for (int sig : {SIGTERM, SIGINT}) {
    const std::string pids = tempFile("pids");
    ::unlink(pids.c_str());
    // Each rank records its pid, then a child of its own (sleep) keeps it busy.
    const pid_t l = start({"-n", "3"}, "echo $$ >> " + pids + "; sleep 30 & echo $! >> " + pids + "; wait");
    REQUIRE(waitLines(pids, 6, 5000));
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(l, sig);
    CHECK(wait(l) == 128 + sig);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
    CHECK(allGone(lines(pids), 3000));  // the ranks and their children (one process group)
    ::unlink(pids.c_str());
  }
}

TEST_CASE("purlin-launch: no rank outlives a launcher that was SIGKILLed") {
  const std::string pids = tempFile("pids9");
  ::unlink(pids.c_str());
  const pid_t l = start({"-n", "2"}, "echo $$ >> " + pids + "; exec sleep 30");
  REQUIRE(waitLines(pids, 2, 5000));
  ::kill(l, SIGKILL);
  wait(l);
  CHECK(allGone(lines(pids), 3000));  // PR_SET_PDEATHSIG
  ::unlink(pids.c_str());
}
