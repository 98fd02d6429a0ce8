#include "rl/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "envs/registry.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

void save_checkpoint(const fs::path& path, Agent& agent, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive, model_archive, optim_archive;
  agent.model->save(model_archive);
  optimizer.save(optim_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optim_archive);
  archive.write("step", torch::tensor(agent.step));
  archive.write("act_dim", torch::tensor(agent.model->options().act_dim));
  archive.write("state_mean", agent.state_mean);
  archive.write("state_std", agent.state_std);
  archive.write("config", c10::IValue(to_yaml(agent.config)));
  archive.write("env", c10::IValue(agent.env));
  io::replace_file_atomically(path.string(), [&](const std::string& tmp) { archive.save_to(tmp); });
}

// Keeps the metrics rows of steps ≤ `step` (a resumed run redoes the rest).
void truncate_metrics(const fs::path& path, int64_t step) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (kept.empty() || std::stoll(line.substr(0, line.find(','))) <= step) kept += line + "\n";
  }
  io::write_file_atomically(path, kept);
}

std::string hms(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

DecisionModelOptions model_options(const TrainConfig& c, int64_t obs_dim, int64_t act_dim) {
  DecisionModelOptions o;
  o.obs_dim = obs_dim;
  o.act_dim = act_dim;
  o.backbone = c.backbone;
  o.n_layers = c.n_layers;
  o.embed_dim = c.embed_dim;
  o.n_heads = c.n_heads;
  o.expansion = c.expansion;
  o.dropout = c.dropout;
  o.max_ep_len = c.max_ep_len;
  return o;
}

std::string default_run_dir(const std::string& config_path, int64_t seed) {
  return (fs::path("runs") / (fs::path(config_path).stem().string() + "-s" + std::to_string(seed)))
      .string();
}

Agent load_agent(const std::string& run_dir_or_file, const torch::Device& device) {
  fs::path path = run_dir_or_file;
  if (fs::is_directory(path)) path /= "checkpoint.pt";
  if (!fs::exists(path)) throw std::invalid_argument(path.string() + ": no checkpoint here");
  torch::serialize::InputArchive archive, model_archive;
  c10::IValue config_text, env;
  Agent agent;
  torch::Tensor step;
  try {
    // Onto `device` as it is read: a CUDA-written archive cannot even be read where there is no
    // GPU otherwise, and resume needs its optimizer state beside the parameters.
    archive.load_from(path.string(), device);
    archive.read("config", config_text);
    archive.read("env", env);
    archive.read("step", step);
    archive.read("state_mean", agent.state_mean);
    archive.read("state_std", agent.state_std);
    agent.config = parse_config(config_text.toStringRef(), path.string() + " (config)");
    agent.env = env.toStringRef();
    agent.step = step.item<int64_t>();
    const int64_t obs_dim = agent.state_mean.size(0);
    torch::Tensor act_dim;
    archive.read("act_dim", act_dim);
    archive.read("model", model_archive);
    agent.model = DecisionModel(model_options(agent.config, obs_dim, act_dim.item<int64_t>()));
    agent.model->load(model_archive);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path.string() +
                             ": not a readable minrnn checkpoint: " + e.what_without_backtrace());
  }
  agent.model->to(device);
  agent.model->eval();
  agent.state_mean = agent.state_mean.to(torch::kCPU);
  agent.state_std = agent.state_std.to(torch::kCPU);
  return agent;
}

TrainResult train(const TrainConfig& cfg, const TrainOptions& opt) {
  const fs::path run = opt.run_dir;
  const fs::path ckpt = run / "checkpoint.pt", metrics = run / "metrics.csv";
  const fs::path done = run / "done.json", config_file = run / "config.yaml";
  const std::string config_yaml = to_yaml(cfg);
  const io::DirLock lock(run.string(), "minrnn train");  // one trainer per run dir
  // Never silently replace someone's run: a finished one, or one trained with another config.
  if (fs::exists(done) && !opt.force) {
    throw std::runtime_error(run.string() + " holds a finished run; pass --force to retrain it");
  }
  if (fs::exists(config_file) && read_text(config_file) != config_yaml && !opt.force) {
    throw std::runtime_error(run.string() + "/config.yaml differs from this config; use another " +
                             "--run-dir or --force");
  }
  if (opt.force) {
    for (const auto& p : {ckpt, metrics, done}) fs::remove(p);
  }
  fs::create_directories(run);
  io::write_file_atomically(config_file, config_yaml);

  const torch::Device device(cfg.device);
  data::D4rlReadOptions read;
  read.read_infos = false;
  read.read_metadata = false;
  read.read_next_observations = false;
  const data::Dataset ds = data::load_dataset(cfg.dataset, read);
  const std::string env = cfg.env.empty() ? ds.env : cfg.env;
  const int64_t obs_dim = ds.data.obs_dim, act_dim = ds.data.act_dim;

  torch::manual_seed(static_cast<uint64_t>(cfg.seed));
  Agent agent;
  agent.config = cfg;
  agent.env = env;
  agent.model = DecisionModel(model_options(cfg, obs_dim, act_dim));
  agent.model->to(device);
  agent.state_mean = torch::tensor(ds.index.state_mean);
  agent.state_std = torch::tensor(ds.index.state_std);
  torch::optim::AdamW optimizer(agent.model->parameters(),
                                torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay));

  TrainResult result;
  if (fs::exists(ckpt)) {
    Agent saved = load_agent(ckpt.string(), device);
    torch::serialize::InputArchive archive, optim_archive;
    archive.load_from(ckpt.string(), device);
    archive.read("optimizer", optim_archive);
    optimizer.load(optim_archive);
    torch::NoGradGuard no_grad;
    auto src = saved.model->named_parameters();
    for (auto& p : agent.model->named_parameters()) p.value().copy_(src[p.key()]);
    agent.step = result.resumed_from = saved.step;
    if (fs::exists(metrics)) truncate_metrics(metrics, agent.step);
    if (!opt.quiet)
      std::fprintf(stderr, "resuming %s from step %lld\n", run.c_str(),
                   static_cast<long long>(agent.step));
  }
  if (!fs::exists(metrics))
    io::write_file_atomically(metrics, "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n");
  std::ofstream metrics_out(metrics, std::ios::app);

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

  while (agent.step < cfg.max_steps) {
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
      metrics_out << agent.step << ',' << loss_value << ',' << lr << ',' << grad_norm << ',' << rate
                  << ',' << elapsed << '\n';
      metrics_out.flush();
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
      save_checkpoint(ckpt, agent, optimizer);
      if (opt.stop_after >= 0 && agent.step >= opt.stop_after) break;
    }
    if (opt.evaluate && cfg.eval_every > 0 && agent.step % cfg.eval_every == 0 &&
        agent.step != cfg.max_steps) {
      agent.model->eval();
      opt.evaluate(agent.step, agent);
    }
  }
  if (!opt.quiet && tty) std::fprintf(stderr, "\n");
  result.step = agent.step;
  result.finished = agent.step >= cfg.max_steps;
  if (result.finished && first_step < cfg.max_steps) {
    agent.model->eval();
    if (opt.evaluate) opt.evaluate(agent.step, agent);
    std::ostringstream js;
    js << "{\"step\": " << agent.step << ", \"last_loss\": " << result.last_loss << "}\n";
    io::write_file_atomically(done, js.str());
  }
  return result;
}

}  // namespace minrnn::rl
