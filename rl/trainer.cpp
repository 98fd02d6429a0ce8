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

#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "envs/registry.h"
#include "io/atomic_dir.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "ops/device.h"
#include "ops/fused_adamw.h"
#include "rl/checkpoint.h"
#include "rl/dataset_env.h"
#include "rl/run_dir.h"
#include "rl/run_events.h"
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

// The files of a run directory (trainer.h says what each holds).
struct RunFiles {
  fs::path dir, checkpoint, metrics, evals, done, config;
  explicit RunFiles(const std::string& run_dir)
      : dir(run_dir),
        checkpoint(dir / "checkpoint.pt"),
        metrics(dir / "metrics.csv"),
        evals(dir / "evals.csv"),
        done(dir / "done.json"),
        config(dir / "config.yaml") {}
};

// Removes `dir` (when not empty) at scope exit unless keep() was called.
class RemoveUnlessKept {
 public:
  explicit RemoveUnlessKept(fs::path dir) : dir_(std::move(dir)) {}
  ~RemoveUnlessKept() {
    if (!dir_.empty()) io::remove_tree(dir_);
  }
  RemoveUnlessKept(const RemoveUnlessKept&) = delete;
  RemoveUnlessKept& operator=(const RemoveUnlessKept&) = delete;
  void keep() { dir_.clear(); }

 private:
  fs::path dir_;
};

// The device first: a CUDA run where none is usable is refused before anything is created, and
// `auto` is recorded in config.yaml as the device it chose.
core::DeviceChoice choose_device(const std::string& requested) {
  const core::DeviceChoice choice = core::resolve_device(requested, "device");
  if (requested == "auto")
    std::fprintf(stderr, "%s\n", core::describe_choice("auto", choice).c_str());
  return choice;
}

// A run extended before to this very budget: nothing left to train.
TrainResult already_trained(const RunFiles& files, int64_t max_steps, bool quiet) {
  TrainResult result;
  result.step = result.resumed_from = max_steps;
  result.finished = true;
  result.last_loss = last_logged_loss(files.metrics);
  if (!quiet)
    std::fprintf(stderr, "%s is already trained to max_steps %lld\n", files.dir.c_str(),
                 static_cast<long long>(max_steps));
  return result;
}

// Training reads states, actions, rewards and flags only: no infos, metadata or next states.
data::Dataset load_training_data(const std::string& dataset) {
  data::ReadOptions read;
  read.read_infos = false;
  read.read_metadata = false;
  read.read_next_observations = false;
  return data::load_dataset(dataset, read);
}

// env.json: the environment and reference scores the run is evaluated with.
void record_env(const RunFiles& files, const std::string& dataset, const DatasetEnv& env,
                bool quiet) {
  nlohmann::ordered_json j;
  j["env"] = env.env;
  j["env_id"] = env.env_id;
  j["env_version"] = env.env_version;
  j["env_source"] = env.env_source;
  j["ref_min_score"] = env.ref_min_score;
  j["ref_max_score"] = env.ref_max_score;
  j["ref_source"] = env.ref_source;
  j["dataset"] = dataset;
  io::write_file_atomically(env_json_path(files.dir.string()), j.dump(2) + "\n");
  if (!quiet && !env.env.empty()) {
    std::fprintf(stderr, "env %s (from %s); normalized scores with ref_min %g, ref_max %g (%s)\n",
                 env.env_id.c_str(), env.env_source.c_str(), env.ref_min_score, env.ref_max_score,
                 env.ref_source.c_str());
  }
}

// A fresh agent for the data: the model initialised from the config's seed, on `device`.
Agent new_agent(const TrainConfig& cfg, const DatasetEnv& env, const data::Dataset& ds,
                const torch::Device& device) {
  torch::manual_seed(static_cast<uint64_t>(cfg.seed));
  Agent agent;
  agent.config = cfg;
  agent.env = env.env;
  if (env.has_ref_scores) {
    agent.ref_min_score = env.ref_min_score;
    agent.ref_max_score = env.ref_max_score;
    agent.ref_source = env.ref_source;
  }
  agent.model = DecisionModel(model_options(cfg, ds.data.obs_dim, ds.data.act_dim));
  agent.model->to(device);
  agent.state_mean = torch::tensor(ds.index.state_mean);
  agent.state_std = torch::tensor(ds.index.state_std);
  return agent;
}

// Loads the run's checkpoint, if any, into `agent` and `optimizer`; returns its step (0: none).
int64_t resume(const RunFiles& files, const RunDirTakeover& takeover, const torch::Device& device,
               Agent& agent, torch::optim::Optimizer& optimizer, bool quiet) {
  const long long max_steps = agent.config.max_steps, extended_from = takeover.extended_from;
  if (!fs::exists(files.checkpoint)) {
    if (!quiet && extended_from > 0) {
      std::fprintf(stderr,
                   "%s has no checkpoint to extend from: training it again from step 0 to "
                   "max_steps %lld (what it reported at %lld is kept as *-step%lld files)\n",
                   files.dir.c_str(), max_steps, extended_from, extended_from);
    }
    return 0;
  }
  Agent saved = load_agent(files.checkpoint.string(), device);
  load_optimizer_state(files.checkpoint.string(), device, optimizer);
  torch::NoGradGuard no_grad;
  auto src = saved.model->named_parameters();
  for (auto& p : agent.model->named_parameters()) p.value().copy_(src[p.key()]);
  agent.step = saved.step;
  if (!quiet && extended_from > 0) {
    std::fprintf(stderr, "extending %s from step %lld (max_steps %lld -> %lld)\n",
                 files.dir.c_str(), static_cast<long long>(agent.step), extended_from, max_steps);
  } else if (!quiet) {
    std::fprintf(stderr, "resuming %s from step %lld\n", files.dir.c_str(),
                 static_cast<long long>(agent.step));
  }
  return agent.step;
}

// Rows past the checkpoint (or any at all, with none: a run killed before its first one) are
// from steps this run does again.
void drop_rows_after(const RunFiles& files, int64_t step) {
  if (fs::exists(files.metrics)) truncate_rows(files.metrics, step, /*header=*/true);
  if (fs::exists(files.evals)) truncate_rows(files.evals, step, /*header=*/false);
  if (!fs::exists(files.metrics))
    io::write_file_atomically(files.metrics, "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n");
}

// What one optimizer step reports.
struct StepStats {
  double loss = 0, lr = 0, grad_norm = 0;
};

// One optimizer step, step + 1 of the run, on the batch and dropout of (seed, step): masked MSE,
// DT's warm-up lr · min(1, (step + 1) / warmup), grad-norm clipping, AdamW. Throws on a non-finite
// loss or gradient norm, before the weights change.
StepStats optimizer_step(Agent& agent, core::FusedAdamW& optimizer, const data::Dataset& ds,
                         data::SequenceBatch& batch, const torch::Device& device,
                         const fs::path& checkpoint) {
  const TrainConfig& cfg = agent.config;
  const int64_t step = agent.step;
  data::SamplerOptions so;
  so.batch_size = static_cast<int>(cfg.batch_size);
  so.context_len = static_cast<int>(cfg.context_len);
  so.top_fraction = cfg.top_fraction;
  so.seed = step_seed(cfg.seed, step);
  data::TrajectorySampler(ds.data, ds.index, so).sample(batch);
  torch::manual_seed(step_seed(cfg.seed, step));
  torch::Tensor mask;
  DecisionBatch b = to_tensors(batch, cfg.return_scale, device, &mask);

  StepStats stats;
  stats.lr =
      cfg.lr * std::min(1.0, double(step + 1) / double(std::max<int64_t>(1, cfg.warmup_steps)));
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(stats.lr);
  }
  agent.model->train();
  auto pred = agent.model->forward(b);
  auto sq = (pred - b.actions).pow(2).mean(-1);  // (B,K)
  auto loss = (sq * mask).sum() / mask.sum().clamp_min(1);
  stats.loss = loss.item<double>();
  if (!std::isfinite(stats.loss)) {
    throw std::runtime_error(
        "step " + std::to_string(step + 1) + ": loss is " + std::to_string(stats.loss) +
        "; stopped. The last good checkpoint (" +
        (fs::exists(checkpoint) ? checkpoint.string() : std::string("none yet")) + ") is intact");
  }
  optimizer.zero_grad();
  loss.backward();
  if (cfg.grad_clip > 0) {
    stats.grad_norm = torch::nn::utils::clip_grad_norm_(agent.model->parameters(), cfg.grad_clip);
  }
  if (!std::isfinite(stats.grad_norm)) {
    throw std::runtime_error(
        "step " + std::to_string(step + 1) +
        ": gradient norm is not finite; stopped. The last good checkpoint is intact");
  }
  optimizer.step();
  agent.step = step + 1;
  return stats;
}

// metrics.csv rows, their TensorBoard scalars and the progress line (steps, loss, lr, rate, ETA)
// every log_every steps, for training that goes on from `first_step`.
class ProgressLog {
 public:
  ProgressLog(const RunFiles& files, int64_t first_step, int64_t max_steps, bool quiet)
      : out_(files.metrics.string()),
        events_(files.dir.string(), first_step),
        max_steps_(max_steps),
        quiet_(quiet) {}
  // Ends the progress line a terminal shows in place.
  void close_line() const {
    if (!quiet_ && tty_) std::fprintf(stderr, "\n");
  }

  // After step `step` (1-based) made `stats`.
  void after(int64_t step, const StepStats& stats, int64_t log_every) {
    ++window_steps_;
    if (step % log_every != 0 && step != max_steps_) return;
    const auto now = std::chrono::steady_clock::now();
    const double window = std::chrono::duration<double>(now - window_start_).count();
    const double rate = window_steps_ / std::max(window, 1e-9);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::ostringstream row;
    row << step << ',' << stats.loss << ',' << stats.lr << ',' << stats.grad_norm << ',' << rate
        << ',' << elapsed << '\n';
    out_.append(row.str());
    events_.metrics_row(row.str());
    if (!quiet_) {
      std::fprintf(stderr, "%sstep %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s%s",
                   tty_ ? "\r" : "", static_cast<long long>(step),
                   static_cast<long long>(max_steps_), stats.loss, stats.lr, rate,
                   hms((max_steps_ - step) / std::max(rate, 1e-9)).c_str(), tty_ ? "   " : "\n");
    }
    window_start_ = now;
    window_steps_ = 0;
  }

  // After the evaluation of `step` appended its evals.csv row.
  void evaluated(int64_t step) { events_.eval_at(step); }

 private:
  io::AppendFile out_;
  RunEvents events_;
  int64_t max_steps_;
  bool quiet_;
  bool tty_ = isatty(STDERR_FILENO);
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point window_start_ = start_;
  int64_t window_steps_ = 0;
};

void evaluate(const TrainOptions& opt, Agent& agent, ProgressLog& log) {
  agent.model->eval();
  if (!opt.evaluate) return;
  opt.evaluate(agent.step, agent);
  log.evaluated(agent.step);
}

// Why the step loop ended.
enum class LoopEnd { kMaxSteps, kStopSignal, kStopAfter };

// Steps until max_steps, a stop signal (the step in progress checkpointed) or opt.stop_after (as
// if killed right after that checkpoint), with checkpoints and evaluations at their cadence.
LoopEnd run_steps(Agent& agent, core::FusedAdamW& optimizer, const data::Dataset& ds,
                  const torch::Device& device, const RunFiles& files, const TrainOptions& opt,
                  ProgressLog& log, TrainResult& result) {
  const TrainConfig& cfg = agent.config;
  data::SequenceBatch batch;        // reused: its buffers keep their capacity
  int64_t saved_step = agent.step;  // the step checkpoint.pt holds
  while (agent.step < cfg.max_steps) {
    // SIGTERM/SIGINT (rl/stop_request.h): the step in progress has finished; keep it and stop.
    if (stop_requested()) {
      if (agent.step != saved_step) save_checkpoint(files.checkpoint.string(), agent, optimizer);
      return LoopEnd::kStopSignal;
    }
    const StepStats stats = optimizer_step(agent, optimizer, ds, batch, device, files.checkpoint);
    result.last_loss = stats.loss;
    log.after(agent.step, stats, cfg.log_every);
    if (agent.step % cfg.checkpoint_every == 0 || agent.step == cfg.max_steps) {
      save_checkpoint(files.checkpoint.string(), agent, optimizer);
      saved_step = agent.step;
      if (opt.stop_after >= 0 && agent.step >= opt.stop_after) return LoopEnd::kStopAfter;
    }
    if (cfg.eval_every > 0 && agent.step % cfg.eval_every == 0 && agent.step != cfg.max_steps)
      evaluate(opt, agent, log);
  }
  return LoopEnd::kMaxSteps;
}

// done.json: what the sweep and the report read to know the run is finished.
void write_done(const RunFiles& files, const DatasetEnv& env, int64_t step, double last_loss) {
  std::ostringstream js;
  js << "{\"env_id\": " << nlohmann::json(env.env_id).dump()
     << ", \"env_version\": " << env.env_version << ", \"step\": " << step
     << ", \"last_loss\": " << last_loss << "}\n";
  io::write_file_atomically(files.done, js.str());
}

}  // namespace

std::string env_json_path(const std::string& run_dir) {
  return (fs::path(run_dir) / "env.json").string();
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

std::string default_run_dir(const std::string& config_path, int64_t seed) {
  return (fs::path("runs") / (fs::path(config_path).stem().string() + "-s" + std::to_string(seed)))
      .string();
}

TrainResult train(const TrainConfig& requested, const TrainOptions& opt) {
  const core::DeviceChoice choice = choose_device(requested.device);
  TrainConfig cfg = requested;
  cfg.device = choice.name;
  const RunFiles files(opt.run_dir);
  const bool fresh = !fs::exists(files.dir);
  const io::DirLock lock(files.dir.string(), "minrnn train");  // one trainer per run dir
  // A run dir this call creates and then cannot fill (bad data, a typo) is removed again.
  RemoveUnlessKept new_dir(fresh ? files.dir : fs::path());
  // Never silently replace someone's run: a finished one, or one trained with another config.
  const RunDirTakeover takeover = plan_takeover(files.dir.string(), cfg, opt.force, opt.extend);
  if (takeover.finished) return already_trained(files, cfg.max_steps, opt.quiet);

  // The data, its environment (checked against the data) and the model load before the run dir
  // changes: a typo in the dataset or a key costs the old run nothing, and leaves no config.yaml
  // that would refuse the corrected command.
  const data::Dataset ds = load_training_data(cfg.dataset);
  const DatasetEnv env = resolve_dataset_env(ds, cfg.env);
  Agent agent = new_agent(cfg, env, ds, choice.device);
  apply_takeover(files.dir.string(), takeover, cfg);
  fs::create_directories(files.dir);
  io::write_file_atomically(files.config, to_yaml(cfg));
  new_dir.keep();
  record_env(files, cfg.dataset, env, opt.quiet);
  core::FusedAdamW optimizer(agent.model->parameters(),
                             torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay));
  TrainResult result;
  result.resumed_from = resume(files, takeover, choice.device, agent, optimizer, opt.quiet);
  drop_rows_after(files, agent.step);
  const int64_t first_step = agent.step;
  ProgressLog log(files, first_step, cfg.max_steps, opt.quiet);

  // A kill between a checkpoint and the evaluation due at its step (the final one included) left
  // no row for it, and the loop starts after that step: evaluate first.
  const bool eval_due =
      agent.step == cfg.max_steps || (cfg.eval_every > 0 && agent.step % cfg.eval_every == 0);
  if (agent.step > 0 && eval_due && !has_row(files.evals, agent.step) && opt.evaluate)
    evaluate(opt, agent, log);

  const LoopEnd end = run_steps(agent, optimizer, ds, choice.device, files, opt, log, result);
  log.close_line();
  result.step = agent.step;
  // A stop asked during the last step: its checkpoint is written; the final evaluation and
  // done.json are left to the resumed run, which does them first.
  result.interrupted =
      end == LoopEnd::kStopSignal || (end != LoopEnd::kStopAfter && stop_requested());
  result.finished = end == LoopEnd::kMaxSteps && !result.interrupted;
  if (!result.finished) return result;
  if (first_step < cfg.max_steps) {
    evaluate(opt, agent, log);  // trained here: the final evaluation
  } else {
    result.last_loss = last_logged_loss(files.metrics);
  }
  write_done(files, env, agent.step, result.last_loss);
  return result;
}

}  // namespace minrnn::rl
