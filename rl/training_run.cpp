#include "rl/training_run.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "datasets/catalog.h"
#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "envs/registry.h"
#include "io/atomic_dir.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/input_file.h"
#include "io/name_list.h"
#include "io/progress_line.h"
#include "kernels/math/dropout_math.h"
#include "ops/cuda_graph.h"
#include "ops/device.h"
#include "ops/fused_adamw.h"
#include "rl/checkpoint.h"
#include "rl/dataset_env.h"
#include "rl/progress_log.h"
#include "rl/run_dir.h"
#include "rl/run_evaluations.h"
#include "rl/run_files.h"
#include "rl/run_start.h"
#include "rl/stacked_pack.h"
#include "rl/stop_request.h"
#include "rl/train_step.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// Per-step seeds make a step's randomness independent of how the run got there (resume-exact).
uint64_t step_seed(int64_t seed, int64_t step) {
  return static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(step) * 7919ULL + 17;
}

// The device first: a CUDA run where none is usable is refused before anything is created, and
// `auto` is recorded in config.yaml as the device it chose. Said once a process: a pack's runs
// choose alike.
core::DeviceChoice choose_device(const std::string& requested) {
  const core::DeviceChoice choice = core::resolve_device(requested, "device");
  core::say_choice(requested, choice);
  return choice;
}

// Why the step loop ended.
enum class LoopEnd { kRunning, kMaxSteps, kStopSignal, kStopAfter, kAlreadyTrained };

}  // namespace

// Training reads states, actions, rewards and flags only: no infos, metadata or next states.
std::shared_ptr<const data::Dataset> load_training_data(const std::string& dataset) {
  // A path not there: the key named, and where a relative one was looked for (not beside the
  // config, as its `defaults:` are).
  std::error_code ec;
  if (const data::DatasetLocation at = data::locate_dataset(dataset);
      !at.present && at.where == dataset &&
      fs::status(dataset, ec).type() == fs::file_type::not_found) {
    const bool relative = fs::path(dataset).is_relative();
    throw std::invalid_argument(
        "config key dataset: " + io::no_such(dataset, "file") +
        (relative ? " (a relative path is read from the folder minrnn runs in, " +
                        fs::current_path(ec).string() + ")"
                  : ""));
  }
  return std::make_shared<const data::Dataset>(
      data::load_dataset(dataset, data::ReadOptions{}.only_what_training_reads()));
}

// Declared in the order it is built: the lock before anything touches the run dir, the guard that
// removes a run dir this run created and could not fill, the data and agent before the take-over.
struct TrainingRun::State {
  TrainOptions opt;
  core::DeviceChoice choice;
  core::WorkStream stream;  // CUDA: the run's own, so that a pack's runs overlap on the GPU
  TrainConfig cfg;
  RunFiles files;
  bool fresh;
  io::DirLock lock;
  RemoveUnlessKept new_dir;
  RunDirTakeover takeover;
  std::shared_ptr<const data::Dataset> ds;
  DatasetEnv env;
  Agent agent;
  std::unique_ptr<core::FusedAdamW> optimizer;
  std::unique_ptr<TrainStep> train_step;
  std::unique_ptr<ProgressLog> log;
  std::unique_ptr<RunEvaluations> evaluations;
  std::optional<data::TrajectorySampler> sampler;
  data::SequenceBatch batch;  // reused: its buffers keep their capacity
  TrainResult result;
  int64_t first_step = 0, saved_step = 0;  // where this process started; what checkpoint.pt holds
  LoopEnd end = LoopEnd::kRunning;
  StackedPack* pack = nullptr;  // while the run is a seat of one (join_pack)
  int64_t seat = 0;

  State(const TrainConfig& requested, const TrainOptions& options)
      : opt(options),
        choice(choose_device(requested.device)),
        stream(choice.device.is_cuda()),
        cfg(with_device(requested, choice.name)),
        files(options.run_dir),
        fresh(is_fresh(files, options)),
        lock(files.dir.string(), "minrnn train"),
        new_dir(fresh ? files.dir : fs::path()),
        takeover(plan(files, cfg, opt)) {}

  // Whether the run dir is new. --extend of a folder that is not there, beside a run of a name
  // close to it, is a slip of the name (walk 47: `--run-dir runs/stres --extend` trained a new
  // run from step 0 beside runs/stress): refused, before the lock makes the folder.
  static bool is_fresh(const RunFiles& files, const TrainOptions& o) {
    if (fs::exists(files.dir)) return false;
    const std::string near = o.extend ? io::nearby_name(files.dir.string()) : "";
    const fs::path meant = files.dir.parent_path() / near;
    if (!near.empty() && RunFiles(meant).holds_run()) {
      throw std::invalid_argument(files.dir.string() + ": --extend, but no run is here" +
                                  io::did_you_mean_text(meant.string()) +
                                  "; without --extend a new run starts here");
    }
    return true;
  }

  // Never silently replace someone's run: a finished one, or one trained with another config.
  static RunDirTakeover plan(const RunFiles& files, const TrainConfig& cfg, const TrainOptions& o) {
    const bool finished_as_asked =
        o.finished_is_done && !o.force && fs::exists(files.done) &&
        compare_stored_config(files.dir.string(), cfg).differences.empty();
    if (finished_as_asked) {
      RunDirTakeover done;
      done.finished = true;
      return done;
    }
    return plan_takeover(files.dir.string(), cfg, o.force, o.extend);
  }

  static TrainConfig with_device(TrainConfig c, const std::string& device) {
    c.device = device;
    return c;
  }

  // Throws when a step so far was not finite (rl/train_step.h): before anything is saved or
  // reported from the weights.
  void check_finite() {
    const std::string failure = pack ? pack->failure(seat) : train_step->failure();
    if (failure.empty()) return;
    throw std::runtime_error(
        failure + "; stopped. The last good checkpoint (" +
        (fs::exists(files.checkpoint) ? files.checkpoint.string() : std::string("none yet")) +
        ") is intact");
  }

  // The checkpoint of the current step; an evaluation in flight finishes first, because a resume
  // from a later checkpoint would never redo it (rl/run_evaluations.h).
  void save() {
    evaluations->wait();
    const int64_t cut_short = evaluations->stopped_at();
    if (cut_short >= 0 && cut_short != agent.step) return;  // the resume goes back to redo it
    sync_weights();
    save_checkpoint(files.checkpoint.string(), agent, *optimizer);
    saved_step = agent.step;
  }

  // The agent's weights and optimizer as the steps left them (a pack's are written back).
  void sync_weights() {
    if (pack) pack->write_back(seat);
  }

  void evaluate() {
    sync_weights();
    evaluations->start(agent);
  }

  bool overlap_evaluations() const {
    return opt.eval_timing == EvalTiming::kOverlapped ||
           (opt.eval_timing == EvalTiming::kAuto && choice.device.is_cuda());
  }
};

TrainingRun::TrainingRun(const TrainConfig& requested, const TrainOptions& opt,
                         std::shared_ptr<const data::Dataset> data)
    : s_(std::make_unique<State>(requested, opt)) {
  State& s = *s_;
  const core::WorkStream::Scope on_stream(s.stream);
  if (s.takeover.finished) {  // extended before to this very budget
    s.result = already_trained(s.files, s.cfg.max_steps, opt.quiet);
    s.end = LoopEnd::kAlreadyTrained;
    return;
  }
  // The data, its environment (checked against the data) and the model load before the run dir
  // changes: a typo in the dataset or a key costs the old run nothing, and leaves no config.yaml
  // that would refuse the corrected command.
  const bool side_work = side_work_for(!opt.in_pack);  // a bad MINRNN_SIDE_WORK refused here
  s.ds = data ? std::move(data) : load_training_data(s.cfg.dataset);
  s.env = resolve_dataset_env(*s.ds, s.cfg.env);
  if (opt.evaluate) {  // every run the CLI trains evaluates at its end, at the latest
    const std::string why = why_no_env_to_evaluate(*s.ds, s.env);
    if (!why.empty()) throw std::invalid_argument(why);
  }
  if (!s.env.warning.empty()) io::ProgressLine::on_stderr().message("warning: " + s.env.warning);
  s.sampler.emplace(make_sampler(s.cfg, *s.ds));
  check_fits_in_memory(s.cfg, s.ds->data.obs_dim, s.ds->data.act_dim, s.choice.device.is_cpu());
  if (!opt.quiet && s.fresh) note_config_against_data(s.cfg, *s.ds);
  if (!s.fresh && !s.takeover.remove_outputs) {
    check_same_data(s.files, *s.ds);
    // Its curve goes on, unless an extension without a checkpoint moves it aside.
    if (s.takeover.extended_from == 0 || fs::exists(s.files.checkpoint))
      check_metrics_header(s.files);
  }
  s.agent = new_agent(s.cfg, s.env, *s.ds, s.choice.device);
  s.optimizer = std::make_unique<core::FusedAdamW>(
      s.agent.model->parameters(),
      torch::optim::AdamWOptions(s.cfg.lr).weight_decay(s.cfg.weight_decay));
  // The checkpoint loads (and is this config's) before anything in the run dir changes: a failed
  // resume left config.yaml and env.json rewritten, and the right command refused.
  s.result.resumed_from =
      resume(s.files, s.takeover, s.choice.device, s.agent, *s.optimizer, opt.quiet);
  apply_takeover(s.files.dir.string(), s.takeover, s.cfg);
  if (opt.extend && s.fresh && !opt.quiet) {
    io::ProgressLine::on_stderr().message(s.files.dir.string() +
                                          ": --extend, but no run is here yet: training one from "
                                          "step 0");
  }
  fs::create_directories(s.files.dir);
  io::write_file_atomically(s.files.config, to_yaml(s.cfg));
  record_env(s.files, s.cfg.dataset, *s.ds, s.env, opt.quiet);
  drop_rows_after(s.files, s.agent.step);
  s.train_step = std::make_unique<TrainStep>(s.agent, *s.optimizer, s.choice.device,
                                             opt.cuda_graph ? StepMode::kGraph : StepMode::kEager);
  s.train_step->set_side_work(side_work);
  s.first_step = s.saved_step = s.agent.step;
  s.log = std::make_unique<ProgressLog>(s.files.dir.string(), s.first_step, s.cfg, opt.quiet,
                                        opt.in_pack);
  if (!opt.quiet && !opt.start_message.empty())
    io::ProgressLine::on_stderr().message_once(opt.start_message);
  s.evaluations = std::make_unique<RunEvaluations>(opt.evaluate, s.overlap_evaluations(), *s.log);

  // A kill between a checkpoint and the evaluation due at its step (the final one included) left
  // no row for it, and the steps start after that step: evaluate first.
  const bool eval_due = s.agent.step == s.cfg.max_steps ||
                        (s.cfg.eval_every > 0 && s.agent.step % s.cfg.eval_every == 0);
  if (s.agent.step > 0 && eval_due && !has_row(s.files.evals, s.agent.step))
    s.evaluations->start(s.agent);
  if (s.agent.step >= s.cfg.max_steps) s.end = LoopEnd::kMaxSteps;
}

TrainingRun::~TrainingRun() = default;

bool TrainingRun::stepped_out() const {
  return s_->end != LoopEnd::kRunning;
}
const TrainConfig& TrainingRun::config() const {
  return s_->cfg;
}
const std::string& TrainingRun::run_dir() const {
  return s_->opt.run_dir;
}

void TrainingRun::step() {
  const std::optional<StepInputs> in = prepare_step();
  if (!in) return;
  try {
    const core::WorkStream::Scope on_stream(s_->stream);
    s_->train_step->run(*in->batch, in->lr, in->dropout_base);
  } catch (const std::exception& e) {
    throw_with_batch_shape(e);
  }
  complete_step();
}

// An allocation the step could not make names the keys that size its batch (LibTorch's message
// names only bytes); any other error goes on as it was.
[[noreturn]] void TrainingRun::throw_with_batch_shape(const std::exception& e) const {
  if (!is_out_of_memory(e)) throw;
  const TrainConfig& c = s_->cfg;
  throw std::runtime_error(
      "step " + std::to_string(s_->agent.step + 1) + ": out of memory: a batch is batch_size " +
      std::to_string(c.batch_size) + " × context_len " + std::to_string(c.context_len) +
      " steps of embed_dim " + std::to_string(c.embed_dim) + " through " +
      std::to_string(c.n_layers) + " layers; lower them (" + e.what() + ")");
}

std::optional<TrainingRun::StepInputs> TrainingRun::prepare_step() {
  State& s = *s_;
  if (stepped_out()) return std::nullopt;
  const core::WorkStream::Scope on_stream(s.stream);
  s.evaluations->collect_finished();
  // SIGTERM/SIGINT (rl/stop_request.h): the step in progress has finished; keep it and stop.
  if (stop_requested()) {
    if (s.agent.step != s.saved_step) {
      s.check_finite();
      s.save();
    }
    s.end = LoopEnd::kStopSignal;
    return std::nullopt;
  }
  s.sampler->reseed(step_seed(s.cfg.seed, s.agent.step));
  s.sampler->sample(s.batch);
  return StepInputs{&s.batch, warmup_lr(s.cfg, s.agent.step),
                    core::dropout_math::mix(step_seed(s.cfg.seed, s.agent.step))};
}

void TrainingRun::complete_step() {
  State& s = *s_;
  const core::WorkStream::Scope on_stream(s.stream);
  // On the CPU reading the flag costs nothing: stop at the very step, as before a device ran ahead.
  if (s.choice.device.is_cpu()) s.check_finite();
  // A run dir made here is kept once a step has run: one whose first step failed (its batch did not
  // fit, a loss not finite) is removed, so its config.yaml cannot refuse the corrected command.
  s.new_dir.keep();
  s.log->after(s.agent.step, s.cfg.log_every, [&] {
    s.check_finite();
    const StepStats stats = s.pack ? s.pack->last_stats(s.seat) : s.train_step->last_stats();
    s.result.last_loss = stats.loss;
    return stats;
  });
  if (s.agent.step % s.cfg.checkpoint_every == 0 || s.agent.step == s.cfg.max_steps) {
    s.check_finite();
    s.save();
    if (s.opt.stop_after >= 0 && s.agent.step >= s.opt.stop_after) {
      s.end = LoopEnd::kStopAfter;  // as if killed here: nothing after this checkpoint happens
      return;
    }
  }
  if (s.cfg.eval_every > 0 && s.agent.step % s.cfg.eval_every == 0 &&
      s.agent.step != s.cfg.max_steps) {
    s.check_finite();
    s.evaluate();
  }
  if (s.agent.step >= s.cfg.max_steps) s.end = LoopEnd::kMaxSteps;
}

void TrainingRun::join_pack(StackedPack& pack, int64_t seat) {
  State& s = *s_;
  {
    // The pack reads the agent on its own stream: what this run's queued first is done.
    const core::WorkStream::Scope on_stream(s.stream);
    core::drain_current_stream(s.choice.device.is_cuda());
  }
  s.pack = &pack;
  s.seat = seat;
}

void TrainingRun::leave_pack() {
  State& s = *s_;
  s.sync_weights();
  s.pack = nullptr;
}

Agent& TrainingRun::agent() {
  return s_->agent;
}

core::FusedAdamW& TrainingRun::optimizer() {
  return *s_->optimizer;
}

void TrainingRun::failed() {
  if (s_->log) s_->log->failed();
}

TrainResult TrainingRun::finish() {
  State& s = *s_;
  if (s.end == LoopEnd::kAlreadyTrained) return s.result;
  const core::WorkStream::Scope on_stream(s.stream);
  s.evaluations->wait();
  s.log->close_line();
  TrainResult& result = s.result;
  result.step = s.agent.step;
  // A stop asked during the last step: its checkpoint is written; the final evaluation and
  // done.json are left to the resumed run, which does them first.
  result.interrupted =
      s.end == LoopEnd::kStopSignal || (s.end != LoopEnd::kStopAfter && stop_requested());
  result.finished = s.end == LoopEnd::kMaxSteps && !result.interrupted;
  if (!result.finished) return result;
  if (s.first_step < s.cfg.max_steps) {  // trained here: the final evaluation
    s.evaluate();
    s.evaluations->wait();
    if (s.evaluations->stopped_at() >= 0) {  // cut short: the resume evaluates first
      result.interrupted = true;
      result.finished = false;
      return result;
    }
  } else {
    result.last_loss = last_metrics_row(s.files.metrics).value_or(MetricsRow{}).loss;
  }
  write_done(s.files, s.env, s.agent.step, result.last_loss);
  s.log->finished();
  return result;
}

}  // namespace minrnn::rl
