// A MuJoCo locomotion environment with gym v2/v3/v4 semantics (as D4RL used them).
// Plain data in, plain data out: observations and actions are float64 vectors, as in gym.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minrnn::envs {

struct EnvSpec {
  std::string name;        // "hopper", "halfcheetah", "walker2d"
  int obs_dim = 0;
  int act_dim = 0;
  int frame_skip = 0;
  int max_episode_steps = 1000;
  double ref_min_score = 0;  // D4RL REF_MIN_SCORE (random policy return)
  double ref_max_score = 0;  // D4RL REF_MAX_SCORE (expert policy return)
};

struct StepResult {
  std::vector<double> obs;  // observation after the step
  double reward = 0;
  bool terminated = false;  // the environment ended the episode (fell / unhealthy)
  bool truncated = false;   // the 1000-step time limit ended it
  double x_velocity = 0;    // forward-velocity reward term
  double ctrl_cost = 0;     // control cost (on the clipped action)
  double healthy_reward = 0;
  int mujoco_warnings = 0;  // number of MuJoCo warnings (e.g. bad qacc) raised during this step
};

class Env {
 public:
  virtual ~Env() = default;
  virtual const EnvSpec& spec() const = 0;
  // Seeds the environment's own generator (if seed >= 0) and returns the first observation.
  virtual std::vector<double> reset(int64_t seed = -1) = 0;
  // Clips the action to [-1, 1] (D4RL evaluation semantics) and advances frame_skip physics steps.
  // Throws std::invalid_argument on a wrong action size or a non-finite entry, leaving the state intact.
  virtual StepResult step(const std::vector<double>& action) = 0;
};

}  // namespace minrnn::envs
