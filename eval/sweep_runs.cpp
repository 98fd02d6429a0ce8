#include "eval/sweep_runs.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "datasets/env_table.h"
#include "envs/registry.h"
#include "io/input_file.h"
#include "io/python_json.h"
#include "io/yaml_keys.h"
#include "rl/config.h"
#include "rl/dataset_env.h"
#include "rl/run_files.h"

namespace minrnn::eval {

namespace fs = std::filesystem;

fs::path run_dir_of(const fs::path& out, const std::string& dataset, const std::string& backbone,
                    int64_t seed) {
  return out / dataset / backbone / ("seed" + std::to_string(seed));
}

namespace {

// The seed of a folder named as run_dir_of names it: "seed" and the number as to_string writes it
// (a walk, 2026-11-30: a copy named seed01 beside seed1 counted seed 1 twice; seed1.bak and
// seed99999999999999999999, which stoll cannot hold, are no runs either).
std::optional<int64_t> seed_of_folder(const std::string& name) {
  const std::string digits = name.substr(std::min<size_t>(name.size(), 4));
  if (name.rfind("seed", 0) != 0 || digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int64_t seed = std::stoll(digits);
  if (std::to_string(seed) != digits) return std::nullopt;
  return seed;
}

// "hopper-medium-replay" for a D4RL id (hopper-medium-replay-v2), "hopper-medium" for a Minari
// one (mujoco/hopper/medium-v0); "" for a file's path, whose name may say anything.
std::string dataset_name_of_id(const std::string& id) {
  const std::vector<std::string> d4rl = envs::d4rl_dataset_ids();
  if (std::find(d4rl.begin(), d4rl.end(), id) != d4rl.end()) return id.substr(0, id.size() - 3);
  const size_t env_at = id.find('/') + 1, quality_at = id.rfind('/') + 1;
  const size_t version_at = id.rfind("-v");
  if (id.rfind("mujoco/", 0) != 0 || id.find('/', env_at) + 1 != quality_at ||
      version_at == std::string::npos || version_at < quality_at)
    return "";
  return id.substr(env_at, quality_at - 1 - env_at) + "-" +
         id.substr(quality_at, version_at - quality_at);
}

// The environment family the run is evaluated in and the file that says so: env.json's env (what
// training resolved), else config.yaml's (its env key or its dataset's name); "" where neither
// tells.
std::pair<std::string, std::string> env_family_of(const rl::RunFiles& files,
                                                  const rl::TrainConfig& config) {
  try {
    const nlohmann::json j = io::read_json_or_null(files.env.string());
    if (j.is_object() && j.contains("env") && j["env"].is_string())
      return {envs::env_name_from_dataset_id(j["env"].get<std::string>()), files.env.string()};
    return {rl::config_env_family(config), files.config.string()};
  } catch (const std::exception&) {
    return {"", ""};  // an env no name resolves: eval says so of the run itself
  }
}

}  // namespace

std::vector<RunDir> list_run_dirs(const std::string& sweep_dir) {
  if (!fs::exists(sweep_dir))
    throw std::invalid_argument(io::no_such(sweep_dir, "sweep directory"));
  if (!fs::is_directory(sweep_dir)) throw std::invalid_argument(sweep_dir + " is not a directory");
  std::vector<RunDir> found;
  for (const auto& d : fs::directory_iterator(sweep_dir)) {
    if (!d.is_directory() || d.path().filename() == "plots") continue;
    for (const auto& b : fs::directory_iterator(d.path())) {
      if (!b.is_directory()) continue;
      for (const auto& s : fs::directory_iterator(b.path())) {
        const std::optional<int64_t> seed = seed_of_folder(s.path().filename().string());
        if (!s.is_directory() || !seed) continue;
        found.push_back(
            {d.path().filename().string(), b.path().filename().string(), *seed, s.path()});
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const RunDir& a, const RunDir& b) {
    return std::tie(a.dataset, a.backbone, a.seed) < std::tie(b.dataset, b.backbone, b.seed);
  });
  return found;
}

std::string why_misplaced(const RunDir& run) {
  const rl::RunFiles files(run.dir);
  const std::string config_file = files.config.string();
  YAML::Node keys;
  rl::TrainConfig config;
  try {
    const std::string text = io::read_input_file(config_file, "config");
    keys = io::parse_yaml(text, config_file);
    config = rl::parse_config(text, config_file);
  } catch (const std::exception&) {
    return "";
  }
  const std::string but = ", but the run is in the ";
  const std::string copy = " (a copy under another name?)";
  // Only a key the file sets: a hand-written config.yaml without it says nothing of its folder.
  if (keys["backbone"] && config.backbone != run.backbone)
    return config_file + " says backbone " + config.backbone + but + "folder " + run.backbone +
           copy;
  if (const data::EnvInfo* named = data::guess_env_from_name(run.dataset)) {
    const auto [env, file] = env_family_of(files, config);
    if (!env.empty() && env != named->name)
      return file + " says env " + env + but + "folder " + run.dataset + copy;
  }
  const std::string dataset = dataset_name_of_id(config.dataset);
  if (keys["dataset"] && !dataset.empty() && dataset != run.dataset &&
      !dataset_name_of_id(run.dataset + "-v2").empty())
    return config_file + " says dataset " + config.dataset + but + "folder " + run.dataset + copy;
  return "";
}

FinalEvaluation read_final_evaluation(const fs::path& run_dir) {
  FinalEvaluation e;
  try {
    const nlohmann::json j = io::read_json(rl::RunFiles(run_dir).result.string(), "result file");
    if (j.is_object() && j.contains("mean_normalized") && j["mean_normalized"].is_null()) {
      // What a NaN score is written as: JSON has no NaN.
      e.unreadable =
          "mean_normalized is null: the evaluation's returns were not finite (a "
          "diverged policy?)";
      return e;
    }
    e.score = j.at("mean_normalized").get<double>();
    e.episodes = j.value("episodes", int64_t{-1});
    e.train_step = j.value("train_step", int64_t{0});
    e.seed = j.value("seed", kFinalEvaluationSeed);
    // Hand edits a score must not pass (a walk, 2026-11-30): no episodes behind the mean, or the
    // evaluation of another step than the run finished at, which the report then took for the
    // cell's budget and set the other seeds aside as shorter.
    if (j.contains("episodes") && e.episodes < 1) {
      e.unreadable = "episodes is " + std::to_string(e.episodes) + ": a mean over no episode";
      return e;
    }
    const int64_t finished = rl::finished_step(rl::RunFiles(run_dir));
    if (j.contains("train_step") && finished > 0 && e.train_step != finished) {
      e.unreadable = "train_step is " + std::to_string(e.train_step) +
                     ", but the run finished at step " + std::to_string(finished) +
                     " (done.json): the evaluation of another checkpoint";
    }
  } catch (const std::exception& error) {
    e.unreadable = std::string(
                       "expected JSON with mean_normalized (a number) and episodes and train_step "
                       "(integers, where present) (") +
                   error.what() + ")";
  }
  return e;
}

}  // namespace minrnn::eval
