// A rollout's result as a run's eval.json (or an --out file): what `minrnn report`, `compare` and
// a sweep's status read back.
#pragma once
#include <string>

#include "eval/rollout.h"

namespace minrnn::eval {

// Writes <path> (JSON, tmp + rename): the options (with "mode" the mode used and "mode_requested"),
// the agent's step and the per-episode results.
void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& options,
                     const RolloutResult& result);

}  // namespace minrnn::eval
