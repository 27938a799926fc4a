/// @file unix_socket_bootstrap.cpp
/// @brief UnixSocketBootstrap: a star rendezvous over a Unix-domain stream
/// socket. Rank 0 listens and accepts size-1 peers, each of which introduces
/// itself with a Hello; allGather sends every contribution to rank 0, which
/// returns the concatenation. Every blocking step is bounded by a deadline.
/// Who may join (bootstrap.h): same user (SO_PEERCRED, both ways) and proof
/// of the job's secret, both ways, by challenge and response: rank 0 sends a
/// nonce, the peer answers with its own nonce and HMAC-SHA-256(secret,
/// "PEER" | both nonces | rank | size), rank 0 answers HMAC(secret, "ROOT" |
/// the same); the secret is never sent and MACs are compared in constant
/// time. Rank 0 handles every connection's handshake at once (one poll
/// loop, a deadline per connection), so silent strangers cannot hold it.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"
#include "sha256.h"

namespace purlin {
namespace {

constexpr uint32_t kMagic = 0x504c4e42; // "PLNB"
constexpr uint32_t kProtocol = 2;        // challenge and response (1: the cookie in the hello)

/// Rank 0's first message on a connection: its nonce.
struct Challenge {
  uint32_t magic;
  uint32_t protocol;
  unsigned char nonce[16];
};
/// The connecting rank's answer: who it is, its nonce, and its proof.
struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t size;
  unsigned char nonce[16];
  unsigned char mac[32];
};
/// Rank 0's proof, after it accepted the hello.
struct Welcome {
  uint32_t magic;
  unsigned char mac[32];
};

/// How long rank 0 waits for a connection's hello before dropping it, and
/// how many unfinished handshakes it holds at once (more are dropped as
/// they come; the job's ranks finish theirs in microseconds).
constexpr int kHelloMs = 1000;
constexpr std::size_t kMaxPendingHandshakes = 256;

/// HMAC(secret, label | rank 0's nonce | the peer's nonce | rank | size).
detail::Digest proof(const unsigned char secret[16], const char label[4], const unsigned char rootNonce[16],
                     const unsigned char peerNonce[16], int32_t rank, int32_t size) {
  unsigned char msg[4 + 16 + 16 + 8];
  std::memcpy(msg, label, 4);
  std::memcpy(msg + 4, rootNonce, 16);
  std::memcpy(msg + 20, peerNonce, 16);
  for (int i = 0; i < 4; ++i) {
    msg[36 + i] = static_cast<unsigned char>(uint32_t(rank) >> (8 * i));
    msg[40 + i] = static_cast<unsigned char>(uint32_t(size) >> (8 * i));
  }
  return detail::hmacSha256(secret, 16, msg, sizeof msg);
}

/// `bytes` bytes from the kernel's random source.
void fillRandom(unsigned char *out, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t r = ::getrandom(out + got, bytes - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) PURLIN_THROW(Status::Internal, "getrandom failed: no random bytes for a bootstrap nonce");
    got += static_cast<std::size_t>(r);
  }
}

/// Header of an allGather contribution (peer -> rank 0).
struct Header {
  uint32_t magic;
  int32_t rank;
  uint64_t bytes;
};

using Clock = std::chrono::steady_clock;

std::string sysError(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

/// Milliseconds left until `deadline` (0 if passed).
int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

/// Waits until `fd` is ready for `events`; throws on timeout or error.
void waitFd(int fd, short events, Clock::time_point deadline,
            const std::string &what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, msLeft(deadline));
    if (r > 0)
      return;
    if (r == 0)
      PURLIN_THROW(Status::BootstrapError, what + ": timed out");
    if (errno != EINTR)
      PURLIN_THROW(Status::BootstrapError, sysError(what + ": poll"));
  }
}

void sendAll(int fd, const void *data, std::size_t bytes,
             Clock::time_point deadline, const std::string &what) {
  auto *p = static_cast<const char *>(data);
  while (bytes > 0) {
    waitFd(fd, POLLOUT, deadline, what);
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
        continue;
      PURLIN_THROW(Status::BootstrapError, sysError(what + ": send"));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void recvAll(int fd, void *data, std::size_t bytes, Clock::time_point deadline,
             const std::string &what) {
  auto *p = static_cast<char *>(data);
  while (bytes > 0) {
    waitFd(fd, POLLIN, deadline, what);
    ssize_t n = ::recv(fd, p, bytes, MSG_DONTWAIT);
    if (n == 0)
      PURLIN_THROW(Status::BootstrapError,
                   what + ": the peer closed the connection");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
        continue;
      PURLIN_THROW(Status::BootstrapError, sysError(what + ": recv"));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

/// Fills a sockaddr_un for `path` ('@' prefix = abstract namespace).
socklen_t makeAddress(const std::string &path, sockaddr_un &addr) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    PURLIN_THROW(Status::InvalidArgument,
                 "bootstrap socket path '" + path + "' must have 1.." +
                     std::to_string(sizeof(addr.sun_path) - 1) + " characters");
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@')
    addr.sun_path[0] = '\0';
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
}

/// The secret's 16 bytes from 32 hex digits ("" = zeros: no secret).
void parseCookie(const std::string &hex, unsigned char out[16]) {
  std::memset(out, 0, 16);
  if (hex.empty()) return;
  const auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  bool ok = hex.size() == 32;
  for (std::size_t i = 0; ok && i < 16; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    if (ok) out[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  if (!ok)
    PURLIN_THROW(Status::InvalidArgument, "bootstrap cookie must be 32 hex digits (PURLIN_BOOTSTRAP_COOKIE), got " +
                                              std::to_string(hex.size()) + " characters");
}

/// The uid of the process at the other end of `fd`; false if unknown.
bool peerUid(int fd, uid_t &uid) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  uid = cred.uid;
  return true;
}

/// A filesystem socket path must lie in a directory only this user can
/// enter or change; and whatever is at the path is removed only if it is a
/// socket of this user.
void checkFilesystemPath(const std::string &path, const std::string &ctx) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0)
    PURLIN_THROW(Status::InvalidArgument, sysError(ctx + ": directory '" + dir + "'"));
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    PURLIN_THROW(Status::InvalidArgument, ctx + ": the socket's directory '" + dir +
                                              "' must be private (owned by this user, mode 0700): use an abstract "
                                              "socket ('@name') or a directory from mkdtemp");
}

/// Removes a filesystem socket of this user at `path`; leaves anything else.
void removeOwnSocket(const std::string &path, const std::string &ctx) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there
  if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid())
    PURLIN_THROW(Status::InvalidArgument, ctx + ": '" + path + "' exists and is not a socket of this user: not removed");
  ::unlink(path.c_str());
}

/// A Unix stream socket; `nonBlocking` for a connecting rank, whose
/// connect then fails with EAGAIN (retried until the deadline) instead of
/// blocking while rank 0's backlog is full.
int makeSocket(bool nonBlocking = false) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonBlocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0)
    PURLIN_THROW(Status::BootstrapError, sysError("socket(AF_UNIX)"));
  return fd;
}

} // namespace

struct UnixSocketBootstrap::AbortState {
  std::atomic<bool> aborted{false};
  std::mutex fds;  ///< closeAll() and abort()
};
struct UnixSocketBootstrap::Deadline {
  Clock::time_point at;
};

UnixSocketBootstrap::UnixSocketBootstrap(std::string path, int rank, int size,
                                         int timeoutMs, const std::string &cookie)
    : path_(std::move(path)), rank_(rank), size_(size), timeoutMs_(timeoutMs),
      abort_(std::make_unique<AbortState>()) {
  parseCookie(cookie, cookie_);
  if (size < 1 || rank < 0 || rank >= size)
    PURLIN_THROW(Status::InvalidArgument,
                 "UnixSocketBootstrap: rank " + std::to_string(rank) +
                     " / size " + std::to_string(size) + " is invalid");
  if (timeoutMs < 1)
    PURLIN_THROW(Status::InvalidArgument,
                 "UnixSocketBootstrap: timeout must be >= 1 ms");
  sockaddr_un addr;
  socklen_t len = makeAddress(path_, addr);
  if (size == 1)
    return;
  if (cookie.empty())
    PURLIN_THROW(Status::InvalidArgument,
                 "UnixSocketBootstrap: no job secret: every rank needs the same 32 hex digits "
                 "(PURLIN_BOOTSTRAP_COOKIE; purlin-launch and purlin_get_unique_id make one), or any process "
                 "of this user could join the job");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  const std::string ctx = "bootstrap rank " + std::to_string(rank_) + " on '" + path_ + "'";
  try {
    if (rank_ == 0) {
      int lfd = makeSocket(true);
      struct Closer { int fd; ~Closer() { ::close(fd); } } closer{lfd};
      const bool filesystem = path_[0] != '@';
      if (filesystem) {
        checkFilesystemPath(path_, ctx);
        removeOwnSocket(path_, ctx);
      }
      if (::bind(lfd, reinterpret_cast<sockaddr *>(&addr), len) != 0)
        PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": bind"));
      if (::listen(lfd, SOMAXCONN) != 0)
        PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": listen"));
      acceptPeers(lfd, Deadline{deadline}, ctx);
      if (filesystem)
        removeOwnSocket(path_, ctx);
    } else {
      joinRoot(&addr, len, Deadline{deadline}, ctx);
    }
  } catch (...) {
    closeAll();
    throw;
  }
}

void UnixSocketBootstrap::acceptPeers(int lfd, const Deadline &until, const std::string &ctx) {
  const Clock::time_point deadline = until.at;
  peers_.assign(size_, -1);
  std::string rejected;  // what was dropped, for the timeout message
  const auto reject = [&](int fd, const std::string &why) {
    ::close(fd);
    std::fprintf(stderr, "purlin bootstrap: %s: dropped a connection: %s\n", ctx.c_str(), why.c_str());
    if (rejected.size() < 400) rejected += (rejected.empty() ? "" : "; ") + why;
  };
  // A connection whose handshake is under way: rank 0's nonce, its hello
  // so far, and when it is dropped if the hello is not complete.
  struct Pending {
    int fd;
    Clock::time_point by;
    unsigned char nonce[16];
    Hello hello;
    std::size_t got;
  };
  std::vector<Pending> pending;
  int accepted = 0;
  // Checks a complete hello; on success the connection is rank h.rank's.
  const auto finish = [&](Pending &c) {
    const Hello &h = c.hello;
    const detail::Digest want = proof(cookie_, "PEER", c.nonce, h.nonce, h.rank, h.size);
    if (h.magic != kMagic)
      return reject(c.fd, "not a purlin peer (bad magic)");
    if (!detail::equalConstantTime(h.mac, want.data(), want.size()))
      return reject(c.fd, "a hello without proof of this job's secret");
    if (h.size != size_)
      return reject(c.fd, "a peer of world size " + std::to_string(h.size) + ", expected " + std::to_string(size_));
    if (h.rank < 1 || h.rank >= size_ || peers_[h.rank] != -1)
      return reject(c.fd, "rank " + std::to_string(h.rank) + " (out of range or already connected)");
    Welcome w{kMagic, {}};
    const detail::Digest mine = proof(cookie_, "ROOT", c.nonce, h.nonce, h.rank, h.size);
    std::memcpy(w.mac, mine.data(), mine.size());
    try {
      sendAll(c.fd, &w, sizeof w, std::min(deadline, Clock::now() + std::chrono::milliseconds(kHelloMs)),
              ctx + ": answering rank " + std::to_string(h.rank));
    } catch (const Error &e) {
      return reject(c.fd, e.what());
    }
    peers_[h.rank] = c.fd;
    ++accepted;
  };
  while (accepted < size_ - 1) {
    // The deadline holds however many strangers keep connecting.
    if (msLeft(deadline) == 0) {
      for (Pending &c : pending) reject(c.fd, "no hello by rank 0's deadline");
      PURLIN_THROW(Status::BootstrapError,
                   ctx + ": timed out waiting for " + std::to_string(size_ - 1 - accepted) + " of " +
                       std::to_string(size_ - 1) + " peers to connect" +
                       (rejected.empty() ? std::string() : " (dropped: " + rejected + ")"));
    }
    // Drop the handshakes past their own deadline.
    const auto now = Clock::now();
    for (std::size_t i = 0; i < pending.size();)
      if (pending[i].by <= now) {
        reject(pending[i].fd, std::string("no hello within ") + std::to_string(kHelloMs) +
                                  " ms (a rank of this job dropped here fails at its first exchange)");
        pending.erase(pending.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    auto wakeAt = deadline;
    std::vector<pollfd> fds{{lfd, POLLIN, 0}};
    for (const Pending &c : pending) {
      fds.push_back({c.fd, POLLIN, 0});
      wakeAt = std::min(wakeAt, c.by);
    }
    const int r = ::poll(fds.data(), fds.size(), std::max(1, msLeft(wakeAt)));
    if (r < 0 && errno != EINTR)
      PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": poll"));
    if (r <= 0) continue;
    // Hello bytes of the connections under way.
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Pending &c = pending[i - 1];
      const ssize_t n = ::recv(c.fd, reinterpret_cast<char *>(&c.hello) + c.got, sizeof c.hello - c.got, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) {
        reject(c.fd, n == 0 ? "closed before its hello" : sysError("recv"));
        c.fd = -1;
        continue;
      }
      c.got += std::size_t(n);
      if (c.got == sizeof c.hello) {
        finish(c);
        c.fd = -1;  // rank h.rank's now, or closed
      }
    }
    pending.erase(std::remove_if(pending.begin(), pending.end(), [](const Pending &c) { return c.fd < 0; }),
                  pending.end());
    // New connections: each gets rank 0's challenge at once.
    if (fds[0].revents == 0) continue;
    for (int burst = 0; burst < 64; ++burst) {  // then back to the deadlines: a flood never ends
      int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) break;  // try again at the next poll
        PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": accept"));
      }
      uid_t uid = 0;
      if (!peerUid(fd, uid) || uid != ::geteuid()) {
        reject(fd, "a process of another user (uid " + std::to_string(uid) + ")");
        continue;
      }
      if (pending.size() >= kMaxPendingHandshakes) {
        reject(fd, "too many unfinished handshakes at once");
        continue;
      }
      Pending c{fd, Clock::now() + std::chrono::milliseconds(kHelloMs), {}, {}, 0};
      fillRandom(c.nonce, sizeof c.nonce);
      Challenge ch{kMagic, kProtocol, {}};
      std::memcpy(ch.nonce, c.nonce, sizeof c.nonce);
      if (::send(fd, &ch, sizeof ch, MSG_NOSIGNAL | MSG_DONTWAIT) != ssize_t(sizeof ch)) {
        reject(fd, "could not send the challenge");
        continue;
      }
      pending.push_back(c);
    }
  }
  for (Pending &c : pending) reject(c.fd, "every rank of the job had connected");
}

void UnixSocketBootstrap::joinRoot(const void *address, unsigned addressBytes, const Deadline &until,
                                   const std::string &ctx) {
  const Clock::time_point deadline = until.at;
  for (;;) {
    fd_ = makeSocket(true);
    if (::connect(fd_, static_cast<const sockaddr *>(address), addressBytes) == 0)
      break;
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN && err != EINTR) {
      errno = err;
      PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": connect"));
    }
    if (msLeft(deadline) == 0)
      PURLIN_THROW(Status::BootstrapError,
                   ctx + ": timed out after " + std::to_string(timeoutMs_) +
                       " ms connecting to rank 0");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  uid_t uid = 0;
  if (!peerUid(fd_, uid) || uid != ::geteuid())
    PURLIN_THROW(Status::BootstrapError, ctx + ": the listener belongs to another user (uid " +
                                             std::to_string(uid) + "): not sending it anything");
  Challenge ch{};
  recvAll(fd_, &ch, sizeof ch, deadline, ctx + ": reading rank 0's challenge");
  if (ch.magic != kMagic || ch.protocol != kProtocol)
    PURLIN_THROW(Status::BootstrapError, ctx + ": the listener is not a purlin rank 0 of this version");
  Hello h{kMagic, rank_, size_, {}, {}};
  fillRandom(h.nonce, sizeof h.nonce);
  const detail::Digest mine = proof(cookie_, "PEER", ch.nonce, h.nonce, rank_, size_);
  std::memcpy(h.mac, mine.data(), mine.size());
  sendAll(fd_, &h, sizeof h, deadline, ctx + ": sending hello");
  Welcome w{};
  recvAll(fd_, &w, sizeof w, deadline, ctx + ": reading rank 0's answer");
  const detail::Digest want = proof(cookie_, "ROOT", ch.nonce, h.nonce, rank_, size_);
  if (w.magic != kMagic || !detail::equalConstantTime(w.mac, want.data(), want.size()))
    PURLIN_THROW(Status::BootstrapError, ctx + ": the listener does not prove this job's secret (another job, or "
                                               "a process that took the rendezvous name first): not joining it");
}

UnixSocketBootstrap::~UnixSocketBootstrap() { closeAll(); }

void UnixSocketBootstrap::closeAll() noexcept {
  std::lock_guard<std::mutex> lock(abort_->fds);
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  for (int &fd : peers_) {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
}

void UnixSocketBootstrap::abort() noexcept {
  abort_->aborted = true;
  std::lock_guard<std::mutex> lock(abort_->fds);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  for (int fd : peers_)
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

void UnixSocketBootstrap::allGather(const void *mine, void *all,
                                    std::size_t bytes) {
  auto *out = static_cast<unsigned char *>(all);
  if (bytes)
    std::memmove(out + bytes * rank_, mine, bytes);
  if (size_ == 1)
    return;
  if (abort_->aborted)
    PURLIN_THROW(Status::Aborted, "bootstrap allGather (rank " + std::to_string(rank_) + "): aborted on this rank");
  try {
    exchange(out, mine, bytes);
  } catch (const Error &e) {
    if (abort_->aborted) PURLIN_THROW(Status::Aborted, std::string(e.what()) + " (aborted on this rank)");
    throw;
  }
}

void UnixSocketBootstrap::exchange(unsigned char *out, const void *mine, std::size_t bytes) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  const std::string ctx = "bootstrap allGather (rank " + std::to_string(rank_) +
                          ", " + std::to_string(bytes) + " bytes)";
  if (rank_ == 0) {
    if (peers_.empty() || fd_ == -2)
      PURLIN_THROW(Status::BootstrapError, ctx + ": the bootstrap is closed after an earlier failure");
    try {
      for (int p = 1; p < size_; ++p) {
        const std::string from = ctx + ": receiving from rank " + std::to_string(p);
        Header h{};
        recvAll(peers_[p], &h, sizeof h, deadline, from);
        if (h.magic != kMagic || h.rank != p || h.bytes != bytes)
          PURLIN_THROW(Status::BootstrapError,
                       from + ": rank " + std::to_string(p) + " gathers " +
                           std::to_string(h.bytes) +
                           " bytes (all ranks must gather the same count)");
        recvAll(peers_[p], out + bytes * p, bytes, deadline, from);
      }
      for (int p = 1; p < size_; ++p)
        sendAll(peers_[p], out, bytes * size_, deadline,
                ctx + ": sending to rank " + std::to_string(p));
    } catch (...) {
      closeAll(); // peers see the connection close instead of waiting
      fd_ = -2;
      throw;
    }
  } else {
    if (fd_ < 0)
      PURLIN_THROW(Status::BootstrapError, ctx + ": the bootstrap is closed after an earlier failure");
    try {
      Header h{kMagic, rank_, bytes};
      sendAll(fd_, &h, sizeof h, deadline, ctx + ": sending to rank 0");
      sendAll(fd_, mine, bytes, deadline, ctx + ": sending to rank 0");
      recvAll(fd_, out, bytes * size_, deadline, ctx + ": receiving from rank 0");
      if (bytes)
        std::memmove(out + bytes * rank_, mine, bytes);
    } catch (...) {
      closeAll();
      throw;
    }
  }
}

} // namespace purlin
