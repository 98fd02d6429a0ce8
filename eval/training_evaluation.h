// The evaluations a training run makes as it goes (rl::TrainOptions::evaluate): a rollout of
// config eval_episodes episodes at the config's target return, a row of <run>/evals.csv, a line
// on stderr. What `minrnn train` (and so a sweep's runs) evaluates with, for any program that
// calls rl::train itself.
#pragma once
#include <string>

#include "rl/evaluation_progress.h"

namespace minrnn::eval {

// Episodes reset their envs with seeds 1 000 000 + 1 000 × the config's seed + i: apart from the
// final evaluation's (`minrnn eval`, seed 0 + i) and the other seeds' (docs/agent.md). A stop
// signal cuts the rollout short (its resume redoes it).
rl::Evaluate evaluate_during_training(const std::string& run_dir);

}  // namespace minrnn::eval
