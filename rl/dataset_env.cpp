#include "rl/dataset_env.h"

#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "datasets/env_table.h"
#include "envs/registry.h"
#include "io/name_list.h"

namespace minrnn::rl {
namespace {

// "[a, b, c]", as the metadata writes a list.
template <typename T>
std::string list(const std::vector<T>& v) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << "]";
  return out.str();
}

// The environment the config's key env names, else the dataset's env spec, else its name's or
// id's, else the one its widths suggest; where none, false. `source` says which. A config naming
// another env than the dataset's recorded spec is refused (walker2d data evaluated in HalfCheetah,
// same widths, scored silently wrong); one other than its name's is the user's word against a file
// name, and goes on with `warning` saying so.
bool named_env(const data::Dataset& ds, const std::string& config_env, const std::string& metadata,
               envs::ResolvedEnv& env, std::string& source, std::string& warning) {
  envs::ResolvedEnv own;
  std::string own_source;
  if (!ds.env_spec.empty()) {
    own = envs::resolve_env_spec(ds.env_spec, metadata + ": " + ds.env_spec_field);
    own_source = ds.format == "minari" ? "metadata.json " + ds.env_spec_field
                                       : "the file's " + ds.env_spec_field;
  } else if (!ds.env.empty()) {
    own = envs::resolve_env(ds.env);
    own_source = ds.env_source;
  }
  if (config_env.empty()) {
    env = own;
    source = own_source;
    return !own_source.empty();
  }
  try {
    env = envs::resolve_env(config_env);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("config key env: " + std::string(e.what()));
  }
  source = "config key env";
  const bool own_is_a_guess = ds.env_spec.empty() && ds.env_from_widths;  // no word of the data's
  if (own_source.empty() || own_is_a_guess || env.canonical == own.canonical) return true;
  const std::string apart = "config key env: " + config_env + " (" + env.task.spec.id + ") but " +
                            ds.source + " holds " + own.task.spec.id + " data (from " + own_source +
                            ")";
  if (!ds.env_spec.empty()) {
    throw std::invalid_argument(
        apart + ": remove env from the config to evaluate in the data's own environment");
  }
  warning = apart + "; evaluating in " + env.task.spec.id + " as the config says";
  return true;
}

// The data fits the env `who` names: the dataset's own spaces first (a Minari dataset's
// metadata.json names them), then its columns; before any training.
void check_data_fits(const data::Dataset& ds, const envs::EnvSpec& spec,
                     const std::string& metadata, const std::string& who) {
  for (const auto& [key, space, dim, verb] :
       {std::tuple{"observation_space", &ds.minari.observation_space, spec.obs_dim, "observes"},
        std::tuple{"action_space", &ds.minari.action_space, spec.act_dim, "takes"}}) {
    if (space->present && space->shape != std::vector<int64_t>{dim}) {
      throw std::invalid_argument(metadata + ": " + key + ".shape = " + list(space->shape) +
                                  " but " + who + " " + verb + " " + std::to_string(dim));
    }
  }
  if (ds.data.obs_dim != spec.obs_dim) {
    throw std::invalid_argument(ds.source + ": observations have " +
                                std::to_string(ds.data.obs_dim) + " columns but " + who +
                                " observes " + std::to_string(spec.obs_dim));
  }
  if (ds.data.act_dim != spec.act_dim) {
    throw std::invalid_argument(ds.source + ": actions have " + std::to_string(ds.data.act_dim) +
                                " columns but " + who + " takes " + std::to_string(spec.act_dim));
  }
  const data::MinariSpace& act = ds.minari.action_space;
  if (act.present) {
    for (const auto& [bound, values, want] :
         {std::tuple{"low", &act.low, -1.0}, std::tuple{"high", &act.high, 1.0}}) {
      bool ok = values->size() == static_cast<size_t>(spec.act_dim) || values->size() == 1;
      for (double v : *values) ok = ok && v == want;
      if (!ok) {
        throw std::invalid_argument(metadata + ": action_space." + bound + " = " + list(*values) +
                                    " but " + who + "'s actions are in [-1, 1]");
      }
    }
  }
  const data::MinariSpace& obs = ds.minari.observation_space;
  if (obs.present && obs.dtype.rfind("float", 0) != 0) {
    throw std::invalid_argument(metadata + ": observation_space.dtype = \"" + obs.dtype +
                                "\" but " + who + " observes float64");
  }
}

}  // namespace

DatasetEnv resolve_dataset_env(const data::Dataset& ds, const std::string& config_env) {
  DatasetEnv out;
  const std::string metadata =
      ds.minari.metadata_path.empty() ? ds.source : ds.minari.metadata_path;
  envs::ResolvedEnv env;
  // A file's name is the data's only word on its env where nothing else speaks: one the data's
  // widths contradict is refused, not trained with no env to evaluate in.
  if (config_env.empty() && ds.env_spec.empty() && !ds.name_env_conflict.empty()) {
    throw std::invalid_argument(ds.name_env_conflict +
                                " (give the environment, a config's env or inspect's --env, if "
                                "the name is wrong)");
  }
  if (!named_env(ds, config_env, metadata, env, out.env_source, out.warning))
    return out;  // training only
  const envs::EnvSpec& spec = env.task.spec;
  out.env = env.canonical;
  out.env_id = spec.id;
  out.env_version = spec.version;
  check_data_fits(ds, spec, metadata, spec.id + " (from " + out.env_source + ")");
  if (ds.has_ref_returns && !ds.ref_from_table) {  // the dataset's own
    out.ref_min_score = ds.ref_min_return;
    out.ref_max_score = ds.ref_max_return;
    out.ref_source = ds.ref_source;
  } else {
    out.ref_min_score = spec.ref_min_score;
    out.ref_max_score = spec.ref_max_score;
    out.ref_source = "D4RL table (" + spec.name + ")";
  }
  out.has_ref_scores = true;
  return out;
}

std::string why_no_env_to_evaluate(const data::Dataset& ds, const DatasetEnv& env) {
  if (!env.env.empty()) return "";
  std::vector<std::string> fitting;
  for (const data::EnvInfo* fits : data::envs_with_dims(ds.data.obs_dim, ds.data.act_dim))
    fitting.push_back(fits->name);
  const std::string widths =
      "its widths (obs " + std::to_string(ds.data.obs_dim) + ", act " +
      std::to_string(ds.data.act_dim) + ") fit " +
      (fitting.empty() ? "none of D4RL's environments" : io::names_phrase(fitting));
  const std::string example = fitting.empty() ? "NAME" : fitting.front();
  return ds.source + ": no environment to evaluate the run in: the config has no env and the " +
         "data names none (no env spec, no environment in its name), and " + widths +
         "; set config key env (--set env=" + example + ", or env: in the config)";
}

std::string config_env_family(const TrainConfig& config) {
  if (!config.env.empty()) return envs::resolve_env(config.env).task.spec.name;
  // The file's name first ("hopper_medium-v2.hdf5" in a folder named otherwise), else the whole
  // reference (a Minari id, "mujoco/hopper/medium-v0", whose last part names no env).
  const data::EnvInfo* guess =
      data::guess_env_from_name(std::filesystem::path(config.dataset).filename().string());
  if (guess == nullptr) guess = data::guess_env_from_name(config.dataset);
  return guess != nullptr ? guess->name : "";
}

}  // namespace minrnn::rl
