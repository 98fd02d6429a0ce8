// HalfCheetah, Hopper and Walker2d: one MuJoCo-backed Env class configured by a plain task table
// (REFERENCE.md §1, gym v2-v4 semantics as D4RL recorded them).
#pragma once
#include <mujoco/mujoco.h>

#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/mjcf.h"
#include "envs/rng.h"

namespace minrnn::envs {

// Continue-or-terminate predicate on the state after a step (pure; strict inequalities).
using HealthFn = bool (*)(const double* qpos, int nq, const double* qvel, int nv);

struct LocomotionTask {
  EnvSpec spec;                  // everything, nq/nv/dt included (checked against the model)
  double ctrl_cost_weight = 0;   // ctrl_cost = weight * sum(clipped_action^2)
  double healthy_reward = 0;     // paid on every step, the terminating one included (gym v2-v4)
  double obs_velocity_clip = 0;  // observed qvel clipped to [-c, c]; 0 = not clipped
  double reset_qpos_noise = 0;   // qpos = qpos0 + U(-s, s)
  double reset_qvel_noise = 0;   // qvel = U(-s, s), or s * N(0, 1) when normal
  bool reset_qvel_normal = false;
  HealthFn is_healthy = nullptr;  // nullptr: never terminates (halfcheetah)
};

// The task table entry for "halfcheetah", "hopper", "walker2d"; std::invalid_argument otherwise.
const LocomotionTask& locomotion_task(const std::string& env_name);

// Hopper: finite state, every entry of qpos[2:] and qvel in (-100, 100), z > 0.7, |angle| < 0.2.
bool hopper_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel);
// Walker2d: 0.8 < z < 2.0 and -1 < angle < 1 (no range or finiteness check, as gym).
bool walker2d_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel);

class LocomotionEnv : public Env {
 public:
  // Compiles the embedded model and resets with the given seed.
  explicit LocomotionEnv(const std::string& env_name, uint64_t seed = 0);

  const EnvSpec& spec() const override { return task_.spec; }
  std::vector<double> reset(int64_t seed = -1) override;
  StepResult step(const std::vector<double>& action) override;

  std::vector<double> qpos() const override;
  std::vector<double> qvel() const override;
  void set_state(const std::vector<double>& qpos, const std::vector<double>& qvel) override;
  std::vector<double> observation() const override;
  int elapsed_steps() const override { return elapsed_steps_; }

  const LocomotionTask& task() const { return task_; }
  // The raw MuJoCo model and data, for the renderer and the physics benchmark. The env owns them.
  const mjModel* model() const { return model_.get(); }
  const mjData* data() const { return data_.get(); }
  // MuJoCo warnings since construction.
  long total_mujoco_warnings() const { return total_warnings_; }
  bool healthy() const;

 private:
  // One mj_step; returns the MuJoCo warnings it raised.
  int physics_step();

  const LocomotionTask& task_;
  ModelPtr model_;
  DataPtr data_;
  Rng rng_;
  int elapsed_steps_ = 0;
  bool episode_over_ = false;
  long total_warnings_ = 0;
};

}  // namespace minrnn::envs
