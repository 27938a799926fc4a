/// @file purlin_launch.cpp
/// @brief purlin-launch: runs N copies of a program, one per rank, with the
/// environment of purlin::bootstrapFromEnv (PURLIN_RANK, PURLIN_WORLD_SIZE,
/// PURLIN_BOOTSTRAP, PURLIN_BOOTSTRAP_COOKIE, and PURLIN_DEVICE with
/// --devices), waits for all of them, and fails if any fails or the time
/// limit (none by default) expires (then the rest are killed).
///
/// No rank outlives the launcher: the ranks form one process group, which
/// SIGTERM, SIGINT and SIGHUP to the launcher are forwarded to (then
/// SIGKILL after 2 s of grace), and each rank gets SIGKILL if the launcher
/// itself dies (PR_SET_PDEATHSIG).
///
/// Usage: purlin-launch -n N [--devices 0,1,...] [--timeout SECONDS] prog [args...]
/// Exit status: 0 if every rank exited 0; otherwise the first failing rank's
/// exit status (128+signal if it was killed), 124 on timeout, 128+signal
/// when the launcher was signalled, 2 on bad usage.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"

namespace {

constexpr char kUsage[] =
    "usage: purlin-launch -n N [--devices 0,1,...] [--timeout SECONDS] program [args...]\n"
    "  runs N ranks of `program` with PURLIN_RANK, PURLIN_WORLD_SIZE,\n"
    "  PURLIN_BOOTSTRAP (a fresh abstract Unix socket), PURLIN_BOOTSTRAP_COOKIE\n"
    "  (a random secret every hello carries) set;\n"
    "  --devices sets PURLIN_DEVICE of rank r to the (r mod count)-th listed device\n"
    "  (without it a rank takes rank mod the number of devices it sees);\n"
    "  --timeout kills every rank after SECONDS (default 0 = none: a rank that\n"
    "  never returns, e.g. one stopped in a debugger, holds the job; set it in batch jobs).\n"
    "  Rank 0 reads stdin (a terminal: its process group is the foreground one while\n"
    "  the ranks run); the other ranks read /dev/null.\n"
    "  SIGTERM, SIGINT and SIGHUP are forwarded to every rank.\n";

/// The terminal on stdin, handed to the ranks' process group while they
/// run (a rank that reads it, as a breakpoint() does, would be stopped by
/// SIGTTIN in a background group) and taken back when the launcher
/// returns. Only when the launcher is in the terminal's foreground
/// (`wanted`, decided before the ranks start). Rank 0 also takes it itself
/// before it runs the program: a read before the launcher's give() would
/// stop it for good (seen under load).
struct TerminalHandover {
  const bool wanted = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  bool given = false;
  /// tcsetpgrp from a group that is not (or no longer) the foreground one
  /// raises SIGTTOU: ignored around the call.
  static bool setForeground(pid_t group) {
    struct sigaction ignore{}, old{};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGTTOU, &ignore, &old);
    const bool ok = ::tcsetpgrp(STDIN_FILENO, group) == 0;
    ::sigaction(SIGTTOU, &old, nullptr);
    return ok;
  }
  void give(pid_t group) {
    if (wanted) given = setForeground(group);
  }
  ~TerminalHandover() {
    if (given) setForeground(::getpgrp());
  }
};

/// The signal the launcher received (0 = none), set by its handler.
volatile sig_atomic_t gSignal = 0;
void onSignal(int sig) { gSignal = sig; }

int usage(const char *why) {
  std::fprintf(stderr, "purlin-launch: %s\n%s", why, kUsage);
  return 2;
}

/// Parses a non-negative decimal integer; false on junk or overflow.
bool parseCount(const char *text, long max, long &out) {
  if (!text || !*text)
    return false;
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno || *end != '\0' || v < 0 || v > max)
    return false;
  out = v;
  return true;
}

bool parseDevices(const std::string &list, std::vector<int> &out) {
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    long v = 0;
    if (!parseCount(item.c_str(), 1024, v))
      return false;
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return !out.empty();
}

/// Reaps rank processes that have exited without blocking; marks them done.
void reap(const std::vector<pid_t> &pids, std::vector<bool> &done, long &remaining) {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0)
      return;
    for (std::size_t r = 0; r < pids.size(); ++r)
      if (pids[r] == pid && !done[r]) {
        done[r] = true;
        --remaining;
      }
  }
}

/// The ranks' process group (the first rank leads it; 0 before it exists).
pid_t gGroup = 0;

/// `sig` to every live rank and, through their process group, to what they
/// started; SIGTERM first: up to 2 s of grace, then SIGKILL; returns when
/// every rank has been reaped.
void killAll(const std::vector<pid_t> &pids, std::vector<bool> &done, long &remaining, int sig = SIGTERM) {
  if (gGroup > 0)
    ::kill(-gGroup, sig);
  for (std::size_t r = 0; r < pids.size(); ++r)
    if (!done[r] && pids[r] > 0)
      ::kill(pids[r], sig);
  for (int i = 0; i < 100 && remaining > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reap(pids, done, remaining);
  }
  if (gGroup > 0)
    ::kill(-gGroup, SIGKILL);  // also what the ranks started and left behind (it may ignore `sig`)
  for (std::size_t r = 0; r < pids.size(); ++r)
    if (!done[r] && pids[r] > 0) {
      ::kill(pids[r], SIGKILL);
      int status = 0;
      ::waitpid(pids[r], &status, 0);
      done[r] = true;
      --remaining;
    }
}

} // namespace

int main(int argc, char **argv) {
  long n = 0, timeoutS = 0;
  std::vector<int> devices;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-n" || a == "--np") {
      if (i + 1 >= argc || !parseCount(argv[++i], 1 << 16, n) || n < 1)
        return usage("-n needs a rank count >= 1");
    } else if (a == "--devices") {
      if (i + 1 >= argc || !parseDevices(argv[++i], devices))
        return usage("--devices needs a comma-separated list of device indices");
    } else if (a == "--timeout") {
      if (i + 1 >= argc || !parseCount(argv[++i], 1L << 30, timeoutS))
        return usage("--timeout needs a number of seconds");
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else {
      break;
    }
  }
  if (n < 1)
    return usage("missing -n N");
  if (i >= argc)
    return usage("missing program");

  // The job's secret, which every rank and rank 0 prove to each other
  // (UnixSocketBootstrap's challenge and response), and a rendezvous name
  // nobody can guess in advance to take first: both from getrandom.
  std::string cookie, path;
  try {
    cookie = purlin::randomHex(16);
    path = "@purlin-launch-" + purlin::randomHex(12);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "purlin-launch: %s\n", e.what());
    return 1;
  }

  // Forwarded to the ranks from the wait loop (installed before the first
  // fork, so no signal is lost in between).
  struct sigaction sa{};
  sa.sa_handler = onSignal;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
  const pid_t launcher = ::getpid();

  std::vector<pid_t> pids(n, -1);
  std::vector<bool> done(n, false);
  TerminalHandover terminal;  // taken back on every return below
  for (long r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("purlin-launch: fork");
      long started = r;
      pids.resize(r);
      done.resize(r);
      killAll(pids, done, started);
      return 1;
    }
    if (pid == 0) {
      // Die with the launcher, even if it is SIGKILLed; one group for all ranks.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher)
        ::_exit(1);  // the launcher died before prctl took effect
      ::setpgid(0, gGroup);  // the first rank leads (gGroup 0 = a new group)
      if (r == 0 && terminal.wanted) TerminalHandover::setForeground(::getpgrp());  // before it can read
      if (r != 0) {  // the terminal (or whatever stdin is) is rank 0's: the others read nothing
        const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) {
          ::dup2(null, STDIN_FILENO);
          ::close(null);
        }
      }
      struct sigaction dfl{};
      dfl.sa_handler = SIG_DFL;
      for (int sig : {SIGTERM, SIGINT, SIGHUP})
        ::sigaction(sig, &dfl, nullptr);
      ::setenv("PURLIN_RANK", std::to_string(r).c_str(), 1);
      ::setenv("PURLIN_WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("PURLIN_BOOTSTRAP", path.c_str(), 1);
      ::setenv("PURLIN_BOOTSTRAP_COOKIE", cookie.c_str(), 1);
      if (!devices.empty())
        ::setenv("PURLIN_DEVICE", std::to_string(devices[r % devices.size()]).c_str(), 1);
      else
        ::unsetenv("PURLIN_DEVICE");  // the rank takes rank mod its visible devices
      ::execvp(argv[i], argv + i);
      std::fprintf(stderr, "purlin-launch: rank %ld: cannot run '%s': %s\n", r,
                   argv[i], std::strerror(errno));
      ::_exit(127);
    }
    pids[r] = pid;
    if (gGroup == 0) gGroup = pid;
    ::setpgid(pid, gGroup);  // also from here: no race with the child's own call
    if (r == 0) terminal.give(gGroup);
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutS);
  int result = 0;
  long remaining = n;
  while (remaining > 0) {
    if (gSignal != 0) {
      const int sig = gSignal;
      std::fprintf(stderr, "purlin-launch: got signal %d; forwarding it to %ld rank(s)\n", sig, remaining);
      killAll(pids, done, remaining, sig);
      return 128 + sig;
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) {
      std::perror("purlin-launch: waitpid");
      killAll(pids, done, remaining);
      return 1;
    }
    if (pid <= 0) {
      if (timeoutS > 0 && std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "purlin-launch: timed out after %ld s; killing %ld rank(s)\n",
                     timeoutS, remaining);
        killAll(pids, done, remaining);
        return 124;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    long r = 0;
    while (r < n && pids[r] != pid)
      ++r;
    if (r == n)
      continue;
    done[r] = true;
    --remaining;
    int code = WIFEXITED(status) ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (code != 0 && result == 0) {
      result = code;
      std::fprintf(stderr, "purlin-launch: rank %ld %s %d; killing the other ranks\n", r,
                   WIFSIGNALED(status) ? "died of signal" : "exited with status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : code);
      killAll(pids, done, remaining);
    }
  }
  return result;
}
