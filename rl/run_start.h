// What a run checks and builds before its first step (rl/training_run.cpp): whether its training
// fits in memory, what its config makes of the data, its fresh agent, its sampler, its resume
// from a checkpoint, and the warm-up's learning rate.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "rl/agent.h"
#include "rl/dataset_env.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::rl {

// Throws std::invalid_argument naming n_layers, embed_dim, max_ep_len (and on the CPU batch_size,
// context_len) when a lower bound on training's memory exceeds the machine's: before the model is
// built, which otherwise grows until the OOM killer ends it. Never refuses a config that fits.
void check_fits_in_memory(const TrainConfig& config, int64_t obs_dim, int64_t act_dim, bool on_cpu);
// That lower bound in bytes — the weights; on the CPU also their gradients and AdamW's two moments,
// and one float of activations a token, width and layer — and the machine's memory (0 where it
// cannot tell).
double min_training_bytes(const TrainConfig& config, int64_t obs_dim, int64_t act_dim, bool on_cpu);
double machine_memory_bytes();
// "" where `bytes` fit in the machine's memory (or it cannot tell how much it has), else "at least
// X GiB, more than this machine's Y GiB of memory; lower them": the tail of such a refusal.
std::string memory_shortfall(double bytes);
// Whether `e` is an allocation that failed: std::bad_alloc, or LibTorch's (whose message names
// only bytes) on the CPU or a GPU.
bool is_out_of_memory(const std::exception& e);
// Notes on stderr what the config makes of the data that a user may not have meant.
void note_config_against_data(const TrainConfig& config, const data::Dataset& ds);
// A fresh agent for the data: the model initialised from the config's seed, on `device`.
Agent new_agent(const TrainConfig& config, const DatasetEnv& env, const data::Dataset& ds,
                const torch::Device& device);
// Loads the run's checkpoint, if any (none under `takeover.remove_outputs`), into `agent` and
// `optimizer`; returns its step (0: none). Throws std::runtime_error naming the checkpoint where
// it was trained with another config than the agent's (max_steps aside), before anything loads.
int64_t resume(const RunFiles& files, const RunDirTakeover& takeover, const torch::Device& device,
               Agent& agent, torch::optim::Optimizer& optimizer, bool quiet);
// The trainer's sampler of `ds`; each step reseeds it from (seed, step), which makes a resumed
// run's batches those of an uninterrupted one.
data::TrajectorySampler make_sampler(const TrainConfig& config, const data::Dataset& ds);
// DT's warm-up: lr · min(1, (step + 1) / warmup) for the step after `step`.
double warmup_lr(const TrainConfig& config, int64_t step);

}  // namespace minrnn::rl
