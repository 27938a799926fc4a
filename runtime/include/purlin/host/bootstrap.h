/// @file bootstrap.h
/// @brief Bootstrap: the rendezvous of the ranks of one communicator, reduced
/// to one collective call, allGather(bytes). Implementations: in-process
/// (threads of one process), Unix-domain socket (one process per GPU), and an
/// existing NCCL communicator.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "purlin/host/error.h"

typedef struct ncclComm *ncclComm_t;

namespace purlin {

/// Collective rendezvous between `size()` ranks. Every rank must call the
/// same sequence of collectives with the same byte counts.
class Bootstrap {
public:
  virtual ~Bootstrap();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Gathers `bytes` from every rank: `all` receives size()*bytes, rank r's
  /// contribution at offset r*bytes. Throws Error(BootstrapError) saying
  /// what and where on failure, peer disconnect or timeout.
  virtual void allGather(const void *mine, void *all, std::size_t bytes) = 0;
  /// Returns once every rank has called barrier() (an allGather of 1 byte).
  void barrier();
  /// From any thread: this rank's current and later allGather throw
  /// Error(Aborted) at once instead of waiting out the timeout, and the
  /// other ranks' fail at once too (their connections close, or the group
  /// is poisoned). Communicator::abort() calls it while one of its host
  /// exchanges is in progress (the bootstrap is unusable afterwards).
  /// Default: nothing (a
  /// bootstrap with no way to interrupt its waits, NcclBootstrap).
  virtual void abort() noexcept {}
};

/// A group of `n` ranks that are threads of one process. bootstrap(r) is
/// called once per rank (from any thread); each rank then uses its Bootstrap
/// from its own thread. Bootstraps share the group's state, so they may
/// outlive the InProcessGroup object. A rank that waits longer than
/// `timeoutMs` for the others, or a byte-count mismatch, fails the group:
/// every rank's current and later allGather throws Error(BootstrapError).
class InProcessGroup {
public:
  explicit InProcessGroup(int n, int timeoutMs = 60000);
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup &) = delete;
  InProcessGroup &operator=(const InProcessGroup &) = delete;
  int size() const;
  /// The Bootstrap of rank `rank`; throws Error(InvalidArgument) if `rank`
  /// is out of range.
  std::unique_ptr<Bootstrap> bootstrap(int rank);

  struct State;

private:
  std::shared_ptr<State> state_;
};

/// Rendezvous over a Unix-domain stream socket. Rank 0 listens on `path`
/// (a leading '@' selects the Linux abstract namespace; otherwise a
/// filesystem path, which must lie in a private directory: owned by this
/// user, no group or other permissions), ranks 1..size-1 connect (retrying
/// until `timeoutMs`). allGather: every rank sends its bytes to rank 0,
/// rank 0 sends the concatenation back. Every blocking step is bounded by
/// `timeoutMs`.
///
/// Who may join: a connecting process must run as the same user
/// (SO_PEERCRED, checked both ways) and both ends must prove `cookie`, the
/// job's secret (32 hex digits; purlin-launch draws one and passes it as
/// PURLIN_BOOTSTRAP_COOKIE; required when size > 1), by challenge and
/// response (HMAC-SHA-256 of both ends' nonces; the secret is never sent,
/// so a process that takes the rendezvous name first learns nothing and is
/// refused by the ranks). Rank 0 runs every connection's handshake at once
/// and closes and logs (on stderr) every connection that fails a check,
/// sends no hello within a second, or claims a rank already taken or another
/// world size, and keeps waiting for the real peers; its timeout message
/// lists what it rejected.
/// A filesystem socket is removed only if it is a socket owned by this
/// user (before binding, and after every peer connected).
class UnixSocketBootstrap : public Bootstrap {
public:
  UnixSocketBootstrap(std::string path, int rank, int size,
                      int timeoutMs = 60000, const std::string &cookie = "");
  ~UnixSocketBootstrap() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allGather(const void *mine, void *all, std::size_t bytes) override;
  /// Shuts this rank's connections down (poll wakes up; peers see them close).
  void abort() noexcept override;

private:
  std::string path_;
  int rank_;
  int size_;
  int timeoutMs_;
  unsigned char cookie_[16] = {};  ///< the job's secret
  /// The abort flag and the lock of the descriptors (a descriptor is not
  /// shut down after it is closed), and a deadline: defined in
  /// unix_socket_bootstrap.cpp, so that this header, which every
  /// generated kernel unit includes, pulls in no <atomic>, <mutex> or
  /// <chrono> (0.3-0.4 s of nvcc per unit).
  struct AbortState;
  struct Deadline;
  std::unique_ptr<AbortState> abort_;
  int fd_ = -1;            ///< ranks > 0: connection to rank 0
  std::vector<int> peers_; ///< rank 0: connection to rank p (peers_[0] unused)
  void closeAll() noexcept;
  /// allGather's exchange with rank 0 (size > 1, not aborted).
  void exchange(unsigned char *out, const void *mine, std::size_t bytes);
  /// Rank 0: every peer's handshake on listening socket `lfd`.
  void acceptPeers(int lfd, const Deadline &until, const std::string &ctx);
  /// Ranks > 0: connect to rank 0 at `addr` and prove the secret both ways.
  void joinRoot(const void *address, unsigned addressBytes, const Deadline &until, const std::string &ctx);
};

/// Rendezvous through an existing NCCL communicator (not owned): allGather
/// runs ncclAllGather on a private stream of the current device, then copies
/// the result to the host. The communicator's device must be current.
/// Defined in purlin_runtime only where the build found NCCL
/// (PURLIN_WITH_NCCL; never in libpurlin.so).
class NcclBootstrap : public Bootstrap {
public:
  explicit NcclBootstrap(ncclComm_t comm);
  ~NcclBootstrap() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allGather(const void *mine, void *all, std::size_t bytes) override;

private:
  ncclComm_t comm_;
  int rank_ = 0;
  int size_ = 0;
  void *stream_ = nullptr; ///< cudaStream_t
};

/// The bootstrap described by the environment, as set by purlin-launch:
/// PURLIN_RANK, PURLIN_WORLD_SIZE, PURLIN_BOOTSTRAP (socket path) and
/// optionally PURLIN_BOOTSTRAP_TIMEOUT_MS and PURLIN_BOOTSTRAP_COOKIE. Where
/// neither PURLIN_RANK nor PURLIN_WORLD_SIZE is set but torchrun's RANK and
/// WORLD_SIZE are: those, on one node (LOCAL_WORLD_SIZE == WORLD_SIZE, else
/// Error(Unsupported)), with the user's PURLIN_BOOTSTRAP_COOKIE (required
/// for more than one rank) and PURLIN_BOOTSTRAP or else a rendezvous name
/// derived from the secret, MASTER_ADDR, MASTER_PORT and TORCHELASTIC_RUN_ID
/// (docs/bootstrap.md). Throws Error(InvalidArgument) naming the missing or
/// malformed variable.
std::unique_ptr<Bootstrap> bootstrapFromEnv();

/// The bound of every blocking step of a Unix-socket bootstrap the C ABI
/// and bootstrapFromEnv create: PURLIN_BOOTSTRAP_TIMEOUT_MS (1..2^30),
/// default 60000. Throws Error(InvalidArgument) if it is malformed.
int bootstrapTimeoutMs();

/// `bytes` bytes from the kernel's random source (getrandom) as 2*bytes
/// lower-case hex digits: job cookies and socket names. Throws
/// Error(Internal) if the source fails.
std::string randomHex(int bytes);

} // namespace purlin
