// Training configuration: a plain struct loaded from YAML.
//
//   defaults: defaults.yaml     # optional, relative to this file; its keys are merged under ours
//   dataset: hopper-medium-v2
//   backbone: mingru
//
// Then `--set key=value` overrides apply. Every key is checked: an unknown key, a value of the
// wrong type or out of range throws std::invalid_argument naming the key and the file (or --set)
// it came from.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace minrnn::rl {

struct TrainConfig {
  // data
  std::string dataset;        // D4RL id ("hopper-medium-v2") or a path to a D4RL-layout .hdf5
  std::string env;            // environment for evaluation; "" = the dataset's
  double top_fraction = 1.0;  // %BC filter of the sampler (1 = all episodes)
  // model
  std::string backbone = "mingru";  // mingru | minlstm | hgrn | transformer
  int64_t n_layers = 3;
  int64_t embed_dim = 128;
  int64_t n_heads = 1;
  double expansion = 1.0;
  bool conv = false;      // mingru/minlstm: causal Conv1d (kernel 4) before the recurrence
  bool log_space = true;  // mingru/minlstm: h̃ = g(Linear(x)) > 0 (App. B); false: h̃ = Linear(x)
  double dropout = 0.1;
  int64_t context_len = 20;  // K
  int64_t max_ep_len = 1000;
  // optimisation
  double lr = 1e-4;
  double weight_decay = 1e-4;
  int64_t warmup_steps = 10000;
  int64_t max_steps = 100000;
  int64_t batch_size = 64;
  double grad_clip = 0.25;  // max global grad norm; 0 = off
  // fp32 | tf32: on CUDA, tf32 runs the matmuls on tensor cores with 10-bit mantissas (float32
  // accumulation); the CPU always computes in float32. Issue 41: not the default until a sweep
  // shows the scores do not move.
  std::string matmul_precision = "fp32";
  // returns
  double target_return = 3600;
  double return_scale = 1000;
  // bookkeeping
  int64_t eval_every = 0;      // 0 = only at the end (by `minrnn eval`)
  int64_t eval_episodes = 10;  // 1 to kMaxEvalEpisodes
  int64_t checkpoint_every = 1000;
  int64_t log_every = 100;
  int64_t seed = 0;             // 0 to kMaxSeed
  std::string device = "auto";  // auto (CUDA when usable, else CPU) | cpu | cuda[:N]
};

// The largest seed: a run's evaluation episodes are seeded from seed × 1000 (training_eval_seed),
// which int64 holds up to here, with an episode index added.
constexpr int64_t kMaxSeed = int64_t{1} << 53;
// Episode i of a run's evaluations during training is reset with this + i: away from `minrnn
// eval`'s default seeds (0, 1, …), and `minrnn eval RUN --seed` with it repeats them.
constexpr int64_t training_eval_seed(int64_t run_seed) {
  return 1000000 + run_seed * 1000;
}
// The evaluations a run makes from `step` on, its own included where due: at each multiple of
// eval_every below max_steps, then the final one at max_steps; 0 from max_steps on. What the
// training ETA and a sweep's --estimate count.
constexpr int64_t evaluations_from(int64_t step, int64_t max_steps, int64_t eval_every) {
  if (step >= max_steps) return 0;
  return 1 + (eval_every > 0 ? (max_steps - 1) / eval_every - (step - 1) / eval_every : 0);
}
// The most episodes one evaluation runs (config key eval_episodes, `minrnn eval --episodes`):
// a million episodes of 1 000 steps is days of CPU; 2^31 would not fit its per-episode results.
constexpr int64_t kMaxEvalEpisodes = 1000000;

// The key of a "key=value" override ("lr" of "lr=1e-4"; the whole text where it has no '=').
std::string override_key(const std::string& key_value);
// The entry of `key` among `overrides` ("key=value"), the last where several; "" where none.
std::string override_of(const std::vector<std::string>& overrides, const std::string& key);
// The first two overrides (those with an '=') that set one key; key "" where none do. A config
// file refuses a key given twice; the command line and a sweep file refuse such a list too.
struct RepeatedOverride {
  std::string key, first, second;  // "lr", "lr=1e-3", "lr=1e-4"
};
RepeatedOverride repeated_override(const std::vector<std::string>& overrides);
// Why "key=value" is no override a config can take ("" where it is one): "expected key=value",
// "unknown key (did you mean 'lr'?) …", "expected a number, got 'abc'". A value's range is
// checked with the rest of the config (load_config).
std::string why_not_override(const std::string& key_value);

// What load_config throws where an override's value is the one refused (its type, or its range
// with the rest of the config: max_steps=0, device=tpu): `key` the override's, for a command line
// to call it a usage error, `reason` what is wrong with its value ("expected >= 1, got 0", for a
// caller whose overrides came from elsewhere to name their origin); the message
// "--set: key 'max_steps': expected >= 1, got 0".
struct RefusedOverride : std::invalid_argument {
  std::string key, reason;
  RefusedOverride(std::string key_name, std::string why, const std::string& message)
      : std::invalid_argument(message), key(std::move(key_name)), reason(std::move(why)) {}
};

// Loads `path` (with its `defaults:` chain) and applies `overrides` ("key=value", YAML-parsed).
TrainConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Parses YAML text; `where` names it in errors. Relative `defaults:` resolve against `base_dir`.
TrainConfig parse_config(const std::string& yaml_text, const std::string& where,
                         const std::string& base_dir = ".",
                         const std::vector<std::string>& overrides = {});
// The resolved config as YAML (what a run directory keeps); parse_config reads it back.
std::string to_yaml(const TrainConfig& config);
// Each key and its value as to_yaml prints it, in to_yaml's order.
std::vector<std::pair<std::string, std::string>> config_entries(const TrainConfig& config);
// The keys whose values differ, as "key: A -> B" joined by "; " ("" when none do). Values are
// compared, not text, so a key an older config.yaml lacks counts as its default.
std::string config_differences(const TrainConfig& from, const TrainConfig& to);
// config_differences of a checkpoint's config and the one a run is asked with, max_steps aside
// (--extend grows it): what a resume refuses, and what tells a hand-edited config.yaml.
std::string trained_config_differences(const TrainConfig& trained, const TrainConfig& asked);
// The known keys, in declaration order.
std::vector<std::string> config_keys();

}  // namespace minrnn::rl
