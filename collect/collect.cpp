#include "collect/collect.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "io/progress_line.h"
#include "io/progress_pace.h"
#include "rl/stop_request.h"

namespace minrnn::rl {

BehaviourPolicy uniform_random_policy(int act_dim, uint64_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [rng, act_dim](const std::vector<double>&, double* log_prob) {
    std::vector<double> action(act_dim);
    // Our own transform of the raw 64-bit draws, so the data is identical across standard
    // libraries.
    for (double& a : action) a = 2.0 * (static_cast<double>((*rng)() >> 11) * 0x1.0p-53) - 1.0;
    if (log_prob) *log_prob = -act_dim * std::log(2.0);
    return action;
  };
}

data::Transitions collect(envs::Env& env, const BehaviourPolicy& policy,
                          const CollectOptions& options, int64_t* mujoco_warnings) {
  const envs::EnvSpec& spec = env.spec();
  data::Transitions out;
  out.obs_dim = spec.obs_dim;
  out.act_dim = spec.act_dim;
  std::vector<float> qpos_log, qvel_log, log_probs;
  int64_t warnings = 0, episode = 0;
  std::vector<double> obs = env.reset(static_cast<int64_t>(options.seed));
  const auto start = std::chrono::steady_clock::now();
  io::ProgressPace pace(io::ProgressLine::on_stderr(), true);
  std::vector<float> obs_f, act_f, next_f;
  for (int64_t t = 0; t < options.steps; ++t) {
    if (stop_requested()) break;  // a stop signal: the caller sees stop_requested() and drops it
    const std::vector<double> qpos = env.qpos(), qvel = env.qvel();
    double log_prob = 0;
    const std::vector<double> action = policy(obs, &log_prob);
    envs::StepResult r = env.step(action);
    warnings += r.mujoco_warnings;
    obs_f.assign(obs.begin(), obs.end());
    next_f.assign(r.obs.begin(), r.obs.end());
    act_f.clear();
    for (double a : action) act_f.push_back(static_cast<float>(std::clamp(a, -1.0, 1.0)));
    out.append_step(obs_f.data(), act_f.data(), static_cast<float>(r.reward), next_f.data(),
                    r.terminated, r.truncated && !r.terminated);
    qpos_log.insert(qpos_log.end(), qpos.begin(), qpos.end());
    qvel_log.insert(qvel_log.end(), qvel.begin(), qvel.end());
    log_probs.push_back(static_cast<float>(log_prob));
    obs = r.obs;
    if (r.terminated || r.truncated) {
      ++episode;
      obs = env.reset(static_cast<int64_t>(options.seed) + episode);
    }
    if (options.progress_every > 0 &&
        ((t + 1) % options.progress_every == 0 || t + 1 == options.steps) &&
        pace.due(t + 1 == options.steps)) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double rate = (t + 1) / std::max(secs, 1e-9);
      char line[192];
      std::snprintf(line, sizeof line,
                    "collect %s: %lld/%lld steps, %lld episodes, %.0f steps/s, ETA %s",
                    spec.name.c_str(), static_cast<long long>(t + 1),
                    static_cast<long long>(options.steps), static_cast<long long>(episode), rate,
                    io::duration_text(io::eta_seconds(t + 1, options.steps, rate)).c_str());
      io::ProgressLine::on_stderr().update(line);
      if (t + 1 == options.steps) io::ProgressLine::on_stderr().close();
    }
  }
  const int64_t n = out.num_steps();
  out.infos["qpos"] = {{n, static_cast<int64_t>(qpos_log.size() / std::max<int64_t>(n, 1))},
                       qpos_log};
  out.infos["qvel"] = {{n, static_cast<int64_t>(qvel_log.size() / std::max<int64_t>(n, 1))},
                       qvel_log};
  out.infos["action_log_probs"] = {{n}, log_probs};
  if (mujoco_warnings) *mujoco_warnings = warnings;
  return out;
}

}  // namespace minrnn::rl
