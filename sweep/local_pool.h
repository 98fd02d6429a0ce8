// The local backend of `minrnn sweep` (sweep/local_pool.cpp): runs as child processes on this
// machine. The Slurm backend is sweep/slurm.h.
#pragma once
#include <vector>

#include "sweep/sweep.h"

namespace minrnn::sweep {

// Trains, then evaluates, every unfinished run of `runs` as child `minrnn` processes with
// `threads` torch threads each, at most spec.parallel at once (trainings and evaluations each
// where `evaluations_beside`: evaluates_beside_training of `runs`), keeping <out>/sweep_status.json
// current and printing a line per finished run; stops starting runs on a stop signal
// (rl/stop_request.h) and passes SIGTERM on (the caller installs rl::ScopedStopHandlers). Returns
// what it left undone.
SweepSummary run_local_pool(const SweepSpec& spec, const SweepOptions& opt,
                            std::vector<SweepRun> runs, int threads, bool evaluations_beside);

}  // namespace minrnn::sweep
