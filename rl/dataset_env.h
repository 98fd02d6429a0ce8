// Which environment a dataset is evaluated in, and with which reference scores: the one place the
// datasets library (what a file says) meets the envs library (what we can simulate).
//
//   config key env      when set: that environment (any name envs/registry.h accepts); refused
//                       when the dataset records another (an env spec), warned of when its
//                       name says another
//   Minari dataset      its metadata.json eval_env_spec when present, else env_spec: the Gymnasium
//                       id, version, constructor options (kwargs) and time limit it was made in
//   D4RL file           the environment in its name, v4 semantics (gym v2, as D4RL recorded)
// Reference scores: the dataset's own (Minari's ref_min_score/ref_max_score), else the D4RL table.
// Everything is checked before training: an env or version we do not have, an option we do not
// implement, dims or an action space that do not match the env, each an error naming the field
// and its value.
#pragma once
#include <string>

#include "datasets/episodes.h"
#include "rl/config.h"

namespace minrnn::rl {

struct DatasetEnv {
  std::string env;         // canonical name (envs/registry.h): "hopper", "hopper-v5", a spec JSON
  std::string env_id;      // "Hopper-v5"; "" when the dataset names no environment
  int env_version = 0;     // 4 or 5; 0 when unknown
  std::string env_source;  // "metadata.json eval_env_spec", "config key env", "D4RL dataset name"
  double ref_min_score = 0, ref_max_score = 0;
  bool has_ref_scores = false;
  std::string ref_source;  // "metadata.json ref_min_score/ref_max_score", "D4RL table (hopper)"
  // The config's env against the one the dataset's name gives: the run goes on in the config's,
  // and this says so ("" when they agree).
  std::string warning;
};

// The environment for `ds` (config_env: the config's `env`, "" for the dataset's own). Returns
// env "" when neither names one (training works; evaluation then asks for config key env).
// Throws std::invalid_argument naming the field and value on anything we cannot honour, and where
// the env a D4RL file's name says has other widths and neither its metadata nor config_env names
// one (data::Dataset::name_env_conflict).
DatasetEnv resolve_dataset_env(const data::Dataset& ds, const std::string& config_env = "");

// Why a run that evaluates cannot train on `ds` where `env` (resolve_dataset_env's) names no
// environment: the data, what it says of its env, and the key to set; "" where `env` names one.
// Training refuses such a run before anything is written, not at its first evaluation.
std::string why_no_env_to_evaluate(const data::Dataset& ds, const DatasetEnv& env);

// The environment family ("hopper") a run of `config` is evaluated in, as far as the config says
// without reading its data: its env key, else its dataset's name ("hopper_medium-v2.hdf5",
// "mujoco/hopper/medium-v0"); "" where neither names one. Throws std::invalid_argument for an env
// key no environment has.
std::string config_env_family(const TrainConfig& config);

}  // namespace minrnn::rl
