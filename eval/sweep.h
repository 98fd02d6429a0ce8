// Seed sweeps: every seed × dataset × backbone of a sweep file, trained and evaluated by child
// processes of this same binary (`minrnn train` then `minrnn eval`), several at a time.
//
//   # configs/sweeps/example.yaml
//   datasets: [hopper-medium, walker2d-medium]
//   backbones: [mingru, minlstm]
//   seeds: [0, 1, 2]
//   config: ../{dataset}-{backbone}.yaml  # optional; relative to this file; this is the default
//   set: [max_steps=1000]                 # optional `--set` overrides for every run
//   out: runs/sweeps/example              # optional; default runs/sweeps/<file stem>
//   parallel: 2                           # optional; runs at a time (default 1)
//   eval_episodes: 10                     # optional; episodes of the final `minrnn eval`
//
// A run lives in <out>/<dataset>/<backbone>/seed<S>/ (the trainer's run dir plus train.log).
// Re-running a sweep skips runs holding done.json and eval.json, evaluates trained-but-unevaluated
// ones, and resumes interrupted ones from their checkpoint. A run directory whose config.yaml
// differs from what the sweep now asks (another max_steps in `set`, an edited config) is never
// skipped or resumed as if it were the sweep's: planning fails naming the run and the keys.
// Both phases run on the config's `device` (`minrnn eval --device`).
#pragma once
#include <string>
#include <vector>

namespace minrnn::eval {

struct SweepSpec {
  std::string file;  // where it came from (for error messages and relative paths)
  std::vector<std::string> datasets, backbones;
  std::vector<int64_t> seeds;
  std::string config_template = "../{dataset}-{backbone}.yaml";
  std::vector<std::string> sets;  // "key=value"; {dataset} / {backbone} are substituted
  std::string out;
  int parallel = 1;
  int threads = 0;  // torch threads per run; 0 = the machine's cores / parallel
  int eval_episodes = 10;
};

// Parses a sweep file strictly: an unknown key or a value of the wrong type throws
// std::invalid_argument naming the key and the file.
SweepSpec parse_sweep(const std::string& yaml_text, const std::string& file);
SweepSpec load_sweep(const std::string& path);

enum class RunState { kPending, kTrained, kDone };  // kTrained: done.json but no eval.json

struct SweepRun {
  std::string dataset, backbone;
  int64_t seed = 0;
  std::string config;                  // resolved config file
  std::vector<std::string> overrides;  // passed as --set
  std::string run_dir;
  RunState state = RunState::kPending;
  int64_t max_steps = 0;       // the config's, with the overrides (for progress lines)
  std::string device = "cpu";  // the config's: where training and evaluation run
};

// Expands the spec into runs (datasets × backbones × seeds, in that nesting order), checks that
// every config loads with its overrides (so a typo fails before hours of training), and reads
// each run directory's state. Throws std::invalid_argument naming every run directory whose
// config.yaml differs from the sweep's config for it, and the keys that differ.
std::vector<SweepRun> plan_sweep(const SweepSpec& spec);

struct SweepOptions {
  std::string exe = "/proc/self/exe";  // the `minrnn` binary the children run
  bool dry_run = false;                // print the plan only
  double progress_every_s = 60;        // how often a line says where the running runs are
};

// Runs every unfinished run; returns the number that failed. A run whose directory another live
// process holds (an earlier sweep's orphan, a second sweep) is reported "running in pid N", not
// counted as failed. The children get SIGTERM when the sweep process dies, however it dies. Writes
// <out>/sweep_status.json after every change and prints progress lines to stdout: one per finished
// run (runs done / total, ETA) and, every `progress_every_s`, the step, rate and ETA of each run
// still training.
int run_sweep(const SweepSpec& spec, const SweepOptions& options);

}  // namespace minrnn::eval
