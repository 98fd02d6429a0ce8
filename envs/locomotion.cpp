#include "envs/locomotion.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace minrnn::envs {

namespace {

bool hopper_health(const double* qpos, int nq, const double* qvel, int nv) {
  for (int i = 0; i < nq; ++i) {
    if (!std::isfinite(qpos[i])) return false;
  }
  for (int i = 0; i < nv; ++i) {
    if (!std::isfinite(qvel[i])) return false;
  }
  for (int i = 2; i < nq; ++i) {
    if (!(qpos[i] > -100.0 && qpos[i] < 100.0)) return false;
  }
  for (int i = 0; i < nv; ++i) {
    if (!(qvel[i] > -100.0 && qvel[i] < 100.0)) return false;
  }
  const double z = qpos[1], angle = qpos[2];
  return z > 0.7 && angle > -0.2 && angle < 0.2;
}

bool walker2d_health(const double* qpos, int, const double*, int) {
  const double z = qpos[1], angle = qpos[2];
  return z > 0.8 && z < 2.0 && angle > -1.0 && angle < 1.0;
}

LocomotionTask make_halfcheetah() {
  LocomotionTask t;
  t.spec = {"halfcheetah", 17, 6, 5, 1000, -280.178953, 12135.0, 9, 9, 0.05};
  t.ctrl_cost_weight = 0.1;
  t.reset_qpos_noise = 0.1;
  t.reset_qvel_noise = 0.1;
  t.reset_qvel_normal = true;
  return t;
}

LocomotionTask make_hopper() {
  LocomotionTask t;
  t.spec = {"hopper", 11, 3, 4, 1000, -20.272305, 3234.3, 6, 6, 0.008};
  t.ctrl_cost_weight = 1e-3;
  t.healthy_reward = 1.0;
  t.obs_velocity_clip = 10.0;
  t.reset_qpos_noise = 5e-3;
  t.reset_qvel_noise = 5e-3;
  t.is_healthy = hopper_health;
  return t;
}

LocomotionTask make_walker2d() {
  LocomotionTask t;
  t.spec = {"walker2d", 17, 6, 4, 1000, 1.629008, 4592.3, 9, 9, 0.008};
  t.ctrl_cost_weight = 1e-3;
  t.healthy_reward = 1.0;
  t.obs_velocity_clip = 10.0;
  t.reset_qpos_noise = 5e-3;
  t.reset_qvel_noise = 5e-3;
  t.is_healthy = walker2d_health;
  return t;
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

void install_warning_handler_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (mju_user_warning == nullptr) mju_user_warning = quiet_mujoco_warning;
  });
}

}  // namespace

const LocomotionTask& locomotion_task(const std::string& env_name) {
  static const LocomotionTask halfcheetah = make_halfcheetah();
  static const LocomotionTask hopper = make_hopper();
  static const LocomotionTask walker2d = make_walker2d();
  if (env_name == "halfcheetah") return halfcheetah;
  if (env_name == "hopper") return hopper;
  if (env_name == "walker2d") return walker2d;
  throw std::invalid_argument("unknown environment '" + env_name +
                              "' (known: halfcheetah, hopper, walker2d)");
}

bool hopper_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size("hopper_is_healthy", qpos, qvel, 6, 6);
  return hopper_health(qpos.data(), 6, qvel.data(), 6);
}

bool walker2d_is_healthy(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size("walker2d_is_healthy", qpos, qvel, 9, 9);
  return walker2d_health(qpos.data(), 9, qvel.data(), 9);
}

LocomotionEnv::LocomotionEnv(const std::string& env_name, uint64_t seed)
    : task_(locomotion_task(env_name)), model_(load_embedded_model(env_name)), rng_(seed) {
  install_warning_handler_once();
  const EnvSpec& s = task_.spec;
  const double dt = model_->opt.timestep * s.frame_skip;
  if (model_->nq != s.nq || model_->nv != s.nv || model_->nu != s.act_dim ||
      std::abs(dt - s.dt) > 1e-12) {
    throw std::logic_error(env_name + ": compiled model (nq " + std::to_string(model_->nq) +
                           ", nv " + std::to_string(model_->nv) + ", nu " +
                           std::to_string(model_->nu) + ") disagrees with its task table");
  }
  data_.reset(mj_makeData(model_.get()));
  if (!data_) throw std::runtime_error(env_name + ": mj_makeData failed (out of memory?)");
  reset(static_cast<int64_t>(seed));
}

std::vector<double> LocomotionEnv::reset(int64_t seed) {
  if (seed >= 0) rng_.seed(static_cast<uint64_t>(seed));
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  mj_resetData(m, d);
  // Draw order as gym: all qpos noise, then all qvel noise.
  const double sq = task_.reset_qpos_noise, sv = task_.reset_qvel_noise;
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
  double sum_sq = 0;
  for (int i = 0; i < s.act_dim; ++i) {
    const double a = std::clamp(action[i], -1.0, 1.0);
    d->ctrl[i] = a;
    sum_sq += a * a;
  }
  const double x_before = d->qpos[0];
  for (int k = 0; k < s.frame_skip; ++k) r.mujoco_warnings += physics_step();
  total_warnings_ += r.mujoco_warnings;
  const double x_after = d->qpos[0];

  r.x_velocity = (x_after - x_before) / s.dt;
  r.ctrl_cost = task_.ctrl_cost_weight * sum_sq;
  r.healthy_reward = task_.healthy_reward;
  r.reward = r.x_velocity + r.healthy_reward - r.ctrl_cost;
  r.terminated = !healthy();
  ++elapsed_steps_;
  // D4RL keeps terminals and timeouts exclusive: a fall on the last step is a termination.
  r.truncated = !r.terminated && elapsed_steps_ >= s.max_episode_steps;
  episode_over_ = r.terminated || r.truncated;
  r.obs = observation();
  return r;
}

bool LocomotionEnv::healthy() const {
  if (task_.is_healthy == nullptr) return true;
  return task_.is_healthy(data_->qpos, model_->nq, data_->qvel, model_->nv);
}

std::vector<double> LocomotionEnv::qpos() const {
  return std::vector<double>(data_->qpos, data_->qpos + model_->nq);
}

std::vector<double> LocomotionEnv::qvel() const {
  return std::vector<double>(data_->qvel, data_->qvel + model_->nv);
}

void LocomotionEnv::set_state(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  check_state_size(task_.spec.name + ": set_state", qpos, qvel, model_->nq, model_->nv);
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
  obs.insert(obs.end(), d->qpos + 1, d->qpos + nq);  // x position excluded, as gym
  for (int i = 0; i < nv; ++i)
    obs.push_back(clip > 0 ? std::clamp(d->qvel[i], -clip, clip) : d->qvel[i]);
  return obs;
}

}  // namespace minrnn::envs
