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

const char* eval_mode_name(EvalMode mode) {
  switch (mode) {
    case EvalMode::kAuto:
      return "auto";
    case EvalMode::kStreaming:
      return "streaming";
    case EvalMode::kWindow:
      return "window";
  }
  return "?";
}

EvalMode parse_eval_mode(const std::string& name) {
  for (EvalMode m : {EvalMode::kAuto, EvalMode::kStreaming, EvalMode::kWindow}) {
    if (name == eval_mode_name(m)) return m;
  }
  throw std::invalid_argument("unknown eval mode '" + name +
                              "' (expected auto, streaming or window)");
}

EvalMode resolve_eval_mode(EvalMode requested, const rl::Agent& agent) {
  const bool recurrent = agent.model->streaming();
  if (requested == EvalMode::kAuto) return recurrent ? kRecurrentDefault : EvalMode::kWindow;
  if (requested == EvalMode::kStreaming && !recurrent) {
    throw std::invalid_argument("eval mode 'streaming' needs a recurrent backbone; '" +
                                agent.config.backbone +
                                "' has no step mode (use --mode window or auto)");
  }
  return requested;
}

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& opt) {
  if (opt.episodes < 1) throw std::invalid_argument("rollout: episodes must be >= 1");
  if (agent.env.empty()) {
    throw std::invalid_argument("rollout: the run names no environment; set config key 'env'");
  }
  const EvalMode mode = resolve_eval_mode(opt.mode, agent);
  const bool streaming = mode == EvalMode::kStreaming;
  const auto t0 = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  auto& model = agent.model;
  model->eval();
  const auto device = model->parameters().front().device();
  const int64_t B = opt.episodes, K = agent.config.context_len;
  const double scale = agent.config.return_scale;

  std::vector<std::unique_ptr<envs::Env>> envs;
  std::vector<std::vector<double>> obs;
  for (int64_t i = 0; i < B; ++i) {
    envs.push_back(envs::make_env(agent.env, opt.seed + i));
    obs.push_back(envs.back()->reset(opt.seed + i));
  }
  const int64_t obs_dim = envs[0]->spec().obs_dim, act_dim = envs[0]->spec().act_dim;
  if (obs_dim != agent.state_mean.size(0)) {
    throw std::invalid_argument("rollout: env '" + agent.env + "' has obs_dim " +
                                std::to_string(obs_dim) + " but the agent was trained on " +
                                std::to_string(agent.state_mean.size(0)));
  }
  const int max_steps = opt.max_steps > 0 ? opt.max_steps : envs[0]->spec().max_episode_steps;
  const auto mean = agent.state_mean.to(device), stdev = agent.state_std.to(device);
  std::unique_ptr<envs::Renderer> renderer;
  std::vector<std::vector<uint8_t>> frames;
  if (!opt.video_dir.empty()) {
    renderer = std::make_unique<envs::Renderer>(*envs[0], opt.video_width, opt.video_height);
    frames.push_back(renderer->render_rgb());
  }

  RolloutResult r;
  r.returns.assign(B, 0.0);
  r.lengths.assign(B, 0);
  r.mode = mode;
  std::vector<uint8_t> done(B, 0);
  int ended = 0;  // episodes done
  auto rtg = torch::full({B, 1}, opt.target_return / scale, torch::kFloat32);
  core::SequenceState state = model->initial_state();  // streaming only
  // Window mode history: lists of (B, ·) per step, re-encoded over the last K from a zero state.
  std::vector<torch::Tensor> h_rtg, h_obs, h_act, h_time;

  for (int t = 0; t < max_steps; ++t) {
    auto o = torch::empty({B, obs_dim}, torch::kFloat32);
    auto o_acc = o.accessor<float, 2>();
    for (int64_t i = 0; i < B; ++i) {
      for (int64_t j = 0; j < obs_dim; ++j) o_acc[i][j] = static_cast<float>(obs[i][j]);
    }
    auto s = ((o.to(device) - mean) / stdev);
    auto time = torch::full({B}, t, torch::kInt64).to(device);
    torch::Tensor action;
    if (streaming) {
      action = model->act(rtg.clone().to(device), s, time, state);
    } else {
      h_rtg.push_back(rtg.clone().to(device));  // rtg changes in place below
      h_obs.push_back(s);
      h_act.push_back(torch::zeros({B, act_dim}, s.options()));  // unseen: causal mask
      h_time.push_back(time);
      if (h_obs.size() > size_t(K)) {  // keep the last K steps (fewer before step K: no padding)
        for (auto* h : {&h_rtg, &h_obs, &h_act, &h_time}) h->erase(h->begin());
      }
      auto window = [](const std::vector<torch::Tensor>& h) { return torch::stack(h, 1); };
      rl::DecisionBatch b{window(h_rtg), window(h_obs), window(h_act), window(h_time)};
      action = model->forward(b).select(1, -1);  // recurrent: from a zero state
      h_act.back() = action;
    }
    auto a = action.to(torch::kCPU).to(torch::kFloat64).contiguous();
    auto rtg_acc = rtg.accessor<float, 2>();
    for (int64_t i = 0; i < B; ++i) {
      if (done[i]) continue;
      const double* p = a[i].data_ptr<double>();
      auto step = envs[i]->step(std::vector<double>(p, p + act_dim));
      r.returns[i] += step.reward;
      r.lengths[i] += 1;
      obs[i] = step.obs;
      rtg_acc[i][0] -= static_cast<float>(step.reward / scale);
      done[i] = step.terminated || step.truncated;
      if (renderer && i == 0) frames.push_back(renderer->render_rgb());
      ended += done[i];
    }
    if (opt.on_step) opt.on_step(t + 1, max_steps, ended);
    if (ended == B) break;
    // Finished episodes keep being fed (frozen obs) so the batch stays rectangular; unused.
    if (streaming) model->observe_action(action, time, state);
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
  for (double ret : r.returns) r.normalized.push_back(envs::normalized_score(agent.env, ret));
  mean_std(r.returns, &r.mean_return, &r.std_return);
  mean_std(r.normalized, &r.mean_normalized, &r.std_normalized);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& opt,
                     const RolloutResult& r) {
  nlohmann::json j;
  j["env"] = agent.env;
  j["dataset"] = agent.config.dataset;
  j["backbone"] = agent.config.backbone;
  j["mode"] = eval_mode_name(r.mode);
  j["mode_requested"] = eval_mode_name(opt.mode);
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
