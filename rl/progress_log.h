// What a run reports as it trains: a metrics.csv row, its TensorBoard scalars (rl/run_events.h)
// and the progress line (steps, loss, lr, rate, ETA) every log_every steps, and each evaluation's
// scalars.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "rl/run_dir.h"
#include "rl/run_events.h"

namespace minrnn::rl {

// What one optimizer step reports.
struct StepStats {
  double loss = 0, lr = 0, grad_norm = 0;
};

// Seconds from `step` to `max_steps` at `rate` steps/s, and the evaluations still due from `step`
// on, its own included (every eval_every steps before the last, and one at the last:
// rl/training_run.cpp) at `mean_evaluation_s` each (0 before one has run). Negative while `rate`
// is not known (<= 0).
double training_eta_seconds(int64_t step, int64_t max_steps, int64_t eval_every, double rate,
                            double mean_evaluation_s);
// The same ETA from a run's metrics.csv `rows` (rl::metrics_rows; none: negative), for a reader
// of the run dir (a sweep's progress line): the rate is the training pace after the first row
// (steps over the seconds their rows' steps_per_s account for), which leaves out the start-up the
// first row's window holds (CUDA graph capture, GEMM tuning: tens of seconds on a GPU), and the
// mean evaluation is the elapsed_s that no row's training accounts for, over the evaluations
// before the last row. A single row's rate is its own, start-up and all.
double training_eta_seconds(const std::vector<MetricsRow>& rows, int64_t max_steps,
                            int64_t eval_every);
// That training pace of `rows` in steps/s (0 where none is known): after the first row where
// there are two, of the one row otherwise, the wall pace for a file of an older minrnn (no
// steps_per_s column). Also what a resumed sweep's ETA takes from its runs' earlier rows.
double training_pace(const std::vector<MetricsRow>& rows);

class ProgressLog {
 public:
  // For training of `config` in `run_dir` that goes on from `first_step`. `labelled`: its lines
  // start with the run dir (one of a pack's runs, whose lines share the one progress line).
  ProgressLog(const std::string& run_dir, int64_t first_step, const TrainConfig& config, bool quiet,
              bool labelled = false);
  // After step `step` (1-based): a row and a line every log_every steps and at the last one, of
  // the stats `read_stats` returns (called only then: on CUDA it waits for the device).
  void after(int64_t step, int64_t log_every, const std::function<StepStats()>& read_stats);
  // After the evaluation of `step` appended its evals.csv row. `in_line_seconds`: how long it held
  // the training up, which the next row's steps/s leaves out and the ETA counts once per
  // evaluation still to come (at their mean here).
  void evaluated(int64_t step, double in_line_seconds = 0);
  // An evaluation of the agent at `step`, still running, has got as far as `progress` says.
  void evaluating(int64_t step, const std::string& progress) const;
  // The run reached its last step (TensorBoard's HParams dashboard marks it done).
  void finished() { events_.finished(); }
  // The run failed: its HParams session ends as a failure.
  void failed() { events_.failed(); }
  // Ends the progress line a terminal shows in place (io/progress_line.h).
  void close_line() const;

 private:
  io::AppendFile out_;
  RunEvents events_;
  int64_t max_steps_, eval_every_;
  bool quiet_;
  std::string label_;  // "" or "RUN_DIR: "
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point window_start_ = start_;
  double elapsed_before_ = 0;  // elapsed_s of the row this process resumed after
  int64_t window_steps_ = 0;
  double evaluation_seconds_ = 0;  // how long this process's evaluations held the training up
  int evaluations_ = 0;
};

}  // namespace minrnn::rl
