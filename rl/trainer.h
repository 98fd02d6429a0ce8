// Offline training of a decision agent (DT recipe): sample K-step windows, predict each action from
// the state token, masked MSE, AdamW with linear warm-up and grad-norm clipping.
//
// A run directory holds config.yaml (resolved config), metrics.csv (step,loss,lr,grad_norm,
// steps_per_s,elapsed_s), evals.csv (the `evaluate` callback's rows, see append_eval_row),
// checkpoint.pt (model, optimizer, step, state mean/std, config; written to a temporary file and
// renamed), TensorBoard event files mirroring the CSV rows (events.out.tfevents.*, see
// rl/run_events.h) and, once finished, done.json. Calling train() again on an unfinished run
// resumes from its checkpoint: rows of metrics.csv and evals.csv after the checkpoint's step are
// dropped (the resumed run writes them again), and an evaluation due at the checkpoint's step that
// never wrote its row is run first. So a run killed right after its last checkpoint gets its final
// evaluation and done.json on rerun. Every step's randomness (batch and dropout) is seeded from
// (seed, step), so a resumed run on CPU ends with exactly the weights of an uninterrupted one. A
// SIGTERM or SIGINT (after rl::install_stop_handlers) ends the step in progress, checkpoints it and
// returns `interrupted`.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "rl/agent.h"
#include "rl/config.h"
#include "rl/evaluation_progress.h"
#include "rl/run_dir.h"

namespace minrnn::rl {

enum class EvalTiming { kAuto, kInline, kOverlapped };

struct TrainOptions {
  std::string run_dir;
  // Allow replacing a finished run (or one with another config): every output of the old run
  // (rl::is_run_output) is removed first, so nothing of it can mix into the new one.
  bool force = false;
  // Allow going on with a run trained to a smaller max_steps, its config otherwise the same
  // (rl/run_dir.h: plan_takeover). What the finished run reported is kept beside it.
  bool extend = false;
  bool quiet = false;  // no progress line
  // Said once (a pack's runs giving the same say it once) when the run starts training, after
  // every check passed, unless quiet: `minrnn train`'s "watch it: tensorboard --logdir ...".
  std::string start_message;
  // A run already finished with this very config is done, not refused (train_pack sets it, so
  // that the same pack command after a kill resumes the others; `minrnn train` for every run).
  // Unset, train() refuses it.
  bool finished_is_done = false;
  // One of a pack's runs (train_pack sets it): stepped as a stream of its own, other runs' kernels
  // share the GPU with its own, so its weight gradients stay on its stream (side_work_for); a
  // stacked pack's one step decides its own.
  bool in_pack = false;
  // Stop as if killed right after this step's checkpoint (tests; at max_steps: before the final
  // evaluation and done.json); -1 = run to the end.
  int64_t stop_after = -1;
  // On CUDA, replay each step as a captured CUDA graph (rl/train_step.h); false: eager steps.
  bool cuda_graph = true;
  // Periodic evaluations in line (training waits) or overlapped with training, each on a CPU copy
  // of the weights on a thread of its own (rl/run_evaluations.h); auto: overlapped on CUDA.
  EvalTiming eval_timing = EvalTiming::kAuto;
  // Called every config.eval_every steps (if > 0) and after the last one, with the model in eval().
  // It should record its result with append_eval_row, which is how a resume knows it happened
  // (and where the run's TensorBoard events take it from).
  // It may report how far it has got to `progress`, which the progress line shows while training
  // waits for it.
  Evaluate evaluate;
};

struct TrainResult {
  int64_t step = 0;          // steps done
  int64_t resumed_from = 0;  // step of the checkpoint we started from (0 = fresh)
  double last_loss = 0;
  bool finished = false;
  // Stopped on a stop signal (rl/stop_request.h) after the step in progress, its checkpoint
  // written: training again resumes there (and on CPU ends with an uninterrupted run's weights).
  bool interrupted = false;
  std::string error;  // train_pack: why this run failed ("" when it did not)
};

TrainResult train(const TrainConfig& config, const TrainOptions& options);

// A pack: several runs trained in one process, one optimizer step of each in turn, each exactly
// as train() trains it alone — its own seed and random streams, optimizer, run dir, checkpoint,
// logs and evaluations, so on the CPU it ends with the same weights — while runs of one dataset
// share its loaded data. A run that fails (a config that does not load, a non-finite loss) fails
// alone: its result's `error` says why and the others go on. A stop signal stops every run after
// its step in progress, each checkpointed.
struct PackMember {
  TrainConfig config;
  TrainOptions options;
};
std::vector<TrainResult> train_pack(const std::vector<PackMember>& members);
// Whether train_pack trains a pack's runs of one shape as one stacked model (rl/stacked_pack.h)
// on CUDA (`on_cuda`) or the CPU: on CUDA unless MINRNN_STACKED_PACK=0 (on an H200, 2026-11-28,
// 14–27 % more run-steps/s than a stream a run at P 15–32 in fp32, 30–45 % in TF32), on the
// CPU only where MINRNN_STACKED_PACK=1 asks (there each op runs a run at a time: ~10 % slower).
// Throws std::invalid_argument naming the variable for a value other than 0 or 1.
bool packs_stack(bool on_cuda);
// Whether a step on CUDA queues its weight gradients on a side stream beside its backward
// (ops/side_work.h): for one model's step — a run trained alone, a stacked pack's one step
// (rl/stacked_pack.h) — unless MINRNN_SIDE_WORK=0 (on an H200, 2026-11-28: 0.82 → 0.75 ms a
// minGRU step, 1.07 → 0.93 a Transformer's; 2026-11-30: a stacked pack of 32 minGRU runs 3 099
// → 3 146 run-steps/s, of 64 3 249 → 3 266); for a pack of streams, whose runs fill the GPU with
// each other's kernels instead, only where MINRNN_SIDE_WORK=1 asks. Throws std::invalid_argument
// naming the variable for a value other than 0 or 1.
bool side_work_for(bool one_model);

// One evaluation during training, a row of <run_dir>/evals.csv (evals_columns(), rl/run_dir.h:
// step,mean_return,std_return,mean_normalized,std_normalized; a new file starts with that header).
struct EvalRow {
  int64_t step = 0;
  double mean_return = 0, std_return = 0, mean_normalized = 0, std_normalized = 0;
};
void append_eval_row(const std::string& run_dir, const EvalRow& row);

// Turns a run's `--set`-less defaults path into a default run dir: runs/<config stem>-s<seed>.
std::string default_run_dir(const std::string& config_path, int64_t seed);

}  // namespace minrnn::rl
