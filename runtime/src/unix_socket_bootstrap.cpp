/// @file unix_socket_bootstrap.cpp
/// @brief UnixSocketBootstrap: a star rendezvous over a Unix-domain stream
/// socket. Rank 0 listens and accepts size-1 peers, each of which introduces
/// itself with a Hello; allGather sends every contribution to rank 0, which
/// returns the concatenation. Every blocking step is bounded by a deadline.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "purlin/host/bootstrap.h"

namespace purlin {
namespace {

constexpr uint32_t kMagic = 0x504c4e42; // "PLNB"

/// First message of a connecting rank.
struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t size;
};

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

int makeSocket() {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    PURLIN_THROW(Status::BootstrapError, sysError("socket(AF_UNIX)"));
  return fd;
}

} // namespace

UnixSocketBootstrap::UnixSocketBootstrap(std::string path, int rank, int size,
                                         int timeoutMs)
    : path_(std::move(path)), rank_(rank), size_(size), timeoutMs_(timeoutMs) {
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
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  const std::string ctx = "bootstrap rank " + std::to_string(rank_) + " on '" + path_ + "'";
  try {
    if (rank_ == 0) {
      int lfd = makeSocket();
      struct Closer { int fd; ~Closer() { ::close(fd); } } closer{lfd};
      const bool filesystem = path_[0] != '@';
      if (filesystem)
        ::unlink(path_.c_str());
      if (::bind(lfd, reinterpret_cast<sockaddr *>(&addr), len) != 0)
        PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": bind"));
      if (::listen(lfd, size_) != 0)
        PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": listen"));
      peers_.assign(size_, -1);
      for (int accepted = 0; accepted < size_ - 1;) {
        waitFd(lfd, POLLIN, deadline,
               ctx + ": waiting for " + std::to_string(size_ - 1 - accepted) +
                   " of " + std::to_string(size_ - 1) + " peers to connect");
        int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EINTR || errno == EAGAIN)
            continue;
          PURLIN_THROW(Status::BootstrapError, sysError(ctx + ": accept"));
        }
        Hello h{};
        try {
          recvAll(fd, &h, sizeof h, deadline, ctx + ": reading a peer's hello");
        } catch (...) {
          ::close(fd);
          throw;
        }
        if (h.magic != kMagic || h.size != size_ || h.rank < 1 ||
            h.rank >= size_ || peers_[h.rank] != -1) {
          ::close(fd);
          PURLIN_THROW(Status::BootstrapError,
                       ctx + ": bad hello (rank " + std::to_string(h.rank) +
                           ", size " + std::to_string(h.size) +
                           "): wrong world size, duplicate rank or not a purlin peer");
        }
        peers_[h.rank] = fd;
        ++accepted;
      }
      if (filesystem)
        ::unlink(path_.c_str());
    } else {
      for (;;) {
        fd_ = makeSocket();
        if (::connect(fd_, reinterpret_cast<sockaddr *>(&addr), len) == 0)
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
      Hello h{kMagic, rank_, size_};
      sendAll(fd_, &h, sizeof h, deadline, ctx + ": sending hello");
    }
  } catch (...) {
    closeAll();
    throw;
  }
}

UnixSocketBootstrap::~UnixSocketBootstrap() { closeAll(); }

void UnixSocketBootstrap::closeAll() noexcept {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  for (int &fd : peers_) {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
}

void UnixSocketBootstrap::allGather(const void *mine, void *all,
                                    std::size_t bytes) {
  auto *out = static_cast<unsigned char *>(all);
  if (bytes)
    std::memmove(out + bytes * rank_, mine, bytes);
  if (size_ == 1)
    return;
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
