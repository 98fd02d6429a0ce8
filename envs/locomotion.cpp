#include "envs/locomotion.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "io/name_list.h"

namespace minrnn::envs {

namespace {

bool hopper_health(const LocomotionOptions& o, const double* qpos, int nq, const double* qvel,
                   int nv) {
  for (int i = 0; i < nq; ++i) {
    if (!std::isfinite(qpos[i])) return false;
  }
  for (int i = 0; i < nv; ++i) {
    if (!std::isfinite(qvel[i])) return false;
  }
  // Gymnasium: state_vector()[2:] = qpos[2:] ++ qvel, each strictly inside healthy_state_range.
  const auto [lo, hi] = o.healthy_state_range;
  for (int i = 2; i < nq; ++i) {
    if (!(qpos[i] > lo && qpos[i] < hi)) return false;
  }
  for (int i = 0; i < nv; ++i) {
    if (!(qvel[i] > lo && qvel[i] < hi)) return false;
  }
  const double z = qpos[1], angle = qpos[2];
  return z > o.healthy_z_range[0] && z < o.healthy_z_range[1] && angle > o.healthy_angle_range[0] &&
         angle < o.healthy_angle_range[1];
}

bool walker2d_health(const LocomotionOptions& o, const double* qpos) {
  const double z = qpos[1], angle = qpos[2];
  return z > o.healthy_z_range[0] && z < o.healthy_z_range[1] && angle > o.healthy_angle_range[0] &&
         angle < o.healthy_angle_range[1];
}

// The Gymnasium id of a family's semantics at a version: "Hopper-v5".
std::string gymnasium_id(const std::string& family, int version) {
  const std::string name = family == "halfcheetah" ? "HalfCheetah"
                           : family == "hopper"    ? "Hopper"
                                                   : "Walker2d";
  return name + "-v" + std::to_string(version);
}

void check_state_size(const std::string& who, const std::vector<double>& qpos,
                      const std::vector<double>& qvel, int nq, int nv) {
  if (static_cast<int>(qpos.size()) != nq || static_cast<int>(qvel.size()) != nv) {
    throw std::invalid_argument(who + ": state has qpos size " + std::to_string(qpos.size()) +
                                " and qvel size " + std::to_string(qvel.size()) + ", expected " +
                                std::to_string(nq) + " and " + std::to_string(nv));
  }
}

// MuJoCo 2.x's default warning handler appends to MUJOCO_LOG.TXT in the working directory. We
// count warnings per step anyway, so print a few to stderr and keep the working directory clean.
void quiet_mujoco_warning(const char* message) {
  static std::atomic<int> printed{0};
  const int n = printed.fetch_add(1);
  if (n < 10) std::fprintf(stderr, "minrnn: MuJoCo warning: %s\n", message);
  if (n == 10) std::fprintf(stderr, "minrnn: further MuJoCo warnings not printed\n");
}

// MuJoCo's default error handler prints "Press Enter to exit ..." and waits on stdin: a training
// under Slurm or a sweep's child would hang there (mj_makeData out of memory). Its errors are
// fatal (the handler must not return), so this one says what happened and exits at once; every
// file minrnn writes is replaced atomically, so none is left half-written.
[[noreturn]] void fatal_mujoco_error(const char* message) {
  std::fprintf(stderr, "minrnn: error: MuJoCo: %s (a fatal MuJoCo error: exiting)\n", message);
  std::fflush(stderr);
  std::_Exit(1);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (mju_user_warning == nullptr) mju_user_warning = quiet_mujoco_warning;
    if (mju_user_error == nullptr) mju_user_error = fatal_mujoco_error;
  });
}

}  // namespace

bool LocomotionTask::is_healthy(const double* qpos, int nq, const double* qvel, int nv) const {
  switch (health) {
    case Health::kHopper:
      return hopper_health(options, qpos, nq, qvel, nv);
    case Health::kWalker2d:
      return walker2d_health(options, qpos);
    case Health::kNone:
      break;
  }
  return true;
}

double LocomotionTask::healthy_reward_for(bool healthy) const {
  if (health == Health::kNone) return 0.0;
  // v4: float(is_healthy or terminate_when_unhealthy) * healthy_reward (the terminating step is
  // paid); v5: is_healthy * healthy_reward (Gymnasium issue 526).
  const bool paid = spec.version >= 5 ? healthy : (healthy || options.terminate_when_unhealthy);
  return paid ? options.healthy_reward : 0.0;
}

namespace {

const std::vector<std::string>& locomotion_families() {
  static const std::vector<std::string> families = {"halfcheetah", "hopper", "walker2d"};
  return families;
}

}  // namespace

bool is_locomotion_family(const std::string& family) {
  const auto& known = locomotion_families();
  return std::find(known.begin(), known.end(), family) != known.end();
}

LocomotionOptions default_locomotion_options(const std::string& family, int version) {
  if (!is_locomotion_family(family)) {
    throw std::invalid_argument("unknown environment '" + family + "'" +
                                io::known_names_hint(family, locomotion_families()));
  }
  if (version != 4 && version != 5) {
    throw std::invalid_argument(family + ": no version " + std::to_string(version) +
                                " (known: 4, which gym's v2 and v3 share, and 5)");
  }
  LocomotionOptions o;
  if (family == "halfcheetah") {
    o.ctrl_cost_weight = 0.1;
    o.reset_noise_scale = 0.1;
    o.frame_skip = 5;
  } else {
    o.ctrl_cost_weight = 1e-3;
    o.healthy_reward = 1.0;
    o.reset_noise_scale = 5e-3;
    o.frame_skip = 4;
    if (family == "hopper") {
      o.healthy_z_range = {0.7, std::numeric_limits<double>::infinity()};
      o.healthy_angle_range = {-0.2, 0.2};
    } else {
      o.healthy_z_range = {0.8, 2.0};
      o.healthy_angle_range = {-1.0, 1.0};
    }
  }
  return o;
}

LocomotionTask make_locomotion_task(const std::string& family, int version,
                                    const LocomotionOptions& options) {
  default_locomotion_options(family, version);  // checks family and version
  if (options.frame_skip < 1) {
    throw std::invalid_argument(family + ": frame_skip must be >= 1, got " +
                                std::to_string(options.frame_skip));
  }
  if (options.max_episode_steps < 1) {
    throw std::invalid_argument(family + ": max_episode_steps must be >= 1, got " +
                                std::to_string(options.max_episode_steps));
  }
  LocomotionTask t;
  t.options = options;
  EnvSpec& s = t.spec;
  s.name = family;
  s.id = gymnasium_id(family, version);
  s.version = version;
  s.frame_skip = options.frame_skip;
  s.max_episode_steps = options.max_episode_steps;
  const int exclude = options.exclude_current_positions_from_observation ? 1 : 0;
  // REFERENCE.md §2: D4RL's REF_MIN / REF_MAX. Gymnasium publishes none for v5; a Minari
  // dataset carries its own, and training from one uses those instead (rl/dataset_env.h).
  if (family == "halfcheetah") {
    s.act_dim = 6;
    s.nq = s.nv = 9;
    s.ref_min_score = -280.178953;
    s.ref_max_score = 12135.0;
    s.dt = 0.01 * s.frame_skip;
    t.model = "halfcheetah";
    t.reset_qvel_normal = true;
  } else if (family == "hopper") {
    s.act_dim = 3;
    s.nq = s.nv = 6;
    s.ref_min_score = -20.272305;
    s.ref_max_score = 3234.3;
    s.dt = 0.002 * s.frame_skip;
    t.model = "hopper";  // Gymnasium 1.x: hopper.xml for both v4 and v5
    t.obs_velocity_clip = 10.0;
    t.health = Health::kHopper;
  } else {
    s.act_dim = 6;
    s.nq = s.nv = 9;
    s.ref_min_score = 1.629008;
    s.ref_max_score = 4592.3;
    s.dt = 0.002 * s.frame_skip;
    t.model = version >= 5 ? "walker2d-v5" : "walker2d";  // v5: friction 1.9 on both feet
    t.obs_velocity_clip = 10.0;
    t.health = Health::kWalker2d;
  }
  s.obs_dim = s.nq - exclude + s.nv;
  return t;
}

bool hopper_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size("hopper_is_healthy", qpos, qvel, 6, 6);
  return hopper_health(default_locomotion_options("hopper", 4), qpos.data(), 6, qvel.data(), 6);
}

bool walker2d_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size("walker2d_is_healthy", qpos, qvel, 9, 9);
  return walker2d_health(default_locomotion_options("walker2d", 4), qpos.data());
}

LocomotionTask locomotion_task(const std::string& name) {
  return resolve_env(name).task;
}

LocomotionEnv::LocomotionEnv(const std::string& name, uint64_t seed)
    : LocomotionEnv(locomotion_task(name), seed) {}

LocomotionEnv::LocomotionEnv(const LocomotionTask& task, uint64_t seed)
    : task_(task), model_(load_embedded_model(task.model)), rng_(seed) {
  install_handlers_once();
  const EnvSpec& s = task_.spec;
  const double dt = model_->opt.timestep * s.frame_skip;
  if (model_->nq != s.nq || model_->nv != s.nv || model_->nu != s.act_dim ||
      std::abs(dt - s.dt) > 1e-12) {
    throw std::logic_error(s.id + ": compiled model (nq " + std::to_string(model_->nq) + ", nv " +
                           std::to_string(model_->nv) + ", nu " + std::to_string(model_->nu) +
                           ") disagrees with its task table");
  }
  data_.reset(mj_makeData(model_.get()));
  if (!data_) throw std::runtime_error(s.id + ": mj_makeData failed (out of memory?)");
  reset(static_cast<int64_t>(seed));
}

std::vector<double> LocomotionEnv::reset(int64_t seed) {
  if (seed >= 0) rng_.seed(static_cast<uint64_t>(seed));
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  mj_resetData(m, d);
  // Draw order as gym: all qpos noise, then all qvel noise.
  const double sq = task_.options.reset_noise_scale, sv = sq;
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + rng_.uniform(-sq, sq);
  for (int i = 0; i < m->nv; ++i) {
    d->qvel[i] = task_.reset_qvel_normal ? sv * rng_.normal() : rng_.uniform(-sv, sv);
  }
  mj_forward(m, d);
  elapsed_steps_ = 0;
  episode_over_ = false;
  return observation();
}

int LocomotionEnv::physics_step() {
  mjData* d = data_.get();
  // mj_resetData (which MuJoCo runs itself after a bad qacc) clears the counters, so count from
  // zero around each step instead of differencing totals.
  for (int w = 0; w < mjNWARNING; ++w) d->warning[w].number = 0;
  mj_step(model_.get(), d);
  int raised = 0;
  for (int w = 0; w < mjNWARNING; ++w) raised += d->warning[w].number;
  return raised;
}

StepResult LocomotionEnv::step(const std::vector<double>& action) {
  const EnvSpec& s = task_.spec;
  check_action(s, action);
  if (episode_over_) {
    throw std::logic_error(s.name +
                           ": step() after the episode ended (terminated or truncated); "
                           "call reset() first");
  }
  mjData* d = data_.get();
  StepResult r;
  // The physics gets the action clipped to the actuators' range (as MuJoCo's ctrlrange does); the
  // control cost is charged on the action as given, as gym and Gymnasium charge it
  // (ctrl_cost_weight · Σ action², before do_simulation).
  double sum_sq = 0;
  for (int i = 0; i < s.act_dim; ++i) {
    d->ctrl[i] = std::clamp(action[i], -1.0, 1.0);
    sum_sq += action[i] * action[i];
  }
  const double x_before = d->qpos[0];
  for (int k = 0; k < s.frame_skip; ++k) r.mujoco_warnings += physics_step();
  total_warnings_ += r.mujoco_warnings;
  const double x_after = d->qpos[0];

  const bool is_healthy = healthy();
  r.x_velocity = (x_after - x_before) / s.dt;
  r.ctrl_cost = task_.options.ctrl_cost_weight * sum_sq;
  r.healthy_reward = task_.healthy_reward_for(is_healthy);
  r.reward = task_.options.forward_reward_weight * r.x_velocity + r.healthy_reward - r.ctrl_cost;
  r.terminated = !is_healthy && task_.options.terminate_when_unhealthy;
  ++elapsed_steps_;
  // D4RL keeps terminals and timeouts exclusive: a fall on the last step is a termination.
  r.truncated = !r.terminated && elapsed_steps_ >= s.max_episode_steps;
  episode_over_ = r.terminated || r.truncated;
  r.obs = observation();
  return r;
}

bool LocomotionEnv::healthy() const {
  return task_.is_healthy(data_->qpos, model_->nq, data_->qvel, model_->nv);
}

std::vector<double> LocomotionEnv::qpos() const {
  return std::vector<double>(data_->qpos, data_->qpos + model_->nq);
}

std::vector<double> LocomotionEnv::qvel() const {
  return std::vector<double>(data_->qvel, data_->qvel + model_->nv);
}

void LocomotionEnv::set_state(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size(task_.spec.id + ": set_state", qpos, qvel, model_->nq, model_->nv);
  std::copy(qpos.begin(), qpos.end(), data_->qpos);
  std::copy(qvel.begin(), qvel.end(), data_->qvel);
  mj_forward(model_.get(), data_.get());
}

std::vector<double> LocomotionEnv::observation() const {
  const mjData* d = data_.get();
  const int nq = model_->nq, nv = model_->nv;
  const double clip = task_.obs_velocity_clip;
  std::vector<double> obs;
  obs.reserve(task_.spec.obs_dim);
  const int first = task_.options.exclude_current_positions_from_observation ? 1 : 0;
  obs.insert(obs.end(), d->qpos + first, d->qpos + nq);  // x position excluded by default
  for (int i = 0; i < nv; ++i)
    obs.push_back(clip > 0 ? std::clamp(d->qvel[i], -clip, clip) : d->qvel[i]);
  return obs;
}

}  // namespace minrnn::envs
