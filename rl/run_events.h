// The TensorBoard view of a run directory (`tensorboard --logdir runs/` shows runs, and a sweep's,
// as they train): every row of metrics.csv and evals.csv as scalars at the row's step —
//   train/loss, train/lr, train/grad_norm, train/steps_per_s                        (metrics.csv)
//   eval/return_mean, eval/return_std, eval/normalized_return_mean, eval/normalized_return_std
//                                                                                    (evals.csv)
// — with the values the row's text holds, so the two agree to float32 rounding. Each file also
// names the run's hyper-parameters for TensorBoard's HParams dashboard (hparams_of), the run a
// session in the group of its config's other seeds, and says when the run finished.
//
// The CSV files stay the record that resume, reports and sweeps read. So an events file that
// cannot be written (a full disk) is reported once on stderr and training goes on without it; the
// CSV files fail as they always do (io::AppendFile), naming the file.
//
// Each training session (a first run, a resume, an extension) writes a new events file. A resume
// drops the CSV rows past its checkpoint (and an extension those of the old last step off the
// cadence), and TensorBoard must drop their points too: its Python reader (EventAccumulator,
// `--load_fast=false`) drops, at a SessionLog START, the points read so far at steps >= the
// START's; its fast loader (the default data server) ignores START and drops, per tag, the points
// at steps >= each new point's. So the file opens with a START at the step of the earlier of the
// two CSV files' last rows, then writes again every row from that step on: both readers are left
// with the rows the CSV files keep, each at its own time (elapsed_s before the last row's). For the
// fast loader, a tag none of whose rows were kept keeps its old points until the resumed run
// writes the tag at or before their steps, which it may never do: the final evaluation of a run
// `--extend` moves on, with no evaluation kept before it (eval_every 0), stays in its default view
// beside the new final one, where evals.csv and the Python reader have dropped it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/tensorboard.h"
#include "rl/config.h"
#include "rl/run_dir.h"

namespace minrnn::rl {

// The config's keys that decide what a run learns, as the HParams dashboard's columns (not the
// device, how often the run reports, nor max_steps, which --extend changes), numbers where the
// value is one; `group` gets them all but the seed: a configuration, whose seeds the dashboard
// shows as one row.
std::vector<io::HParam> hparams_of(const TrainConfig& config, std::string* group);

class RunEvents {
 public:
  // A new events file in `run_dir` for training of `config` that goes on from `start_step` (0:
  // from scratch).
  RunEvents(const std::string& run_dir, int64_t start_step, const TrainConfig& config);
  // A line just appended to metrics.csv (row_line of metrics_columns()).
  void metrics_row(const std::string& line);
  // The row evals.csv holds for `step`, if any: call after an evaluation has appended it.
  void eval_at(int64_t step);
  // The run reached its last step (done.json written): the HParams dashboard's session ends.
  void finished();
  // The run failed (a non-finite loss, an error): the session ends, marked a failure.
  void failed();

 private:
  // Stamped `wall_time` (seconds since the epoch), else now.
  void write_row(const RunRow& row, bool eval, std::optional<double> wall_time = {});
  void end_session(bool success);
  void fail(const std::string& why);
  std::string run_dir_;
  std::optional<io::EventFileWriter> writer_;  // empty after a failure
};

}  // namespace minrnn::rl
