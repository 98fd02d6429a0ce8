// A long job's progress line: on a terminal one line rewritten in place; in a log (stderr sent to
// a file or a pipe: a sweep's train.log, a Slurm job, CI) each update a line of its own, so the
// log reads line by line and never holds carriage returns. A message between updates (an
// evaluation's result) gets a line of its own either way, below the line a terminal shows.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace minrnn::io {

class ProgressLine {
 public:
  // `terminal`: rewrite the line in place (carriage return, clear to the end of the line).
  ProgressLine(std::FILE* out, bool terminal);
  // The process's line on stderr, shared by whatever reports there (a training loop, and its
  // evaluations' results from another thread); a terminal where stderr is one.
  static ProgressLine& on_stderr();

  bool terminal() const { return terminal_; }
  // How often a long job updates the line: every second on a terminal, every 10 s in a log.
  std::chrono::milliseconds period() const { return period_; }
  void set_period(std::chrono::milliseconds period) { period_ = period; }  // tests
  // The job's state now.
  void update(const std::string& line);
  // A line of its own.
  void message(const std::string& text);
  // message(text) unless this line has said the same text already: what each of a pack's runs
  // would say alike (the device it chose, its environment) is said once.
  void message_once(const std::string& text);
  // Ends the line a terminal shows in place, if one shows (a log's lines are ended already).
  void close();

 private:
  void write_message(const std::string& text);  // under mutex_

  std::mutex mutex_;
  std::FILE* out_;
  bool terminal_;
  std::atomic<std::chrono::milliseconds> period_;
  bool open_ = false;  // a terminal's line written in place and not yet ended
  std::set<std::string> said_once_;
};

// A duration as every progress line writes its ETA and elapsed time: "42s", "12m07s", "3h05m".
std::string duration_text(double seconds);

// Seconds left at `rate` units a second with `done` of `total` units done: 0 once done reaches
// total, negative (duration_text says "?") while the rate is not known (<= 0).
double eta_seconds(double done, double total, double rate);

}  // namespace minrnn::io
