#include "rl/progress_log.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/progress_line.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::rl {
double training_eta_seconds(int64_t step, int64_t max_steps, int64_t eval_every, double rate,
                            double mean_evaluation_s) {
  if (step >= max_steps) return 0;
  // From `step` itself on: its line is written before the evaluation of its step.
  const int64_t due = evaluations_from(step, max_steps, eval_every);
  const double training_s = io::eta_seconds(step, max_steps, rate);
  return training_s < 0 ? -1 : training_s + due * mean_evaluation_s;
}

namespace {

// Each row's training seconds: its steps at its window's rate (in-line evaluations left out);
// negative where a row has no rate (a file of an older minrnn).
double trained_seconds(const std::vector<MetricsRow>& rows, size_t from) {
  double seconds = 0;
  for (size_t i = from; i < rows.size(); ++i) {
    if (rows[i].steps_per_s <= 0) return -1;
    seconds += (rows[i].step - (i > 0 ? rows[i - 1].step : 0)) / rows[i].steps_per_s;
  }
  return seconds;
}

}  // namespace

double training_pace(const std::vector<MetricsRow>& rows) {
  if (rows.empty()) return 0;
  const MetricsRow& last = rows.back();
  if (trained_seconds(rows, 0) < 0)  // the wall pace: evaluations and start-up in
    return last.elapsed_s > 0 && last.step > 0 ? last.step / last.elapsed_s : 0;
  const double after_first_s = trained_seconds(rows, 1);
  return rows.size() > 1 && after_first_s > 0 ? (last.step - rows.front().step) / after_first_s
                                              : last.steps_per_s;
}

double training_eta_seconds(const std::vector<MetricsRow>& rows, int64_t max_steps,
                            int64_t eval_every) {
  const double rate = training_pace(rows);
  if (rate <= 0) return -1;
  const MetricsRow& last = rows.back();
  const double trained_s = trained_seconds(rows, 0);
  if (trained_s < 0) return training_eta_seconds(last.step, max_steps, 0, rate, 0);
  const int64_t evaluations = eval_every > 0 ? (last.step - 1) / eval_every : 0;
  const double mean_evaluation_s =
      evaluations > 0 ? std::max(0.0, last.elapsed_s - trained_s) / evaluations : 0;
  return training_eta_seconds(last.step, max_steps, eval_every, rate, mean_evaluation_s);
}

ProgressLog::ProgressLog(const std::string& run_dir, int64_t first_step, const TrainConfig& config,
                         bool quiet, bool labelled)
    : out_(RunFiles(run_dir).metrics.string()),
      events_(run_dir, first_step, config),
      max_steps_(config.max_steps),
      eval_every_(config.eval_every),
      quiet_(quiet),
      label_(labelled ? run_dir + ": " : ""),
      // elapsed_s runs on across resumes (the metrics.csv rows after the checkpoint are gone).
      elapsed_before_(
          first_step > 0 ? last_metrics_row(out_.path()).value_or(MetricsRow{}).elapsed_s : 0) {}

void ProgressLog::evaluated(int64_t step, double in_line_seconds) {
  events_.eval_at(step);
  evaluation_seconds_ += in_line_seconds;
  ++evaluations_;
  window_start_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(in_line_seconds));
}

void ProgressLog::evaluating(int64_t step, const std::string& progress) const {
  if (!quiet_)
    io::ProgressLine::on_stderr().update(label_ + "evaluating step " + std::to_string(step) + ": " +
                                         progress);
}

void ProgressLog::close_line() const {
  if (!quiet_) io::ProgressLine::on_stderr().close();
}

void ProgressLog::after(int64_t step, int64_t log_every,
                        const std::function<StepStats()>& read_stats) {
  ++window_steps_;
  if (step % log_every != 0 && step != max_steps_) return;
  const StepStats stats = read_stats();
  const auto now = std::chrono::steady_clock::now();
  const double window = std::chrono::duration<double>(now - window_start_).count();
  const double rate = window_steps_ / std::max(window, 1e-9);
  const double elapsed = elapsed_before_ + std::chrono::duration<double>(now - start_).count();
  const RunRow row{step,
                   {static_cast<double>(step), stats.loss, stats.lr, stats.grad_norm, rate,
                    elapsed}};  // metrics_columns(), in order
  const std::string line = row_line(row, "%g");
  out_.append(line);
  events_.metrics_row(line);
  if (!quiet_) {
    const double mean_evaluation_s = evaluations_ > 0 ? evaluation_seconds_ / evaluations_ : 0;
    const std::string eta = io::duration_text(
        training_eta_seconds(step, max_steps_, eval_every_, rate, mean_evaluation_s));
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s",
                  static_cast<long long>(step), static_cast<long long>(max_steps_), stats.loss,
                  stats.lr, rate, eta.c_str());
    io::ProgressLine::on_stderr().update(label_ + line);
  }
  window_start_ = now;
  window_steps_ = 0;
}

}  // namespace minrnn::rl
