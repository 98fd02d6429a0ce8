// Environments by name: "hopper", "halfcheetah", "walker2d", or any D4RL v2 dataset id
// ("hopper-medium-v2", "walker2d-medium-replay-v2", ...) which maps to its environment.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"

namespace minrnn::envs {

// "halfcheetah", "hopper", "walker2d".
const std::vector<std::string>& env_names();
// The 15 D4RL ids: <env>-<quality>-v2 for quality in random, medium, medium-replay,
// medium-expert, expert.
std::vector<std::string> d4rl_dataset_ids();

// The environment a name or D4RL id refers to; std::invalid_argument listing the known names
// otherwise.
std::string env_name_from_dataset_id(const std::string& name_or_d4rl_id);
EnvSpec env_spec(const std::string& name_or_d4rl_id);
// A fresh environment, already reset with `seed`.
std::unique_ptr<Env> make_env(const std::string& name_or_d4rl_id, uint64_t seed = 0);

// D4RL normalized score: 100 * (ret - REF_MIN) / (REF_MAX - REF_MIN).
double normalized_score(const std::string& env_or_dataset_id, double ret);

}  // namespace minrnn::envs
