// The local backend of `minrnn sweep` (sweep/local_pool.cpp): runs as child processes on this
// machine. The Slurm backend is sweep/slurm.h.
#pragma once
#include <vector>

#include "sweep/sweep.h"

namespace minrnn::sweep {

// Trains, then evaluates, every unfinished run of `runs` as child `minrnn` processes with
// `threads` torch threads each, at most spec.parallel at once, keeping <out>/sweep_status.json
// current and printing a line per finished run; stops starting runs on SIGINT/SIGTERM and passes
// SIGTERM on (the caller installs rl::ScopedStopHandlers). Returns what it left undone.
SweepSummary run_local_pool(const SweepSpec& spec, const SweepOptions& opt,
                            std::vector<SweepRun> runs, int threads);

// What is left of a sweep and how fast it went here: the ETA a finished run's line prints.
struct SweepPace {
  int64_t steps_left = 0;          // run-steps still to train, over every run not yet settled
  int64_t steps_trained_here = 0;  // run-steps this invocation trained
  int evaluations_left = 0;        // runs not yet settled (each still needs its evaluation)
  int evaluations_here = 0;        // evaluations this invocation finished
  double elapsed_s = 0, evaluation_s = 0;  // wall time here; of its evaluations, summed
  int parallel = 1;
};
// Seconds until the sweep ends: the steps left at the run-steps/s this invocation has trained so
// far (packs and runs side by side included), then the evaluations left at the mean time one took
// here, `parallel` at once. Negative where it cannot tell yet (nothing trained or evaluated here
// while some of that is left).
double eta_seconds(const SweepPace& pace);

}  // namespace minrnn::sweep
