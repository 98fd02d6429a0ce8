// When a long job's loop updates its progress line: once a ProgressLine::period() (a second on a
// terminal, 10 s in a log) and at its end, however fast the loop checks. A log then reads a line
// per period, not one per thousand steps (collect's 400 000 sampled steps wrote 400 lines).
#pragma once
#include <chrono>

#include "io/progress_line.h"

namespace minrnn::io {

class ProgressPace {
 public:
  // `first_due`: the first check is due at once (a job that checks every N steps shows that it
  // has begun), else a period after now.
  explicit ProgressPace(const ProgressLine& line, bool first_due = false)
      : line_(line), first_due_(first_due) {}
  // True when the line is due: a period since the last time it was, or `end`.
  bool due(bool end) {
    const auto now = std::chrono::steady_clock::now();
    const bool first = first_due_;
    first_due_ = false;
    if (!end && !first && now - last_ < line_.period()) return false;
    last_ = now;
    return true;
  }

 private:
  const ProgressLine& line_;
  bool first_due_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace minrnn::io
