// Data collection: run a behaviour policy in an environment and record every transition in D4RL's
// layout (infos/qpos, infos/qvel before the step, infos/action_log_probs; terminals on a fall,
// timeouts at the 1000-step limit, never both).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "envs/env.h"

namespace minrnn::rl {

// A behaviour policy: the action for an observation, and its log-probability under the policy.
using BehaviourPolicy =
    std::function<std::vector<double>(const std::vector<double>& obs, double* log_prob)>;

// Uniform actions in [-1, 1]^act_dim (D4RL's random datasets); log-prob −act_dim · log 2.
BehaviourPolicy uniform_random_policy(int act_dim, uint64_t seed);

struct CollectOptions {
  int64_t steps = 1000000;  // transitions to record; the last episode may stop early (then it
                            // is neither terminal nor timeout, and readers drop it)
  uint64_t seed = 0;        // env seed of the first episode; episode k uses seed + k
  int progress_every = 0;   // progress looked at every N steps, shown once a period (0 = quiet)
};

// Runs `policy` in `env` for options.steps transitions, or fewer when a stop is requested
// (rl/stop_request.h; the caller checks stop_requested() and should not keep the partial data).
// MuJoCo warnings in an episode are counted in *mujoco_warnings when given.
data::Transitions collect(envs::Env& env, const BehaviourPolicy& policy,
                          const CollectOptions& options, int64_t* mujoco_warnings = nullptr);

}  // namespace minrnn::rl
