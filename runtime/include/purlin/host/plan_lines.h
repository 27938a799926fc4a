/// @file plan_lines.h
/// @brief The plan log's memory (CommOptions::logPlans): one line per
/// distinct call shape (snac::planShapeKey), and the line of the call made
/// last, whether its shape was new or seen before (Communicator::lastPlan:
/// what coll_bench records beside each row).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace purlin::detail {

class PlanLines {
 public:
  /// The call of shape `key` is being planned: true when the shape is new
  /// (the caller then describes it and calls record); false when seen, and
  /// last() is then that shape's line.
  bool note(uint64_t key) {
    const auto it = lines_.find(key);
    if (it == lines_.end()) return true;
    last_ = &it->second;
    return false;
  }
  /// The line of the new shape `key` (after note(key) returned true); last()
  /// is then this line.
  const std::string& record(uint64_t key, std::string line) {
    last_ = &(lines_[key] = std::move(line));
    return *last_;
  }
  /// The line of the call planned last; "" before the first.
  const std::string& last() const { return last_ ? *last_ : empty_; }

 private:
  std::unordered_map<uint64_t, std::string> lines_;  // node-based: the addresses stay valid
  const std::string* last_ = nullptr;
  std::string empty_;
};

} // namespace purlin::detail
