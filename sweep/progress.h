// How far a local sweep has come and how long it has left, as sweep/local_pool.cpp's lines say
// it (a training run's step, rate and ETA, the sweep's ETA; durations in words are
// io::duration_text's), and <out>/sweep_status.json, the sweep's own record of its runs' statuses.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace minrnn::sweep {

// Where a training run is: "hopper-medium/mingru/seed0 400/2000 (2.2 steps/s, ETA 12m07s)", from
// its metrics.csv: the last row's step and training rate, and the ETA the run's own progress line
// would say (rl::training_eta_seconds of its rows: start-up left out, evaluations due included);
// "… starting" before the first row.
std::string training_progress(const SweepRun& run);

// What is left of a sweep and how fast it went here: the ETA a finished run's line prints.
struct SweepPace {
  int64_t steps_left = 0;          // run-steps still to train, over every run not yet settled
  int64_t steps_trained_here = 0;  // run-steps this invocation trained
  int evaluations_left = 0;        // runs not yet settled (each still needs its evaluation)
  int evaluations_here = 0;        // evaluations this invocation finished
  double elapsed_s = 0, evaluation_s = 0;  // wall time here; of its evaluations, summed
  int parallel = 1;
  // Run-steps/s the runs to train went at before this invocation (earlier_run_steps_per_s): the
  // rate while nothing has trained here yet (a resumed sweep evaluates its trained runs first).
  double earlier_rate = 0;
};
// Seconds until the sweep ends: the steps left at the run-steps/s this invocation has trained so
// far (packs and runs side by side included; before any, at earlier_rate), then the evaluations
// left at the mean time one took here, `parallel` at once. Negative where it cannot tell yet
// (nothing trained here nor before, or nothing evaluated here, while some of that is left).
double eta_seconds(const SweepPace& pace);
// The run-steps/s a sweep's first `packs` (indices into `runs`), `parallel` at a time, trained
// at before, from their metrics.csv (each run's training pace after start-up, rl::training_pace):
// 0 where none has a row.
double earlier_run_steps_per_s(const std::vector<SweepRun>& runs,
                               const std::deque<std::vector<int>>& packs, int parallel);

// <out>/sweep_status.json as a local sweep rewrites it at each change of a run's status (temp file
// + rename): the counts, the sweep's pid, and per run its dataset, backbone, seed, dir, config,
// status (`statuses`, by run) and the wall seconds of its phases here (`seconds`). It is the
// sweep's word while that pid holds <out>/.lock; after a kill -9 it is its last (--status reads
// the run dirs).
void write_sweep_status(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                        const std::vector<std::string>& statuses,
                        const std::vector<double>& seconds, int done, int failed, double elapsed_s);

}  // namespace minrnn::sweep
