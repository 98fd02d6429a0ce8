#include "fetch/progress.h"

#include <unistd.h>

#include <cmath>

namespace minrnn::fetch {

ProgressStyle progress_style_for(FILE* out) {
  return ::isatty(::fileno(out)) ? ProgressStyle::kTerminal : ProgressStyle::kLog;
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) value /= 1000, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

Progress::Progress(const ProgressOptions& options, std::string label, int64_t total, int64_t start)
    : options_(options),
      label_(std::move(label)),
      total_(total),
      start_(start),
      done_(start),
      began_(std::chrono::steady_clock::now()),
      last_print_(began_),
      line_(options.out, options.style == ProgressStyle::kTerminal) {}

void Progress::update(int64_t done) {
  done_ = done;
  if (options_.style == ProgressStyle::kNone) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  // A terminal line may move 5 times a second; a log gets a line every log_every_s.
  const double every = options_.style == ProgressStyle::kTerminal ? 0.2 : options_.log_every_s;
  if (since < every) return;
  last_print_ = now;
  print(done, false);
}

void Progress::finish() {
  if (options_.style == ProgressStyle::kTerminal && printed_) {
    print(done_, true);
    line_.close();
  }
}

void Progress::print(int64_t done, bool final) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  const double rate = seconds > 0 ? double(done - start_) / seconds : 0;
  std::string line = label_ + "  " + human_bytes(done);
  if (total_ > 0) {
    char percent[16];
    std::snprintf(percent, sizeof percent, " (%.0f%%)", 100.0 * double(done) / double(total_));
    line += " of " + human_bytes(total_) + percent;
  }
  line += ", " + human_bytes(int64_t(rate)) + "/s";
  if (total_ > 0 && rate > 0 && !final) {
    line += ", ETA " + io::duration_text(std::ceil(io::eta_seconds(done, total_, rate)));
  }
  line_.update(line);
  printed_ = true;
}

}  // namespace minrnn::fetch
