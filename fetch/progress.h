// How a download shows it is moving: on a terminal, one line rewritten in place (bytes, rate,
// ETA); in a log (stderr redirected, a Slurm job, a test), a plain line every ~10 s, so logs stay
// readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "io/progress_line.h"

namespace minrnn::fetch {

enum class ProgressStyle { kNone, kTerminal, kLog };

struct ProgressOptions {
  ProgressStyle style = ProgressStyle::kNone;
  double log_every_s = 10;  // kLog: seconds between lines
  FILE* out = stderr;
};

// kTerminal when `out` is a terminal, else kLog.
ProgressStyle progress_style_for(FILE* out);

// "1.5 MB", "152.8 MB" (decimal units, as the sizes servers and tables give).
std::string human_bytes(int64_t bytes);
// "2", "0.25": a duration in seconds as an option gave it.
std::string seconds_text(double seconds);

class Progress {
 public:
  // `label` names the file; `total` bytes expected (-1 unknown); `start` bytes already there (a
  // resumed .part), not counted in the rate.
  Progress(const ProgressOptions& options, std::string label, int64_t total, int64_t start);
  // Where the file is now (bytes from its beginning); prints when it is time to.
  void update(int64_t done);
  // The last in-place line gets its newline.
  void finish();

 private:
  void print(int64_t done, bool final);
  ProgressOptions options_;
  std::string label_;
  int64_t total_, start_, done_;
  std::chrono::steady_clock::time_point began_, last_print_;
  io::ProgressLine line_;
  bool printed_ = false;
};

}  // namespace minrnn::fetch
