// `minrnn train CONFIG... [--seed S]... [--run-dir DIR]... [--set key=value]...
//               [--force | --extend] [--download]`
// Trains a decision agent; re-running the same command after a kill resumes from the checkpoint,
// and with a larger max_steps and --extend, a finished run trains on from its last checkpoint.
// Several seeds train as one pack (rl::train_pack): one process, each run exactly as alone; with
// one config per seed, the runs of a pack may differ in config (a sweep's backbones on one GPU).
// SIGTERM or SIGINT (Ctrl-C) stops it cleanly: the step in progress ends, its checkpoint is
// written, and it exits with status 75 (rl::kExitInterrupted); the same command resumes there.
// --download first fetches the config's dataset when it is missing (`minrnn data download`).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/training_evaluation.h"
#include "io/tensorboard.h"
#include "rl/config.h"
#include "rl/run_files.h"
#include "rl/stop_request.h"
#include "rl/trainer.h"
#include "tools/commands.h"
#include "tools/data_download.h"

namespace minrnn::cli {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::vector<std::string> configs;  // one, or one per seed
  std::vector<int64_t> seeds;
  std::vector<std::string> run_dirs;
  std::vector<std::string> sets;
  bool force = false, extend = false, quiet = false, download = false, eager = false;
};

// The config file run i of `a` trains with: the one given for every seed, or its own.
const std::string& config_file(const TrainArgs& a, size_t i) {
  return a.configs[a.configs.size() == 1 ? 0 : i];
}

// Where TensorBoard shows the runs: the run dir, or the deepest folder all of a pack's sit in.
// Relative run dirs stay relative, as given; beside an absolute one, all are made absolute.
std::string tensorboard_logdir(const std::vector<rl::PackMember>& members) {
  if (members.size() == 1) return members[0].options.run_dir;
  const bool any_absolute = std::any_of(members.begin(), members.end(), [](const auto& m) {
    return fs::path(m.options.run_dir).is_absolute();
  });
  const auto dir_of = [&](const rl::PackMember& m) {
    const fs::path dir(m.options.run_dir);
    return (any_absolute ? fs::absolute(dir) : dir).lexically_normal();
  };
  const auto under = [](const fs::path& folder, const fs::path& run) {
    return std::mismatch(folder.begin(), folder.end(), run.begin(), run.end()).first ==
           folder.end();
  };
  fs::path common;
  for (const auto& part : dir_of(members[0])) {
    const fs::path deeper = common / part;
    for (const auto& m : members)
      if (!under(deeper, dir_of(m))) return common.empty() ? "." : common.string();
    common = deeper;
  }
  return common.string();
}

// Two runs of a pack in one directory would fight over its lock and files: refused before either
// starts, naming the directory (and, for default ones, the seed given twice).
void refuse_shared_run_dirs(const std::vector<rl::PackMember>& members, bool given) {
  const auto where = [&](size_t i) {  // z, ./z/ and a link to z alike
    const fs::path dir = fs::weakly_canonical(fs::absolute(members[i].options.run_dir));
    return dir.has_filename() ? dir : dir.parent_path();
  };
  for (size_t i = 0; i < members.size(); ++i) {
    const fs::path dir = where(i);
    for (size_t j = 0; j < i; ++j) {
      if (where(j) != dir) continue;
      throw usage_error(
          "train",
          std::string(given ? "--run-dir" : "--seed") + ": runs " + std::to_string(j + 1) +
              " and " + std::to_string(i + 1) + " would both train in " +
              members[i].options.run_dir +
              (given ? "" : " (seed " + std::to_string(members[i].config.seed) + " given twice)") +
              "; give each run a directory of its own");
    }
  }
}
// The config with the command line's --set: one whose value the config refuses by range
// (max_steps=0, device=tpu) is a usage error, as one of the wrong type is
// (check_command_line_sets).
rl::TrainConfig config_with_sets(const std::string& config, const std::vector<std::string>& sets) {
  try {
    return rl::load_config(config, sets);
  } catch (const rl::RefusedOverride& e) {
    throw usage_error("train", config + ": " + e.what());
  }
}

// One run per seed, each with its run dir and its config (the one config, or the seed's own).
// Without --seed: one run per config, at the config's own seed.
std::vector<rl::PackMember> members_of(const TrainArgs& a) {
  check_command_line_sets("train", a.sets, [&a](const std::string& set) -> std::string {
    // --seed sets each run's seed: a --set seed beside it would be dropped without a word.
    if (!a.seeds.empty() && rl::override_key(set) == "seed")
      return "the seed is --seed's to set; give it once";
    return rl::why_not_override(set);
  });
  // Without --seed only the count matters: each config keeps its own seed.
  const std::vector<int64_t> seeds =
      a.seeds.empty() ? std::vector<int64_t>(a.configs.size(), 0) : a.seeds;
  if (!a.run_dirs.empty() && a.run_dirs.size() != seeds.size()) {
    const size_t given = a.run_dirs.size();
    throw usage_error("train",
                      "--run-dir: given " +
                          (given == 1 ? std::string("once") : std::to_string(given) + " times") +
                          " for " + std::to_string(seeds.size()) +
                          " seed(s); give one per --seed, in the same order");
  }
  if (a.configs.size() != 1 && a.configs.size() != seeds.size()) {
    throw usage_error("train",
                      "config: given " + std::to_string(a.configs.size()) + " files for " +
                          std::to_string(seeds.size()) +
                          " seed(s); give one for all, or one per --seed, in the same order");
  }
  std::vector<rl::PackMember> members;
  for (size_t i = 0; i < seeds.size(); ++i) {
    auto sets = a.sets;
    if (!a.seeds.empty()) sets.push_back("seed=" + std::to_string(seeds[i]));
    const std::string& config = config_file(a, i);
    rl::PackMember m{config_with_sets(config, sets), {}};
    m.options.run_dir =
        a.run_dirs.empty() ? rl::default_run_dir(config, m.config.seed) : a.run_dirs[i];
    m.options.force = a.force;
    // The same command after a run finished says so and succeeds, alone as in a pack (a job
    // script or a requeue that runs it again must not fail).
    m.options.finished_is_done = true;
    m.options.extend = a.extend;
    m.options.quiet = a.quiet;
    m.options.cuda_graph = !a.eager;
    m.options.evaluate = eval::evaluate_during_training(m.options.run_dir);
    members.push_back(std::move(m));
  }
  refuse_shared_run_dirs(members, !a.run_dirs.empty());
  const std::string watch = io::watch_line(tensorboard_logdir(members));
  for (auto& m : members) m.options.start_message = watch;
  return members;
}

// A run's error naming its config file (and the --set that gave the value) where it names one of
// its keys ("config key dataset: …" says which key, not which file: a pack's runs may each have
// their own).
std::string naming_the_config(const TrainArgs& a, size_t run, const std::string& error) {
  const std::string prefix = "config key ";
  if (error.rfind(prefix, 0) != 0) return error;
  const std::string key = error.substr(prefix.size(), error.find(':') - prefix.size());
  std::string source = config_file(a, run);
  for (const std::string& set : a.sets) {  // the value came from the command line
    if (rl::override_key(set) == key) source += " with --set " + set;
  }
  return source + ": " + error;
}

// A line per run; throws the exit status a pack ends with: 1 when a run failed, 75 when a stop
// signal interrupted one (the same command resumes), 0 otherwise.
void report(const TrainArgs& a, const std::vector<rl::PackMember>& members,
            const std::vector<rl::TrainResult>& results) {
  int failed = 0, interrupted = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const rl::TrainResult& r = results[i];
    const std::string& dir = members[i].options.run_dir;
    const std::string resumed = r.resumed_from == 0 ? ""
                                : r.resumed_from == r.step && r.finished
                                    ? std::string(" (nothing left to train: raise max_steps") +
                                          (a.extend ? "" : " and pass --extend") +
                                          " to train it further, or --force to retrain it)"
                                    : " (resumed from step " + std::to_string(r.resumed_from) + ")";
    if (!r.error.empty()) {
      ++failed;
      std::printf("%s: FAILED: %s\n", dir.c_str(), naming_the_config(a, i, r.error).c_str());
    } else if (r.interrupted) {
      ++interrupted;
      // A run stopped before its first step leaves no run dir (rl/training_run.cpp): no
      // checkpoint to speak of.
      const std::string checkpoint = rl::RunFiles(dir).checkpoint.string();
      const std::string line = "stopped by " + rl::stop_signal_name() + " at step " +
                               std::to_string(r.step) + "/" +
                               std::to_string(members[i].config.max_steps) + resumed +
                               (fs::exists(checkpoint) ? "; checkpoint " + checkpoint + " written"
                                                       : " before its first step: nothing written");
      if (results.size() == 1) {
        throw ExitError{rl::kExitInterrupted,
                        "minrnn train: " + line + ". Run the same command to resume."};
      }
      std::printf("%s: %s\n", dir.c_str(), line.c_str());
    } else {
      std::printf("%s: step %lld, last loss %.5f%s\n", dir.c_str(), static_cast<long long>(r.step),
                  r.last_loss, resumed.c_str());
    }
  }
  if (failed > 0) {
    throw ExitError{1, "minrnn train: " + std::to_string(failed) + " of " +
                           std::to_string(results.size()) + " run(s) failed (above)"};
  }
  if (interrupted > 0) {
    throw ExitError{rl::kExitInterrupted,
                    "minrnn train: stopped by " + rl::stop_signal_name() +
                        "; checkpoints written. Run the same command to resume."};
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* sub = app.add_subcommand("train", "train a decision agent from a YAML config");
  sub->add_option("config", args->configs,
                  "YAML config (configs/*.yaml): one for every seed, or one per --seed (a pack "
                  "of runs of different configs)")
      ->required();
  sub->add_option("--seed", args->seeds,
                  "seed (overrides the config's); several (--seed 0 --seed 1, or 0,1,2) train as "
                  "one pack in this process")
      ->delimiter(',')
      ->check(whole_number(0, rl::kMaxSeed));
  sub->add_option("--run-dir", args->run_dirs,
                  "run directory, one per seed (default runs/<config>-s<seed>)")
      ->check(path_name("a directory"))
      ->type_name("DIR");
  sub->add_option("--set", args->sets, "override a config key: key=value (repeatable)");
  sub->add_flag(
      "--force", args->force,
      "replace the run in the run directory (a finished one, or one with another config): "
      "its checkpoint, metrics, evaluations and eval*.json are removed first");
  sub->add_flag("--extend", args->extend,
                "train a run further: its config with only a larger max_steps goes on from the "
                "last checkpoint (its results so far are kept as *-step<N> files)")
      ->excludes("--force");
  sub->add_flag("--quiet", args->quiet,
                "no progress line (the device, the evaluations and the end are still said)");
  sub->add_flag("--eager", args->eager,
                "on CUDA, run every training step eagerly instead of replaying it as a CUDA graph "
                "(the same result; to compare, or to debug a step)");
  sub->add_flag("--download", args->download,
                "fetch the config's dataset first when it is missing (as `minrnn data download`)");
  sub->callback([args] {
    const std::vector<rl::PackMember> members = members_of(*args);
    if (args->download) {
      std::vector<std::string> datasets;
      for (const auto& m : members) datasets.push_back(m.config.dataset);
      download_missing_datasets(datasets, "minrnn train");
    }
    rl::install_stop_handlers();
    if (members.size() == 1) {  // alone: its own errors propagate, the config named
      rl::TrainResult r;
      try {
        r = rl::train(members[0].config, members[0].options);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(naming_the_config(*args, 0, e.what()));
      }
      report(*args, members, {r});
      return;
    }
    report(*args, members, rl::train_pack(members));
  });
}

}  // namespace minrnn::cli
