// `minrnn collect ENV QUALITY [--format d4rl|minari]`: behaviour data made as D4RL made it
// (collect/d4rl_recipe.h), in D4RL's layout or as a Minari dataset (Gymnasium's env spec recorded;
// Python's minari opens it). SAC trains in a work dir (default data/work/<env>-sac-s<seed>), so an
// interrupted command resumes where it stopped. SIGTERM or SIGINT (Ctrl-C) stops it cleanly: SAC
// training finishes its step and writes its checkpoint, sampling drops what it has (nothing is
// written to --out), and the command exits with status 75 (rl::kExitInterrupted); the same command
// resumes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "collect/d4rl_recipe.h"
#include "datasets/env_table.h"
#include "datasets/episodes.h"
#include "datasets/minari.h"
#include "envs/registry.h"
#include "eval/sweep_runs.h"
#include "io/writable.h"
#include "ops/device.h"
#include "rl/run_files.h"
#include "rl/stop_request.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

namespace fs = std::filesystem;

struct CollectArgs {
  rl::D4rlRecipe recipe;
  std::string out, device = "auto";
  std::string format = "d4rl", dataset_id;
  double ref_min_score = NAN, ref_max_score = NAN;
  bool force = false;
  bool target_given = false;  // --target on the command line
};

// The file name D4RL's layout gives a quality of an env: hopper_medium_replay-v2.hdf5 (v5's data
// -v5.hdf5).
// D4RL's version of a dataset name: -v2 for the Gymnasium v4 envs D4RL's own data matches, -v5
// for v5 (data::DatasetEnv reads a file's env version from it).
const char* d4rl_version_for(const envs::EnvSpec& spec) {
  return spec.version >= 5 ? "-v5" : "-v2";
}

std::string d4rl_file_for(const envs::EnvSpec& spec, const std::string& quality) {
  return data::d4rl_file_name(spec.name + "-" + quality + d4rl_version_for(spec));
}

// A D4RL file's name is where readers learn what it holds (before its metadata): one naming
// another env would be read, and refused, as that env's data; one naming another quality or
// version of this env would be trained on as that dataset (random data as hopper-medium-v2, v4
// data as v5's). An .hdf5 name: what every D4RL reader and our docs look for.
void check_d4rl_out_name(const CollectArgs& a, const envs::EnvSpec& spec) {
  const std::string file = fs::path(a.out).filename().string();
  const std::string own = d4rl_file_for(spec, a.recipe.quality);
  if (fs::path(file).extension() != ".hdf5") {
    throw std::invalid_argument("--out " + a.out +
                                ": a D4RL-layout dataset is an HDF5 file; give it an .hdf5 name "
                                "(e.g. " +
                                own + ")");
  }
  const data::EnvInfo* named = data::guess_env_from_name(file);
  if (named != nullptr && named->name != spec.name) {
    throw std::invalid_argument("--out " + a.out + " names " + named->name + " but this collects " +
                                spec.id + ": name the file for " + spec.name);
  }
  // Every quality, full-replay too: a file of that name is another dataset's all the same.
  for (const std::string& quality : envs::d4rl_qualities()) {
    for (const char* version : {"-v2", "-v5"}) {
      const std::string id = spec.name + "-" + quality + version;
      if (file != data::d4rl_file_name(id) || file == own) continue;
      throw std::invalid_argument("--out " + a.out + " is the name of " + id +
                                  ", but this collects " + a.recipe.quality + " in " + spec.id +
                                  ": name it " + own);
    }
  }
}

// A Minari dataset's id is where minari.load_dataset(id) finds it under the datasets root: an --out
// there is its id (a walk, 2026-11-29: `--out ROOT/mine/hopper-v0` recorded minrnn/hopper/...),
// and an --dataset-id naming another place there is refused. Elsewhere the id is a label.
void settle_minari_id(CollectArgs& a, const envs::EnvSpec& spec) {
  std::string at_root;  // the id --out's place under the root says, "" where it is not there
  if (!a.out.empty()) {
    // Absolute first: of a path none of whose folders exist yet weakly_canonical keeps it relative.
    const fs::path root = fs::weakly_canonical(fs::absolute(data::minari_root()));
    const fs::path rel = fs::weakly_canonical(fs::absolute(a.out)).lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && *rel.begin() != ".") at_root = rel.string();
  }
  if (!at_root.empty() && !data::is_minari_dataset_id(at_root)) {
    throw std::invalid_argument("--out " + a.out + " is where Minari looks for '" + at_root +
                                "', which is no Minari dataset id ((namespace/)name-v<N>): name "
                                "the folder so, or collect it outside " +
                                data::minari_root());
  }
  if (!at_root.empty() && !a.dataset_id.empty() && a.dataset_id != at_root) {
    throw std::invalid_argument("--out " + a.out + " is where Minari looks for '" + at_root +
                                "', but --dataset-id is '" + a.dataset_id +
                                "': give one of them, or both alike");
  }
  if (a.dataset_id.empty()) {
    a.dataset_id = !at_root.empty()
                       ? at_root
                       : "minrnn/" + rl::env_family_version(spec) + "/" + a.recipe.quality + "-v0";
  }
  data::check_minari_dataset_id(a.dataset_id);
  if (a.out.empty()) a.out = (fs::path(data::minari_root()) / a.dataset_id).string();
}

// SAC's medium/, run.txt and lock went into a training run's folder given as --work-dir (a walk,
// 2026-11-30), or would into a sweep's: refused, naming the run. A folder that cannot be listed is
// left to the work dir's own checks.
void check_work_dir(const CollectArgs& a) {
  const rl::D4rlRecipe& r = a.recipe;
  const std::string dir = r.work_dir.empty() ? rl::default_sac_work_dir(r.env, r.seed) : r.work_dir;
  std::string run;
  std::error_code ec;
  if (rl::RunFiles(dir).holds_run()) {
    run = "a training run";
  } else if (fs::is_directory(dir, ec)) {
    try {
      for (const eval::RunDir& in : eval::list_run_dirs(dir))
        if (rl::RunFiles(in.dir).holds_run()) run = "a sweep (its run " + in.dir.string() + ")";
    } catch (const std::exception&) {
    }
  }
  if (run.empty()) return;
  throw std::invalid_argument(
      (r.work_dir.empty() ? "the work dir " + dir + " (the default; --work-dir chooses)"
                          : "--work-dir " + dir) +
      " holds " + run +
      ": SAC's checkpoints, run.txt and lock would go in among its files; give a "
      "folder of their own (default data/work/<env>-sac-s<seed>)");
}

// SAC's random warm-up "reached" a target at or below the random policy's normalized score at its
// first evaluation, and random data was written as medium (a walk, 2026-11-30: --target -1000).
// That score is 0: a normalized score counts from D4RL's REF_MIN_SCORE, the random policy's return.
void check_target(const CollectArgs& a, const envs::EnvSpec& spec) {
  constexpr double random = 0;
  if (a.recipe.target > random) return;
  char why[512];
  std::snprintf(why, sizeof why,
                "--target %g: the random policy scores %g already (D4RL's random return for %s, "
                "%g), so SAC's random warm-up would reach it and its \"medium\" data be random; "
                "give a target above %g (default %.4g)",
                a.recipe.target, random, spec.id.c_str(), spec.ref_min_score, random,
                rl::D4rlRecipe{}.target);
  throw std::invalid_argument(why);
}

// Checks the options against each other and fills the defaults that depend on them (the dataset
// id, the output path). Throws naming the option: std::invalid_argument for a value the command
// line may not have (run_collect makes it a usage error), std::runtime_error for an --out in the
// way.
void settle_options(CollectArgs& a, const envs::EnvSpec& spec) {
  const bool minari = a.format == "minari";
  if (a.format != "d4rl" && !minari) {
    throw std::invalid_argument("--format: expected d4rl or minari, got '" + a.format + "'");
  }
  if (!minari && !a.dataset_id.empty()) {
    throw std::invalid_argument("--dataset-id is for --format minari");
  }
  // NaN: not given (the options refuse NaN).
  if (std::isnan(a.ref_min_score) != std::isnan(a.ref_max_score)) {
    throw std::invalid_argument("--ref-min-score and --ref-max-score go together");
  }
  if (!minari && !std::isnan(a.ref_min_score)) {
    throw std::invalid_argument(
        "--ref-min-score and --ref-max-score are for --format minari (a D4RL file keeps no "
        "reference scores: D4RL's table gives them)");
  }
  if (!(a.ref_max_score > a.ref_min_score) && !std::isnan(a.ref_min_score)) {
    throw std::invalid_argument("--ref-max-score (" + std::to_string(a.ref_max_score) +
                                ") must exceed --ref-min-score (" +
                                std::to_string(a.ref_min_score) + ")");
  }
  rl::check_d4rl_recipe(a.recipe);
  // The random policy trains nothing to stop at a score (a walk: `collect hopper random --target
  // 50` ran and ignored it, as if the data had been made to a target).
  if (a.recipe.quality == "random" && a.target_given) {
    throw std::invalid_argument(
        "--target is where SAC's training stops (medium, medium-replay, expert, medium-expert); "
        "a random collection trains no SAC: leave --target out");
  }
  if (a.recipe.quality != "random") {  // no SAC trains: no work dir, no target
    check_target(a, spec);
    check_work_dir(a);
  }
  // What the file holds: medium-expert both samples, medium-replay the buffer of the training.
  const bool replay = a.recipe.quality == "medium-replay";
  const int64_t written = replay                                ? a.recipe.train_steps
                          : a.recipe.quality == "medium-expert" ? 2 * a.recipe.steps
                                                                : a.recipe.steps;
  check_transitions_fit(replay ? "--train-steps" : "--steps", written, spec.obs_dim, spec.act_dim,
                        spec.nq, spec.nv);
  // "m/" is the directory m (shell completion adds the slash): its parent is the folder that holds
  // it, not m itself, and under the Minari root its id is "m".
  while (a.out.size() > 1 && a.out.back() == '/') a.out.pop_back();
  if (minari) {
    settle_minari_id(a, spec);
  } else if (a.out.empty()) {
    a.out = "data/" + d4rl_file_for(spec, a.recipe.quality);
  }
  if (minari) {
    data::check_minari_destination(a.out, a.force);
    return;
  }
  if (fs::is_directory(a.out)) {
    throw std::invalid_argument("--out " + a.out +
                                " is a folder: a D4RL-layout dataset is one .hdf5 file");
  }
  check_d4rl_out_name(a, spec);
  if (fs::exists(a.out) && !a.force) {
    throw std::runtime_error(a.out + " exists; pass --force to replace it");
  }
}

// Returns the steps written: those of finished episodes (Minari keeps no unfinished one).
int64_t write_minari_dataset(const CollectArgs& a, const envs::EnvSpec& spec,
                             const data::Transitions& d, double ref_min, double ref_max) {
  data::MinariWriteOptions o;
  o.dataset_id = a.dataset_id;
  o.env_spec = envs::gymnasium_env_spec_json(a.recipe.env);
  o.eval_env_spec = o.env_spec;
  o.observation_space = data::box_space(spec.obs_dim, -INFINITY, INFINITY, "float64");
  o.action_space = data::box_space(spec.act_dim, -1.0, 1.0, "float32");
  o.has_ref_scores = true;
  o.ref_min_score = ref_min;
  o.ref_max_score = ref_max;
  o.algorithm_name = a.recipe.quality == "random" ? "random" : "SAC";
  o.description = data::kCollectedByMinrnn + a.recipe.env + " " + a.recipe.quality + " (seed " +
                  std::to_string(a.recipe.seed) + "); reference scores: " +
                  (std::isnan(a.ref_min_score) ? "D4RL's for " + spec.name
                                               : std::string("given on the command line"));
  o.overwrite = a.force;
  const data::MinariWriteResult w = data::write_minari(a.out, d, o);
  std::printf(
      "Minari dataset %s: %lld episodes, %lld steps (%lld steps of an unfinished last "
      "episode dropped); env_spec %s, ref scores [%g, %g]\n",
      a.dataset_id.c_str(), static_cast<long long>(w.episodes), static_cast<long long>(w.steps),
      static_cast<long long>(w.dropped_tail_steps), spec.id.c_str(), ref_min, ref_max);
  return w.steps;
}

// The data's episodes as every reader splits them (datasets/episodes.h). A collection in which
// none ended is refused, nothing written: no reader would take the file.
data::EpisodeStats episodes_of(const CollectArgs& a, const envs::EnvSpec& spec,
                               const data::Transitions& d) {
  try {
    return data::split_episodes(d, a.out).stats;
  } catch (const std::invalid_argument&) {
    const auto ends = [](uint8_t flag) { return flag != 0; };
    if (std::any_of(d.terminals.begin(), d.terminals.end(), ends) ||
        std::any_of(d.timeouts.begin(), d.timeouts.end(), ends))
      throw;  // another fault of the data, in the reader's words
    // medium-replay's data is SAC's replay buffer: its size is --train-steps, not --steps.
    const std::string option = a.recipe.quality == "medium-replay"
                                   ? "--train-steps " + std::to_string(a.recipe.train_steps)
                                   : "--steps " + std::to_string(a.recipe.steps);
    throw std::invalid_argument(
        option + ": no episode ended in the " + std::to_string(d.num_steps()) +
        " steps collected (an episode ends at a fall or at " + spec.id + "'s " +
        std::to_string(spec.max_episode_steps) +
        "-step limit), so no reader could train on them; nothing written to " + a.out + ". Raise " +
        option.substr(0, option.find(' ')));
  }
}

// What the data is worth: the mean return of its finished episodes, normalized too.
void print_data_summary(const CollectArgs& a, const envs::EnvSpec& spec,
                        const data::EpisodeStats& episodes, int64_t written_steps, double ref_min,
                        double ref_max) {
  std::printf(
      "wrote %s: %lld steps of %s (%s), %lld finished episode%s, mean return %.1f "
      "(normalized %.1f)\n",
      a.out.c_str(), static_cast<long long>(written_steps), spec.id.c_str(),
      a.recipe.quality.c_str(), static_cast<long long>(episodes.num_episodes),
      episodes.num_episodes == 1 ? "" : "s", episodes.mean_return,
      envs::normalized_score(episodes.mean_return, ref_min, ref_max));
}

void run_collect(CollectArgs& a) {
  rl::install_stop_handlers();
  const envs::EnvSpec spec = envs::env_spec(a.recipe.env);
  // The name the env goes by from here on: "hopper" for v2-v4 (the work dirs and file names of
  // D4RL-style collections), "hopper-v5" for v5; options make it an env_spec JSON.
  a.recipe.env = envs::canonical_env_name(a.recipe.env);
  try {
    settle_options(a, spec);
  } catch (const std::invalid_argument& e) {
    throw usage_error("collect", e.what());
  }
  // Before anything is created: a CUDA device that is not there is refused here. Random actions
  // train nothing, on no device.
  const bool trains = a.recipe.quality != "random";
  if (!trains && a.device != "auto") {
    throw usage_error("collect", "--device " + a.device +
                                     ": a random collection trains no SAC and uses no device");
  }
  const core::DeviceChoice device = trains ? core::resolve_device(a.device, "--device")
                                           : core::DeviceChoice{torch::kCPU, "cpu", ""};
  if (trains) core::say_choice(a.device, device);
  // Before minutes of training and sampling: the folder takes a file (why_unwritable makes one).
  // (A Minari dataset is a folder: a file beside it stands for the one it will be.) Its folders
  // are made, as the default's data/ is: the README's `--out data/...` runs in a fresh checkout.
  const std::string file = a.format == "minari" ? a.out + ".probe" : a.out;
  if (const std::string why = io::make_folders_for(file); !why.empty())
    throw usage_error("collect", "--out " + a.out + ": cannot write it: " + why);

  data::Transitions d;
  try {
    d = rl::collect_d4rl_quality(a.recipe, device.device);
  } catch (const rl::StopRequested& stop) {
    throw ExitError{rl::kExitInterrupted, "minrnn collect: " + std::string(stop.what()) +
                                              ". Run the same command to resume."};
  }
  if (rl::stop_requested()) {
    throw ExitError{rl::kExitInterrupted,
                    "minrnn collect: stopped by " + rl::stop_signal_name() +
                        " while sampling; nothing written to " + a.out +
                        " (sampling starts over on the next run; trained SAC phases are kept)"};
  }
  const data::EpisodeStats episodes = episodes_of(a, spec, d);  // before anything is written
  const double ref_min = std::isnan(a.ref_min_score) ? spec.ref_min_score : a.ref_min_score;
  const double ref_max = std::isnan(a.ref_max_score) ? spec.ref_max_score : a.ref_max_score;
  int64_t written = d.num_steps();
  if (a.format == "minari") {
    written = write_minari_dataset(a, spec, d, ref_min, ref_max);
  } else {
    // D4RL's layout has no place for the env; metadata/ does: what training evaluates in.
    d.metadata.strings["env_spec"] = envs::gymnasium_env_spec_json(a.recipe.env);
    data::D4rlWriteOptions write_options;
    write_options.overwrite = a.force;
    data::write_d4rl(a.out, d, write_options);
  }
  print_data_summary(a, spec, episodes, written, ref_min, ref_max);
}

}  // namespace

void add_collect_command(CLI::App& app) {
  auto args = std::make_shared<CollectArgs>();
  auto* sub = app.add_subcommand(
      "collect",
      "Collect a dataset (D4RL layout, or Minari with --format minari) with a behaviour "
      "policy");
  sub->add_option("env", args->recipe.env,
                  "hopper | halfcheetah | walker2d (v4 semantics, as D4RL), or <env>-v5 "
                  "(Gymnasium v5, as Minari), or a Gymnasium env_spec JSON")
      ->required();
  sub->add_option("quality", args->recipe.quality,
                  "random | medium | medium-replay | medium-expert | expert")
      ->required();
  sub->add_option("--steps", args->recipe.steps,
                  "Transitions to record per policy (D4RL: 1000000; medium-replay: unused)")
      ->check(positive_count());
  sub->add_option("--train-steps", args->recipe.train_steps,
                  "SAC environment-step budget (medium stops earlier at the target)")
      ->check(positive_count());
  sub->add_option("--start-steps", args->recipe.start_steps,
                  "SAC steps with uniform random actions before learning starts")
      ->check(positive_count());
  sub->add_option("--eval-every", args->recipe.eval_every,
                  "Evaluate SAC every N steps, once learning has begun")
      ->check(positive_count());
  auto* target = sub->add_option("--target", args->recipe.target,
                                 "Normalized score at which SAC counts as medium (D4RL: 1/3 of "
                                 "expert; not for random)")
                     ->check(finite_float());
  sub->add_option("--seed", args->recipe.seed, "Seed of the environment, SAC and sampling")
      ->check(whole_number(0, kMaxEnvSeed));
  sub->add_option("--out", args->out,
                  "Output .hdf5 (default data/<env>_<quality>-v2.hdf5), or with --format minari "
                  "the dataset directory (default <dataset id> under $MINARI_DATASETS_PATH, else "
                  "under ~/.minari/datasets)")
      ->check(path_name("a file name (or with --format minari a directory)"));
  sub->add_option("--format", args->format,
                  "d4rl (one HDF5 file, D4RL's keys) or minari (what Python's "
                  "minari.load_dataset opens; records the env's Gymnasium spec)");
  sub->add_option("--dataset-id", args->dataset_id,
                  "Minari dataset id (default minrnn/<env>/<quality>-v0)");
  sub->add_option("--ref-min-score", args->ref_min_score,
                  "Minari reference score of 0 (default: D4RL's REF_MIN of the env)")
      ->check(finite_float());
  sub->add_option("--ref-max-score", args->ref_max_score,
                  "Minari reference score of 100 (default: D4RL's REF_MAX of the env)")
      ->check(finite_float());
  sub->add_option("--work-dir", args->recipe.work_dir,
                  "SAC checkpoints (default data/work/<env>-sac-s<seed>); reruns resume here")
      ->check(path_name("a directory"))
      ->type_name("DIR");
  sub->add_option("--device", args->device,
                  "auto (CUDA when usable, else CPU; default) | cpu | cuda[:N] (SAC training)")
      ->check(device_name());
  sub->add_flag("--force", args->force, "Replace an existing output file");
  sub->callback([args, target] {
    args->target_given = target->count() > 0;
    run_collect(*args);
  });
}

}  // namespace minrnn::cli
