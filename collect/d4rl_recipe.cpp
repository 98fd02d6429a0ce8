// D4RL's recipe for each quality of behaviour data (d4rl_recipe.h).
#include "collect/d4rl_recipe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>

#include "collect/collect.h"
#include "collect/replay_buffer.h"
#include "collect/sac.h"
#include "collect/sac_work_dir.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/name_list.h"
#include "io/stop_requested.h"
#include "rl/stop_request.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

bool is_done(const fs::path& phase_dir) {
  return fs::exists(phase_dir / "done.txt");
}

void write_done(const fs::path& phase_dir, const SacTrainResult& r) {
  std::ostringstream summary;
  summary << "steps " << r.steps << "\neval_step " << r.eval_step << "\neval_return "
          << r.eval_return << "\neval_normalized " << r.eval_normalized << "\nreached_target "
          << r.reached_target << "\n";
  io::write_file_atomically((phase_dir / "done.txt").string(), summary.str());
}

void print_phase_result(const fs::path& phase_dir, const SacTrainResult& r, double stop_at) {
  char evaluation[96] = "no evaluation in this run";
  if (r.eval_step >= 0) {
    std::snprintf(evaluation, sizeof(evaluation),
                  "evaluation at step %lld: return %.1f (normalized %.1f)",
                  static_cast<long long>(r.eval_step), r.eval_return, r.eval_normalized);
  }
  std::printf("%s: %lld steps, %s%s\n", phase_dir.string().c_str(), static_cast<long long>(r.steps),
              evaluation,
              std::isnan(stop_at) ? ""
              : r.reached_target  ? ", reached the medium target"
                                  : ", did NOT reach the medium target within --train-steps");
}

// The agent and buffer of a phase done.txt says finished.
void load_finished_phase(const fs::path& phase_dir, Sac& sac, ReplayBuffer& buffer) {
  const std::string checkpoint = (phase_dir / "sac.pt").string();
  int64_t episodes = 0;
  if (!load_sac_checkpoint(checkpoint, sac, buffer, &episodes)) {
    throw std::runtime_error(checkpoint + " is missing though " +
                             (phase_dir / "done.txt").string() +
                             " says the phase finished; delete the work dir to retrain");
  }
  std::printf("%s: trained already (%lld steps)\n", phase_dir.string().c_str(),
              static_cast<long long>(buffer.size()));
}

// Trains the phase in `phase_dir` (stopping at the normalized score `stop_at`; NaN: the full
// budget) unless done.txt says it finished, in which case its checkpoint is loaded.
void train_phase(const D4rlRecipe& recipe, const fs::path& phase_dir, double stop_at, Sac& sac,
                 ReplayBuffer& buffer) {
  if (is_done(phase_dir)) {
    load_finished_phase(phase_dir, sac, buffer);
    return;
  }
  SacTrainOptions options;
  options.total_steps = recipe.train_steps;
  options.start_steps = recipe.start_steps;
  options.eval_every = recipe.eval_every;
  options.stop_at_normalized = stop_at;
  options.work_dir = phase_dir.string();
  const SacTrainResult r = train_sac(recipe.env, sac, buffer, options);
  if (r.interrupted) {
    throw io::StopRequested("stopped by " + stop_signal_name() + " at SAC step " +
                            std::to_string(r.steps) + "/" + std::to_string(recipe.train_steps) +
                            "; checkpoint " + r.checkpoint + " written");
  }
  write_done(phase_dir, r);
  print_phase_result(phase_dir, r, stop_at);
}

// Collects `steps` transitions of the SAC policy, stochastic as D4RL sampled its behaviour
// policies; each phase samples from seeds of its own, its env's and its actions' noise (the
// agent's own stream was the medium checkpoint's in both phases where the medium run is the
// expert: medium-expert's halves drew the same noise).
data::Transitions sample_policy(const D4rlRecipe& recipe, Sac& sac, uint64_t seed_offset) {
  at::Generator noise = at::detail::createCPUGenerator(recipe.seed + seed_offset);
  auto env = envs::make_env(recipe.env, recipe.seed + seed_offset);
  CollectOptions options;
  options.steps = recipe.steps;
  options.seed = recipe.seed + seed_offset;
  options.progress_every = 1000;
  int64_t warnings = 0;
  data::Transitions d = collect(*env, sac_behaviour_policy(sac, false, &noise), options, &warnings);
  if (warnings > 0) std::printf("%lld MuJoCo warnings\n", static_cast<long long>(warnings));
  return d;
}

data::Transitions collect_random(const D4rlRecipe& recipe, const envs::EnvSpec& spec) {
  auto env = envs::make_env(recipe.env, recipe.seed);
  CollectOptions options;
  options.steps = recipe.steps;
  options.seed = recipe.seed;
  options.progress_every = 1000;
  data::Transitions d =
      collect(*env, uniform_random_policy(spec.act_dim, recipe.seed + 7919), options);
  d.metadata.strings["algorithm"] = "random";
  d.metadata.ints["iteration"] = 0;
  return d;
}

// The medium run continued to the full budget, and its samples. A medium run that used the whole
// budget is the expert itself (continuing it would only replay the unfinished episode its
// checkpoint drops), loaded afresh: sampling the medium data moved its agent's sampler, and
// medium-expert's expert half is the expert file's. A work dir whose expert/ an earlier version
// began keeps it.
data::Transitions expert_samples(const D4rlRecipe& recipe, const envs::EnvSpec& spec,
                                 const SacConfig& config, const fs::path& work,
                                 int64_t medium_steps) {
  const fs::path expert_dir = work / "expert";
  Sac expert(spec.obs_dim, spec.act_dim, config);
  ReplayBuffer expert_buffer;
  if (medium_steps >= recipe.train_steps && !fs::exists(expert_dir)) {
    std::printf("%s: used all of --train-steps (%lld): its agent is the expert\n",
                (work / "medium").string().c_str(), static_cast<long long>(recipe.train_steps));
    load_finished_phase(work / "medium", expert, expert_buffer);
  } else {
    fs::create_directories(expert_dir);
    if (!fs::exists(expert_dir / "sac.pt")) {
      fs::copy_file(work / "medium" / "sac.pt", expert_dir / "sac.pt");
      std::printf(
          "%s: continues the medium run (%lld steps) to %lld; its unfinished last episode, "
          "which a checkpoint does not keep, is played anew\n",
          expert_dir.string().c_str(), static_cast<long long>(medium_steps),
          static_cast<long long>(recipe.train_steps));
    }
    train_phase(recipe, expert_dir, NAN, expert, expert_buffer);
  }
  data::Transitions e = sample_policy(recipe, expert, 2000000);
  expert.write_policy_metadata(e.metadata, expert_buffer.size());
  return e;
}

data::Transitions collect_with_sac(const D4rlRecipe& recipe, const envs::EnvSpec& spec,
                                   torch::Device device) {
  SacConfig config;
  config.seed = recipe.seed;
  config.device = device;
  const std::string work_dir =
      recipe.work_dir.empty() ? default_sac_work_dir(recipe.env, recipe.seed) : recipe.work_dir;
  const fs::path work(work_dir);
  if (fs::exists(work) && !fs::is_directory(work)) {
    throw std::invalid_argument(
        (recipe.work_dir.empty() ? "the work dir " + work_dir + " (the default; --work-dir chooses)"
                                 : "--work-dir " + work_dir) +
        " is a file: expected a folder for SAC's checkpoints");
  }
  const io::DirLock lock(work_dir, "minrnn collect");  // two collections would mix checkpoints
  check_work_dir_recipe({recipe.env, recipe.seed, recipe.train_steps, recipe.start_steps,
                         recipe.eval_every, recipe.target},
                        work);
  Sac medium(spec.obs_dim, spec.act_dim, config);
  ReplayBuffer medium_buffer;
  train_phase(recipe, work / "medium", recipe.target, medium, medium_buffer);
  const int64_t medium_steps = medium_buffer.size();
  const std::string& quality = recipe.quality;
  data::Transitions d;
  if (quality == "medium-replay") {
    d = medium_buffer.to_d4rl();
    medium.write_policy_metadata(d.metadata, medium_steps);
  }
  if (quality == "medium" || quality == "medium-expert") {
    d = sample_policy(recipe, medium, 1000000);
    medium.write_policy_metadata(d.metadata, medium_steps);
  }
  if (quality == "expert" || quality == "medium-expert") {
    data::Transitions e = expert_samples(recipe, spec, config, work, medium_steps);
    d = quality == "expert" ? std::move(e) : concat_d4rl(d, e);
  }
  return d;
}

}  // namespace

std::string why_not_collectable(const std::string& quality) {
  if (quality != "full-replay") return "";
  return "the recipe does not record full-replay (SAC's whole replay buffer up to the expert); "
         "D4RL's is `minrnn data download <env>-full-replay-v2`";
}

std::vector<std::string> collectable_qualities() {
  std::vector<std::string> qualities;
  for (const std::string& quality : envs::d4rl_qualities())
    if (why_not_collectable(quality).empty()) qualities.push_back(quality);
  return qualities;
}

std::string env_family_version(const envs::EnvSpec& spec) {
  return spec.version >= 5 ? spec.name + "-v" + std::to_string(spec.version) : spec.name;
}

std::string default_sac_work_dir(const std::string& env, uint64_t seed) {
  const std::string family = env_family_version(envs::env_spec(env));
  return "data/work/" + (env[0] == '{' ? family + "-custom" : family) + "-sac-s" +
         std::to_string(seed);
}

void check_d4rl_recipe(const D4rlRecipe& recipe) {
  // `minrnn collect`'s options refuse these too; a C++ caller meets them here (a NaN target
  // would train the medium policy to the full budget, an expert in its name).
  const std::pair<const char*, int64_t> counts[] = {{"--steps", recipe.steps},
                                                    {"--train-steps", recipe.train_steps},
                                                    {"--start-steps", recipe.start_steps},
                                                    {"--eval-every", recipe.eval_every}};
  for (const auto& [option, value] : counts) {
    if (value < 1)
      throw std::invalid_argument(std::string(option) + ": expected an integer from 1, got " +
                                  std::to_string(value));
  }
  if (!std::isfinite(recipe.target)) {
    throw std::invalid_argument("--target: expected a finite normalized score, got " +
                                std::to_string(recipe.target));
  }
  if (const std::string why = why_not_collectable(recipe.quality); !why.empty())
    throw std::invalid_argument("quality '" + recipe.quality + "': " + why);
  const std::vector<std::string> qualities = collectable_qualities();
  if (std::find(qualities.begin(), qualities.end(), recipe.quality) == qualities.end()) {
    throw std::invalid_argument("unknown quality '" + recipe.quality + "'" +
                                io::known_names_hint(recipe.quality, qualities));
  }
  if (recipe.quality == "random") return;  // no SAC: its options are not used
  if (recipe.start_steps > recipe.train_steps) {
    const bool by_default = recipe.start_steps == D4rlRecipe{}.start_steps;
    throw std::invalid_argument("--start-steps (" + std::to_string(recipe.start_steps) +
                                (by_default ? ", its default" : "") +
                                ") must not exceed --train-steps (" +
                                std::to_string(recipe.train_steps) + ")");
  }
}

data::Transitions collect_d4rl_quality(const D4rlRecipe& recipe, torch::Device device) {
  check_d4rl_recipe(recipe);
  // Evaluations fall on multiples of eval_every from start_steps to train_steps.
  const int64_t last_evaluation = recipe.train_steps / recipe.eval_every * recipe.eval_every;
  if (recipe.quality != "random" && last_evaluation < recipe.start_steps) {
    std::printf(
        "note: no evaluation falls between --start-steps %lld and --train-steps %lld "
        "(--eval-every %lld), so the medium phase trains the whole budget (--target is "
        "never checked)\n",
        static_cast<long long>(recipe.start_steps), static_cast<long long>(recipe.train_steps),
        static_cast<long long>(recipe.eval_every));
  }  // One name per env ("Hopper-v4" is "hopper"): the work dir's run.txt records it.
  D4rlRecipe canonical = recipe;
  canonical.env = envs::canonical_env_name(recipe.env);
  const envs::EnvSpec spec = envs::env_spec(canonical.env);
  return canonical.quality == "random" ? collect_random(canonical, spec)
                                       : collect_with_sac(canonical, spec, device);
}

}  // namespace minrnn::rl
