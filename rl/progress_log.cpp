#include "rl/progress_log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace minrnn::rl {
namespace {

std::string hms(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

ProgressLog::ProgressLog(const std::string& run_dir, int64_t first_step, int64_t max_steps,
                         bool quiet)
    : out_((std::filesystem::path(run_dir) / "metrics.csv").string()),
      events_(run_dir, first_step),
      max_steps_(max_steps),
      quiet_(quiet),
      tty_(isatty(STDERR_FILENO)) {}

void ProgressLog::close_line() const {
  if (!quiet_ && tty_) std::fprintf(stderr, "\n");
}

void ProgressLog::after(int64_t step, int64_t log_every,
                        const std::function<StepStats()>& read_stats) {
  ++window_steps_;
  if (step % log_every != 0 && step != max_steps_) return;
  const StepStats stats = read_stats();
  const auto now = std::chrono::steady_clock::now();
  const double window = std::chrono::duration<double>(now - window_start_).count();
  const double rate = window_steps_ / std::max(window, 1e-9);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::ostringstream row;
  row << step << ',' << stats.loss << ',' << stats.lr << ',' << stats.grad_norm << ',' << rate
      << ',' << elapsed << '\n';
  out_.append(row.str());
  events_.metrics_row(row.str());
  if (!quiet_) {
    std::fprintf(stderr, "%sstep %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s%s",
                 tty_ ? "\r" : "", static_cast<long long>(step), static_cast<long long>(max_steps_),
                 stats.loss, stats.lr, rate,
                 hms((max_steps_ - step) / std::max(rate, 1e-9)).c_str(), tty_ ? "   " : "\n");
  }
  window_start_ = now;
  window_steps_ = 0;
}

}  // namespace minrnn::rl
