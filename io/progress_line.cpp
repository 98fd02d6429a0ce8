#include "io/progress_line.h"

#include <unistd.h>

namespace minrnn::io {

ProgressLine::ProgressLine(std::FILE* out, bool terminal)
    : out_(out), terminal_(terminal), period_(std::chrono::milliseconds(terminal ? 1000 : 10000)) {}

ProgressLine& ProgressLine::on_stderr() {
  static ProgressLine line(stderr, ::isatty(STDERR_FILENO) == 1);
  return line;
}

void ProgressLine::update(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_) {
    std::fprintf(out_, "\r%s\033[K", line.c_str());
    open_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::message(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_message(text);
}

void ProgressLine::message_once(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (said_once_.insert(text).second) write_message(text);
}

void ProgressLine::write_message(const std::string& text) {
  std::fprintf(out_, "%s%s\n", open_ ? "\n" : "", text.c_str());
  open_ = false;
  std::fflush(out_);
}

void ProgressLine::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) std::fputc('\n', out_);
  open_ = false;
  std::fflush(out_);
}

std::string duration_text(double s) {
  char buf[32];
  if (!(s >= 0) || s > 1e9) return "?";  // NaN, negative, or a rate near zero
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) % 3600 / 60);
  return buf;
}

double eta_seconds(double done, double total, double rate) {
  if (done >= total) return 0;
  if (!(rate > 0)) return -1;
  return (total - done) / rate;
}

}  // namespace minrnn::io
