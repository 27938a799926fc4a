/// @file in_process_bootstrap.cpp
/// @brief InProcessGroup: allGather between threads of one process through a
/// shared buffer, a mutex and a condition variable.
///
/// Round g: each rank copies its bytes into `gather` and waits; the last
/// arriver moves `gather` into `result` and bumps `generation`. A single
/// result buffer suffices: round g+1 can only complete after every rank has
/// arrived in it, i.e. after every rank has copied round g's result out.
/// A failure (byte-count mismatch, timeout) poisons the group: every rank
/// blocked in or later entering allGather throws the same message.
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "purlin/host/bootstrap.h"

namespace purlin {

struct InProcessGroup::State {
  explicit State(int n, int timeoutMs) : n(n), timeoutMs(timeoutMs) {}
  const int n;
  const int timeoutMs;
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t generation = 0;  ///< completed rounds
  int arrived = 0;          ///< ranks in the current round
  std::size_t bytes = 0;    ///< byte count of the current round
  std::vector<unsigned char> gather, result;
  std::vector<bool> taken;  ///< bootstrap(r) already handed out
  std::string failure;      ///< non-empty: the group is poisoned
};

namespace {

class InProcessBootstrap : public Bootstrap {
public:
  InProcessBootstrap(std::shared_ptr<InProcessGroup::State> s, int rank)
      : s_(std::move(s)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return s_->n; }

  void allGather(const void *mine, void *all, std::size_t bytes) override {
    auto &s = *s_;
    std::unique_lock lock(s.mutex);
    if (!s.failure.empty())
      PURLIN_THROW(aborted_ ? Status::Aborted : Status::BootstrapError, "in-process allGather: " + s.failure);
    if (s.arrived == 0) {
      s.bytes = bytes;
      s.gather.assign(bytes * s.n, 0);
    } else if (s.bytes != bytes) {
      poison(s, "rank " + std::to_string(rank_) + " gathers " +
                    std::to_string(bytes) + " bytes but another rank gathers " +
                    std::to_string(s.bytes));
      PURLIN_THROW(Status::BootstrapError, "in-process allGather: " + s.failure);
    }
    if (bytes)
      std::memcpy(s.gather.data() + bytes * rank_, mine, bytes);
    const uint64_t round = s.generation;
    if (++s.arrived == s.n) {
      s.result.swap(s.gather);
      s.arrived = 0;
      ++s.generation;
      s.cv.notify_all();
    } else {
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(s.timeoutMs);
      while (s.generation == round && s.failure.empty()) {
        if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout &&
            s.generation == round && s.failure.empty())
          poison(s, "rank " + std::to_string(rank_) + " timed out after " +
                        std::to_string(s.timeoutMs) + " ms waiting for " +
                        std::to_string(s.n - s.arrived) + " of " +
                        std::to_string(s.n) + " ranks");
      }
      if (s.generation == round)
        PURLIN_THROW(aborted_ ? Status::Aborted : Status::BootstrapError, "in-process allGather: " + s.failure);
    }
    if (bytes)
      std::memcpy(all, s.result.data(), bytes * s.n);
  }

  void abort() noexcept override {
    try {
      std::lock_guard lock(s_->mutex);
      poison(*s_, "rank " + std::to_string(rank_) + " aborted (Communicator::abort)");
      aborted_ = true;
    } catch (...) {
    }
  }

private:
  bool aborted_ = false;  ///< under the group's mutex
  static void poison(InProcessGroup::State &s, std::string why) {
    if (s.failure.empty())
      s.failure = std::move(why);
    s.cv.notify_all();
  }
  std::shared_ptr<InProcessGroup::State> s_;
  int rank_;
};

} // namespace

InProcessGroup::InProcessGroup(int n, int timeoutMs) {
  if (n < 1)
    PURLIN_THROW(Status::InvalidArgument,
                 "InProcessGroup size " + std::to_string(n) + " must be >= 1");
  if (timeoutMs < 1)
    PURLIN_THROW(Status::InvalidArgument, "InProcessGroup timeout must be >= 1 ms");
  state_ = std::make_shared<State>(n, timeoutMs);
  state_->taken.assign(n, false);
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::size() const { return state_->n; }

std::unique_ptr<Bootstrap> InProcessGroup::bootstrap(int rank) {
  std::lock_guard lock(state_->mutex);
  if (rank < 0 || rank >= state_->n)
    PURLIN_THROW(Status::InvalidArgument,
                 "InProcessGroup::bootstrap: rank " + std::to_string(rank) +
                     " is outside [0, " + std::to_string(state_->n) + ")");
  if (state_->taken[rank])
    PURLIN_THROW(Status::InvalidArgument,
                 "InProcessGroup::bootstrap: rank " + std::to_string(rank) +
                     " was already handed out");
  state_->taken[rank] = true;
  return std::make_unique<InProcessBootstrap>(state_, rank);
}

} // namespace purlin
