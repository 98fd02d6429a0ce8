// A MuJoCo locomotion environment with the semantics of one Gymnasium version: v4 (= gym v2/v3,
// what D4RL recorded) or v5 (what Minari recorded). Plain data in, plain data out: observations
// and actions are float64 vectors, as in gym.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minrnn::envs {

struct EnvSpec {
  std::string name;  // "hopper", "halfcheetah", "walker2d"
  int obs_dim = 0;
  int act_dim = 0;
  int frame_skip = 0;
  int max_episode_steps = 1000;
  double ref_min_score = 0;  // D4RL REF_MIN_SCORE (random policy return)
  double ref_max_score = 0;  // D4RL REF_MAX_SCORE (expert policy return)
  int nq = 0;                // size of the raw generalized position (qpos)
  int nv = 0;                // size of the raw generalized velocity (qvel)
  double dt = 0;             // seconds per env step: timestep * frame_skip
  std::string id;   // Gymnasium id of the semantics: "Hopper-v4" (also gym v2/v3), "Hopper-v5"
  int version = 4;  // 4 or 5
};

struct StepResult {
  std::vector<double> obs;  // observation after the step
  double reward = 0;
  bool terminated = false;    // the environment ended the episode (fell / unhealthy)
  bool truncated = false;     // the 1000-step time limit ended it
  double x_velocity = 0;      // (x after - x before) / dt; the forward reward is weight * this
  double ctrl_cost = 0;       // control cost (on the clipped action)
  double healthy_reward = 0;  // what this step paid for staying healthy (0 for halfcheetah)
  int mujoco_warnings = 0;    // number of MuJoCo warnings (e.g. bad qacc) raised during this step
};

class Env {
 public:
  virtual ~Env() = default;
  virtual const EnvSpec& spec() const = 0;
  // Seeds the environment's own generator (if seed >= 0) and returns the first observation.
  virtual std::vector<double> reset(int64_t seed = -1) = 0;
  // Clips the action to [-1, 1] (D4RL evaluation semantics) and advances frame_skip physics steps.
  // Throws std::invalid_argument on a wrong action size or a non-finite entry, leaving the state
  // intact.
  virtual StepResult step(const std::vector<double>& action) = 0;

  // Raw-state access (gym's data.qpos / data.qvel / set_state). Optional for fakes in other tests:
  // the defaults throw std::logic_error naming the environment.
  virtual std::vector<double> qpos() const;
  virtual std::vector<double> qvel() const;
  // Writes qpos/qvel and recomputes derived quantities (mj_forward); the episode clock is
  // untouched.
  virtual void set_state(const std::vector<double>& qpos, const std::vector<double>& qvel);
  // The observation of the current state (what reset/step would return for it).
  virtual std::vector<double> observation() const;
  // Steps taken since the last reset.
  virtual int elapsed_steps() const;
};

// Throws std::invalid_argument unless the action has spec.act_dim finite entries; the message
// names the environment and the offending index/value.
void check_action(const EnvSpec& spec, const std::vector<double>& action);

}  // namespace minrnn::envs
