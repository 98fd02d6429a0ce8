#include "eval/rollout.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "envs/image_io.h"
#include "envs/registry.h"
#include "envs/render.h"
#include "io/atomic_file.h"

namespace minrnn::eval {
namespace {

void mean_std(const std::vector<double>& v, double* mean, double* std) {
  double s = 0, ss = 0;
  for (double x : v) s += x;
  *mean = v.empty() ? 0 : s / v.size();
  for (double x : v) ss += (x - *mean) * (x - *mean);
  *std = v.empty() ? 0 : std::sqrt(ss / v.size());
}

}  // namespace

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& opt) {
  if (opt.episodes < 1) throw std::invalid_argument("rollout: episodes must be >= 1");
  if (agent.env.empty()) {
    throw std::invalid_argument("rollout: the run names no environment; set config key 'env'");
  }
  const auto t0 = std::chrono::steady_clock::now();
  rl::Policy policy(agent, {opt.mode, opt.engine});
  const int64_t B = opt.episodes;

  std::vector<std::unique_ptr<envs::Env>> envs;
  for (int64_t i = 0; i < B; ++i) envs.push_back(envs::make_env(agent.env, opt.seed + i));
  const int64_t obs_dim = envs[0]->spec().obs_dim, act_dim = envs[0]->spec().act_dim;
  if (obs_dim != policy.obs_dim() || act_dim != policy.act_dim()) {
    throw std::invalid_argument(
        "rollout: env '" + agent.env + "' has obs_dim " + std::to_string(obs_dim) + ", act_dim " +
        std::to_string(act_dim) + " but the agent was trained on " +
        std::to_string(policy.obs_dim()) + ", " + std::to_string(policy.act_dim()));
  }
  // Observations of every episode, row-major (B, obs_dim): what Policy::act takes.
  std::vector<double> obs(B * obs_dim), actions(B * act_dim), rewards(B);
  for (int64_t i = 0; i < B; ++i) {
    const auto o = envs[i]->reset(opt.seed + i);
    std::copy(o.begin(), o.end(), obs.begin() + i * obs_dim);
  }
  const int max_steps = opt.max_steps > 0 ? opt.max_steps : envs[0]->spec().max_episode_steps;
  std::unique_ptr<envs::Renderer> renderer;
  std::vector<std::vector<uint8_t>> frames;
  if (!opt.video_dir.empty()) {
    renderer = std::make_unique<envs::Renderer>(*envs[0], opt.video_width, opt.video_height);
    frames.push_back(renderer->render_rgb());
  }

  RolloutResult r;
  r.returns.assign(B, 0.0);
  r.lengths.assign(B, 0);
  r.mode = policy.mode();
  r.engine = policy.engine();
  std::vector<uint8_t> done(B, 0);
  int ended = 0;  // episodes done
  policy.reset(B, opt.target_return);
  std::vector<double> action(act_dim);
  for (int t = 0; t < max_steps; ++t) {
    // Finished episodes keep being fed (frozen obs, reward 0) so the batch stays rectangular.
    policy.act(obs.data(), actions.data());
    for (int64_t i = 0; i < B; ++i) {
      rewards[i] = 0;
      if (done[i]) continue;
      action.assign(actions.begin() + i * act_dim, actions.begin() + (i + 1) * act_dim);
      auto step = envs[i]->step(action);
      rewards[i] = step.reward;
      r.returns[i] += step.reward;
      r.lengths[i] += 1;
      std::copy(step.obs.begin(), step.obs.end(), obs.begin() + i * obs_dim);
      done[i] = step.terminated || step.truncated;
      if (renderer && i == 0) frames.push_back(renderer->render_rgb());
      ended += done[i];
    }
    policy.observe_reward(rewards.data());
    if (opt.on_step) opt.on_step(t + 1, max_steps, ended);
    if (ended == B) break;
  }
  if (renderer) {
    envs::make_directories(opt.video_dir);
    for (size_t f = 0; f < frames.size(); ++f) {
      char name[32];
      std::snprintf(name, sizeof(name), "/frame_%05zu.png", f);
      envs::write_png(opt.video_dir + name, frames[f], renderer->width(), renderer->height());
    }
    r.video_gif = opt.video_dir + "/rollout.gif";
    // Every second frame at 25 frames/s: hopper and walker2d (dt 0.008 s) play at 0.4× real time.
    std::vector<std::vector<uint8_t>> gif_frames;
    for (size_t f = 0; f < frames.size(); f += 2) gif_frames.push_back(std::move(frames[f]));
    envs::write_gif(r.video_gif, gif_frames, renderer->width(), renderer->height(), 4);
  }
  for (double ret : r.returns) r.normalized.push_back(agent.normalized(ret));
  mean_std(r.returns, &r.mean_return, &r.std_return);
  mean_std(r.normalized, &r.mean_normalized, &r.std_normalized);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& opt,
                     const RolloutResult& r) {
  nlohmann::json j;
  // The environment the episodes ran in, and the scores they were normalized with.
  const envs::EnvSpec spec = envs::env_spec(agent.env);
  j["env"] = agent.env;
  j["env_id"] = spec.id;
  j["env_version"] = spec.version;
  const bool own_refs = agent.ref_max_score > agent.ref_min_score;
  j["ref_min_score"] = own_refs ? agent.ref_min_score : spec.ref_min_score;
  j["ref_max_score"] = own_refs ? agent.ref_max_score : spec.ref_max_score;
  j["ref_source"] =
      own_refs && !agent.ref_source.empty() ? agent.ref_source : "D4RL table (" + spec.name + ")";
  j["dataset"] = agent.config.dataset;
  j["backbone"] = agent.config.backbone;
  j["mode"] = eval_mode_name(r.mode);
  j["mode_requested"] = eval_mode_name(opt.mode);
  j["engine"] = rl::policy_engine_name(r.engine);
  j["context_len"] = agent.config.context_len;
  j["train_step"] = agent.step;
  j["episodes"] = opt.episodes;
  j["seed"] = opt.seed;
  j["target_return"] = opt.target_return;
  j["return_scale"] = agent.config.return_scale;
  j["returns"] = r.returns;
  j["normalized_scores"] = r.normalized;
  j["lengths"] = r.lengths;
  j["mean_return"] = r.mean_return;
  j["std_return"] = r.std_return;
  j["mean_normalized"] = r.mean_normalized;
  j["std_normalized"] = r.std_normalized;
  j["seconds"] = r.seconds;
  io::write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace minrnn::eval
