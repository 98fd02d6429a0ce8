// What a run directory holds besides the training loop's own rows, and how a new `train()` call
// may take over a directory that already holds a run: resume it, extend it, or replace it.
#pragma once
#include <string>
#include <vector>

#include "rl/config.h"

namespace minrnn::rl {

// The files a run directory's training and evaluation write, relative to it: what --force
// removes. eval-*.json (ad-hoc `minrnn eval` results) and the *-step<N> files an extension keeps
// are matched by pattern.
const std::vector<std::string>& run_outputs();

// metrics.csv and evals.csv, whose rows start with their step. A torn last line (the writer was
// killed) is not a row.
// Keeps the rows of steps <= `step` (a resumed run redoes the rest), and the header line if any.
void truncate_rows(const std::string& csv, int64_t step, bool header);
bool has_row(const std::string& csv, int64_t step);
// The loss (second column) of metrics.csv's last row; 0 when it has none.
double last_logged_loss(const std::string& metrics_csv);

// Whether `wanted` is `stored` with a larger max_steps and nothing else changed: the one change
// that lets a run go on (`extend`).
bool only_max_steps_grows(const TrainConfig& stored, const TrainConfig& wanted);

enum class RunDirUse {
  kNew,       // nothing of a run there yet
  kResume,    // the same config: go on from the checkpoint
  kExtend,    // the same config but a larger max_steps, asked for with `extend`
  kFinished,  // `extend` asked, and the run is already finished at this config's max_steps
  kReplace,   // `force`: every output of the old run was removed
};

struct RunDirTakeover {
  RunDirUse use = RunDirUse::kNew;
  int64_t extended_from = 0;  // kExtend: the max_steps the run was trained to before
};

// Decides what `config` may do with `run_dir`, and prepares it. Without `force`, a finished run
// is never replaced and a run trained with another config is never continued: both throw
// std::runtime_error naming the directory and the keys that differ. The one exception is
// `extend` with a config that differs only by a larger max_steps: training goes on from the
// checkpoint, exactly as if the run had been started with the larger budget (its learning-rate
// schedule does not depend on max_steps). What the finished run reported stays beside it under its
// step: checkpoint.pt is copied to checkpoint-step<N>.pt, done.json and eval.json become
// done-step<N>.json and eval-step<N>.json. `extend` on a run already finished with this very
// config is kFinished, not an error, so that asking again (a requeued job) is harmless.
RunDirTakeover take_over_run_dir(const std::string& run_dir, const TrainConfig& config, bool force,
                                 bool extend);

}  // namespace minrnn::rl
