// HalfCheetah, Hopper and Walker2d: one MuJoCo-backed Env class configured by a plain task: the
// family, the Gymnasium version whose semantics it has (4: gym v2/v3/v4 as D4RL recorded them;
// 5: Gymnasium's v5, what Minari's datasets were recorded in) and the constructor options
// Gymnasium's classes take (REFERENCE.md §1, Gymnasium 1.x hopper_v5.py / walker2d_v5.py /
// half_cheetah_v5.py and their v4 files).
#pragma once
#include <mujoco/mujoco.h>

#include <array>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/mjcf.h"
#include "envs/rng.h"

namespace minrnn::envs {

// Gymnasium's constructor arguments, with the names Gymnasium gives them (what a Minari
// dataset's env_spec.kwargs holds). default_locomotion_options fills in a version's defaults.
struct LocomotionOptions {
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 0;  // ctrl_cost = weight * sum(action^2)
  double healthy_reward = 0;    // hopper, walker2d
  bool terminate_when_unhealthy = true;
  std::array<double, 2> healthy_state_range{-100.0, 100.0};  // hopper: qpos[2:] and qvel
  std::array<double, 2> healthy_z_range{0, 0};
  std::array<double, 2> healthy_angle_range{0, 0};
  double reset_noise_scale = 0;
  bool exclude_current_positions_from_observation = true;  // drop qpos[0] (x) from the obs
  int frame_skip = 0;                                      // mj_step calls per env step
  int max_episode_steps = 1000;                            // the TimeLimit of the env's spec
};

// Which health predicate a family uses.
enum class Health { kNone, kHopper, kWalker2d };

struct LocomotionTask {
  EnvSpec spec;  // everything, nq/nv/dt included (checked against the model); from the options
  LocomotionOptions options;
  std::string model;               // embedded MJCF name: "hopper", "walker2d-v5", ...
  double obs_velocity_clip = 0;    // observed qvel clipped to [-c, c]; 0 = not clipped
  bool reset_qvel_normal = false;  // qvel = scale * N(0, 1) (halfcheetah) instead of U(-s, s)
  Health health = Health::kNone;   // kNone: never unhealthy (halfcheetah)

  // The predicate on the state after a step (pure; strict inequalities, as Gymnasium).
  bool is_healthy(const double* qpos, int nq, const double* qvel, int nv) const;
  // The healthy reward a step pays: v2-v4 pay it whenever the episode goes on or would have
  // ended (healthy or terminate_when_unhealthy), v5 only while healthy.
  double healthy_reward_for(bool healthy) const;
};

// "halfcheetah", "hopper", "walker2d".
bool is_locomotion_family(const std::string& family);
// The defaults of Gymnasium's constructor for `family` at `version` (4 or 5; gym's v2/v3 have
// v4's). Throws std::invalid_argument on an unknown family or version.
LocomotionOptions default_locomotion_options(const std::string& family, int version);
// The task for a family, version and options: dims, dt and the model follow from them.
LocomotionTask make_locomotion_task(const std::string& family, int version,
                                    const LocomotionOptions& options);
// The task any name the registry accepts refers to ("hopper", "hopper-v5", "Hopper-v5",
// "hopper-medium-v2", a Gymnasium env_spec JSON; envs/registry.h).
LocomotionTask locomotion_task(const std::string& name);

// Hopper at its defaults: finite state, every entry of qpos[2:] and qvel in (-100, 100),
// z > 0.7, |angle| < 0.2.
bool hopper_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel);
// Walker2d at its defaults: 0.8 < z < 2.0 and -1 < angle < 1 (no range or finiteness check, as
// Gymnasium).
bool walker2d_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel);

class LocomotionEnv : public Env {
 public:
  // Compiles the embedded model and resets with the given seed. `name` is anything the registry
  // accepts (envs/registry.h).
  explicit LocomotionEnv(const std::string& name, uint64_t seed = 0);
  explicit LocomotionEnv(const LocomotionTask& task, uint64_t seed = 0);

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

  LocomotionTask task_;
  std::shared_ptr<const mjModel> model_;  // shared by every env of this model
  DataPtr data_;
  Rng rng_;
  int elapsed_steps_ = 0;
  bool episode_over_ = false;
  long total_warnings_ = 0;
};

}  // namespace minrnn::envs
