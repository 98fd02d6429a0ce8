#include "rl/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "ops/device.h"
#include "ops/fused_adamw.h"
#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "envs/registry.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "rl/checkpoint.h"
#include "rl/dataset_env.h"
#include "rl/run_dir.h"
#include "rl/stop_request.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// Per-step seeds make a step's randomness independent of how the run got there (resume-exact).
uint64_t step_seed(int64_t seed, int64_t step) {
  return static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(step) * 7919ULL + 17;
}

DecisionBatch to_tensors(const data::SequenceBatch& b, double return_scale,
                         const torch::Device& device, torch::Tensor* mask) {
  const int64_t B = b.batch_size, K = b.context_len;
  auto f = torch::TensorOptions().dtype(torch::kFloat32);
  auto wrap = [&](const std::vector<float>& v, std::vector<int64_t> shape) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, f).clone().to(device);
  };
  DecisionBatch out;
  out.states = wrap(b.states, {B, K, b.obs_dim});
  out.actions = wrap(b.actions, {B, K, b.act_dim});
  out.returns_to_go = wrap(b.returns_to_go, {B, K, 1}) / return_scale;
  out.timesteps = torch::from_blob(const_cast<int64_t*>(b.timesteps.data()), {B, K}, torch::kInt64)
                      .clone()
                      .to(device);
  *mask = wrap(b.mask, {B, K});
  return out;
}

std::string hms(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

std::string env_json_path(const std::string& run_dir) {
  return (fs::path(run_dir) / "env.json").string();
}

double Agent::normalized(double ret) const {
  if (ref_max_score > ref_min_score) {
    return envs::normalized_score(ret, ref_min_score, ref_max_score);
  }
  return envs::normalized_score(env, ret);
}

void append_eval_row(const std::string& run_dir, const EvalRow& r) {
  const fs::path path = fs::path(run_dir) / "evals.csv";
  char line[160];
  std::snprintf(line, sizeof line, "%lld,%.3f,%.3f,%.3f,%.3f\n", static_cast<long long>(r.step),
                r.mean_return, r.std_return, r.mean_normalized, r.std_normalized);
  // Whole lines only: a kill can tear at most this one, which readers and resume skip; a failed
  // write (disk full) is taken back and reported naming the file.
  io::append_to_file(path.string(), line);
}

DecisionModelOptions model_options(const TrainConfig& c, int64_t obs_dim, int64_t act_dim) {
  DecisionModelOptions o;
  o.obs_dim = obs_dim;
  o.act_dim = act_dim;
  o.backbone = c.backbone;
  o.n_layers = c.n_layers;
  o.embed_dim = c.embed_dim;
  o.n_heads = c.n_heads;
  o.expansion = c.expansion;
  o.conv = c.conv;
  o.log_space = c.log_space;
  o.dropout = c.dropout;
  o.max_ep_len = c.max_ep_len;
  return o;
}

std::string default_run_dir(const std::string& config_path, int64_t seed) {
  return (fs::path("runs") / (fs::path(config_path).stem().string() + "-s" + std::to_string(seed)))
      .string();
}

TrainResult train(const TrainConfig& requested, const TrainOptions& opt) {
  // The device first: a CUDA run where none is usable is refused before anything is created, and
  // `auto` is recorded in config.yaml as the device it chose.
  const core::DeviceChoice choice = core::resolve_device(requested.device, "device");
  if (requested.device == "auto")
    std::fprintf(stderr, "%s\n", core::describe_choice("auto", choice).c_str());
  TrainConfig cfg = requested;
  cfg.device = choice.name;
  const fs::path run = opt.run_dir;
  const fs::path ckpt = run / "checkpoint.pt", metrics = run / "metrics.csv";
  const fs::path done = run / "done.json", config_file = run / "config.yaml";
  const fs::path evals = run / "evals.csv";
  const io::DirLock lock(run.string(), "minrnn train");  // one trainer per run dir
  // Never silently replace someone's run: a finished one, or one trained with another config.
  const RunDirTakeover takeover = take_over_run_dir(run.string(), cfg, opt.force, opt.extend);
  if (takeover.finished) {  // extended before: nothing left to train
    TrainResult result;
    result.step = result.resumed_from = cfg.max_steps;
    result.finished = true;
    result.last_loss = last_logged_loss(metrics);
    if (!opt.quiet)
      std::fprintf(stderr, "%s is already trained to max_steps %lld\n", run.c_str(),
                   static_cast<long long>(cfg.max_steps));
    return result;
  }
  fs::create_directories(run);
  io::write_file_atomically(config_file, to_yaml(cfg));

  const torch::Device device = choice.device;
  data::D4rlReadOptions read;
  read.read_infos = false;
  read.read_metadata = false;
  read.read_next_observations = false;
  const data::Dataset ds = data::load_dataset(cfg.dataset, read);
  // The environment and reference scores, checked against the data before any training.
  const DatasetEnv env = resolve_dataset_env(ds, cfg.env);
  const int64_t obs_dim = ds.data.obs_dim, act_dim = ds.data.act_dim;
  {
    nlohmann::ordered_json j;
    j["env"] = env.env;
    j["env_id"] = env.env_id;
    j["env_version"] = env.env_version;
    j["env_source"] = env.env_source;
    j["ref_min_score"] = env.ref_min_score;
    j["ref_max_score"] = env.ref_max_score;
    j["ref_source"] = env.ref_source;
    j["dataset"] = cfg.dataset;
    io::write_file_atomically(env_json_path(run.string()), j.dump(2) + "\n");
  }
  if (!opt.quiet && !env.env.empty()) {
    std::fprintf(stderr, "env %s (from %s); normalized scores with ref_min %g, ref_max %g (%s)\n",
                 env.env_id.c_str(), env.env_source.c_str(), env.ref_min_score, env.ref_max_score,
                 env.ref_source.c_str());
  }

  torch::manual_seed(static_cast<uint64_t>(cfg.seed));
  Agent agent;
  agent.config = cfg;
  agent.env = env.env;
  if (env.has_ref_scores) {
    agent.ref_min_score = env.ref_min_score;
    agent.ref_max_score = env.ref_max_score;
    agent.ref_source = env.ref_source;
  }
  agent.model = DecisionModel(model_options(cfg, obs_dim, act_dim));
  agent.model->to(device);
  agent.state_mean = torch::tensor(ds.index.state_mean);
  agent.state_std = torch::tensor(ds.index.state_std);
  core::FusedAdamW optimizer(agent.model->parameters(),
                             torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay));

  TrainResult result;
  if (!opt.quiet && takeover.extended_from > 0 && !fs::exists(ckpt)) {
    std::fprintf(stderr,
                 "%s has no checkpoint to extend from: training it again from step 0 to "
                 "max_steps %lld (what it reported at %lld is kept as *-step%lld files)\n",
                 run.c_str(), static_cast<long long>(cfg.max_steps),
                 static_cast<long long>(takeover.extended_from),
                 static_cast<long long>(takeover.extended_from));
  }
  if (fs::exists(ckpt)) {
    Agent saved = load_agent(ckpt.string(), device);
    load_optimizer_state(ckpt.string(), device, optimizer);
    torch::NoGradGuard no_grad;
    auto src = saved.model->named_parameters();
    for (auto& p : agent.model->named_parameters()) p.value().copy_(src[p.key()]);
    agent.step = result.resumed_from = saved.step;
    if (!opt.quiet && takeover.extended_from > 0) {
      std::fprintf(stderr, "extending %s from step %lld (max_steps %lld -> %lld)\n", run.c_str(),
                   static_cast<long long>(agent.step),
                   static_cast<long long>(takeover.extended_from),
                   static_cast<long long>(cfg.max_steps));
    } else if (!opt.quiet) {
      std::fprintf(stderr, "resuming %s from step %lld\n", run.c_str(),
                   static_cast<long long>(agent.step));
    }
  }
  // Rows past the checkpoint (or any at all, with none: a run killed before its first one) are
  // from steps this run does again.
  if (fs::exists(metrics)) truncate_rows(metrics, agent.step, /*header=*/true);
  if (fs::exists(evals)) truncate_rows(evals, agent.step, /*header=*/false);
  if (!fs::exists(metrics))
    io::write_file_atomically(metrics, "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n");
  io::AppendFile metrics_out(metrics.string());

  data::SamplerOptions so;
  so.batch_size = static_cast<int>(cfg.batch_size);
  so.context_len = static_cast<int>(cfg.context_len);
  so.top_fraction = cfg.top_fraction;
  data::SequenceBatch batch;
  const bool tty = isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  auto window_start = t0;
  int64_t window_steps = 0;
  const int64_t first_step = agent.step;
  bool stopped = false;
  // A kill between a checkpoint and the evaluation due at its step (the final one included) left
  // no row for it, and the loop below starts after that step: evaluate first.
  const bool eval_due =
      agent.step == cfg.max_steps || (cfg.eval_every > 0 && agent.step % cfg.eval_every == 0);
  if (opt.evaluate && agent.step > 0 && eval_due && !has_row(evals, agent.step)) {
    agent.model->eval();
    opt.evaluate(agent.step, agent);
  }

  int64_t saved_step = result.resumed_from;  // the step checkpoint.pt holds
  while (agent.step < cfg.max_steps) {
    // SIGTERM/SIGINT (rl/stop_request.h): the step in progress has finished; keep it and stop.
    if (stop_requested()) {
      if (agent.step != saved_step) save_checkpoint(ckpt.string(), agent, optimizer);
      result.interrupted = true;
      break;
    }
    const int64_t step = agent.step;  // steps done so far; this iteration makes step + 1
    so.seed = step_seed(cfg.seed, step);
    data::TrajectorySampler(ds.data, ds.index, so).sample(batch);
    torch::manual_seed(step_seed(cfg.seed, step));
    torch::Tensor mask;
    DecisionBatch b = to_tensors(batch, cfg.return_scale, device, &mask);

    // DT's schedule: lr · min(1, (step + 1) / warmup).
    const double lr =
        cfg.lr * std::min(1.0, double(step + 1) / double(std::max<int64_t>(1, cfg.warmup_steps)));
    for (auto& group : optimizer.param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
    agent.model->train();
    auto pred = agent.model->forward(b);
    auto sq = (pred - b.actions).pow(2).mean(-1);  // (B,K)
    auto loss = (sq * mask).sum() / mask.sum().clamp_min(1);
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) {
      throw std::runtime_error(
          "step " + std::to_string(step + 1) + ": loss is " + std::to_string(loss_value) +
          "; stopped. The last good checkpoint (" +
          (fs::exists(ckpt) ? ckpt.string() : std::string("none yet")) + ") is intact");
    }
    optimizer.zero_grad();
    loss.backward();
    double grad_norm = 0;
    if (cfg.grad_clip > 0) {
      grad_norm = torch::nn::utils::clip_grad_norm_(agent.model->parameters(), cfg.grad_clip);
    }
    if (!std::isfinite(grad_norm)) {
      throw std::runtime_error(
          "step " + std::to_string(step + 1) +
          ": gradient norm is not finite; stopped. The last good checkpoint is intact");
    }
    optimizer.step();
    agent.step = step + 1;
    result.last_loss = loss_value;
    ++window_steps;

    const auto now = std::chrono::steady_clock::now();
    if (agent.step % cfg.log_every == 0 || agent.step == cfg.max_steps) {
      const double window = std::chrono::duration<double>(now - window_start).count();
      const double rate = window_steps / std::max(window, 1e-9);
      const double elapsed = std::chrono::duration<double>(now - t0).count();
      std::ostringstream row;
      row << agent.step << ',' << loss_value << ',' << lr << ',' << grad_norm << ',' << rate << ','
          << elapsed << '\n';
      metrics_out.append(row.str());
      if (!opt.quiet) {
        std::fprintf(stderr, "%sstep %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s%s",
                     tty ? "\r" : "", static_cast<long long>(agent.step),
                     static_cast<long long>(cfg.max_steps), loss_value, lr, rate,
                     hms((cfg.max_steps - agent.step) / std::max(rate, 1e-9)).c_str(),
                     tty ? "   " : "\n");
      }
      window_start = now;
      window_steps = 0;
    }
    if (agent.step % cfg.checkpoint_every == 0 || agent.step == cfg.max_steps) {
      save_checkpoint(ckpt.string(), agent, optimizer);
      saved_step = agent.step;
      if (opt.stop_after >= 0 && agent.step >= opt.stop_after) {
        stopped = true;  // as if killed here: nothing after this checkpoint happens
        break;
      }
    }
    if (opt.evaluate && cfg.eval_every > 0 && agent.step % cfg.eval_every == 0 &&
        agent.step != cfg.max_steps) {
      agent.model->eval();
      opt.evaluate(agent.step, agent);
    }
  }
  if (!opt.quiet && tty) std::fprintf(stderr, "\n");
  result.step = agent.step;
  // A stop asked during the last step: its checkpoint is written; the final evaluation and
  // done.json are left to the resumed run, which does them first.
  if (stop_requested() && !stopped) result.interrupted = true;
  result.finished = agent.step >= cfg.max_steps && !stopped && !result.interrupted;
  if (result.finished) {
    if (first_step < cfg.max_steps) {  // trained here: the final evaluation
      agent.model->eval();
      if (opt.evaluate) opt.evaluate(agent.step, agent);
    } else {
      result.last_loss = last_logged_loss(metrics);
    }
    std::ostringstream js;
    js << "{\"env_id\": " << nlohmann::json(env.env_id).dump()
       << ", \"env_version\": " << env.env_version << ", \"step\": " << agent.step
       << ", \"last_loss\": " << result.last_loss << "}\n";
    io::write_file_atomically(done, js.str());
  }
  return result;
}

}  // namespace minrnn::rl
