// Shared by the sweep tests: the tiny config sweeps point at, and a sweep file's parse error.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "rl/config.h"
#include "sweep/sweep.h"
#include "tests/paths.h"
#include "tests/scoped_env.h"

namespace minrnn::testing {

inline const std::string kTinyConfig =
    minrnn::testing::source_dir() + "/configs/tiny-hopper-mingru.yaml";

// The tiny config's dataset, hopper-medium-v2, present as <dir>/d4rl/hopper_medium-v2.hdf5 in this
// test process's D4RL_DATASET_DIR for the returned object's life: a sweep refuses to start runs
// whose data is missing, and the fake executables these tests sweep with never read it.
[[nodiscard]] inline ScopedEnv provide_tiny_config_dataset(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "d4rl");
  std::ofstream(dir / "d4rl" / "hopper_medium-v2.hdf5") << "never read by a fake minrnn\n";
  return ScopedEnv("D4RL_DATASET_DIR", (dir / "d4rl").string());
}

// A sweep of the tiny config with its dataset provided (provide_tiny_config_dataset) while it
// lives: hold it as `auto s = ...`, since a sweep::SweepSpec copied out of it lets the dataset
// go at once.
struct TinySweep : sweep::SweepSpec {
  TinySweep(sweep::SweepSpec spec, const std::filesystem::path& dir)
      : sweep::SweepSpec(std::move(spec)), d4rl(provide_tiny_config_dataset(dir)) {}
  ScopedEnv d4rl;
};

// <run>/config.yaml of the tiny config with `sets` (backbone=, seed= and the sweep's own), as
// `minrnn train` writes it: a run dir's done.json without it is no run a sweep takes for its own.
inline void write_run_config(const std::filesystem::path& run,
                             const std::vector<std::string>& sets) {
  std::filesystem::create_directories(run);
  std::ofstream(run / "config.yaml") << rl::to_yaml(rl::load_config(kTinyConfig, sets));
}

// <run>/eval.json as `minrnn eval --episodes <episodes>` leaves it, reduced to what a sweep reads
// (10: a sweep's default eval_episodes).
inline void write_eval_json(const std::filesystem::path& run, double score = 50,
                            int episodes = 10) {
  std::ofstream(run / "eval.json")
      << "{\"mean_normalized\": " << score << ", \"episodes\": " << episodes << "}\n";
}

// A sweep of one run (dataset d, mingru, seed 3, max_steps 5) of the tiny config into `out`, its
// dataset provided beside `out`.
inline TinySweep one_run_sweep(const std::filesystem::path& out) {
  sweep::SweepSpec s =
      sweep::parse_sweep("datasets: [d]\nbackbones: [mingru]\nseeds: [3]\n", "s.yaml");
  s.config_template = kTinyConfig;
  s.sets = {"max_steps=5"};
  s.out = out.string();
  return TinySweep(std::move(s), out.parent_path());
}

// one_run_sweep's run dir, finished as `minrnn train` + `minrnn eval` leave it, trained with these
// overrides.
inline std::filesystem::path finished_run(const std::filesystem::path& out,
                                          const std::vector<std::string>& sets) {
  const std::filesystem::path run = out / "d/mingru/seed3";
  write_run_config(run, sets);
  std::ofstream(run / "done.json") << "{}\n";
  write_eval_json(run);
  return run;
}

// <run>/checkpoint.pt as a sweep's plan takes it for whole (a zip's first and last records,
// rl::why_not_whole_archive), for tests that ask only whether a run has one: no loader reads it.
inline void write_stand_in_checkpoint(const std::filesystem::path& run) {
  const std::string end_record = std::string("PK\x05\x06", 4) + std::string(18, '\0');
  std::ofstream(run / "checkpoint.pt", std::ios::binary) << "PK\x03\x04 a stand-in " << end_record;
}

// The message parse_sweep refuses `yaml` with ("" when it accepts it), as from "my_sweep.yaml".
inline std::string sweep_error_of(const std::string& yaml) {
  try {
    sweep::parse_sweep(yaml, "my_sweep.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace minrnn::testing
