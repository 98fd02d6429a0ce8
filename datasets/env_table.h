// The three D4RL MuJoCo locomotion environments as the datasets library needs them: dimensions for
// validating files and the reference returns for D4RL normalized scores (REFERENCE.md §2). The envs
// library keeps the same numbers for simulation; datasets/ must stand alone, so this is its one
// copy.
#pragma once
#include <string>
#include <vector>

namespace minrnn::data {

struct EnvInfo {
  const char* name;  // "hopper", "halfcheetah", "walker2d"
  int obs_dim;
  int act_dim;
  double ref_min_return;  // random policy (REF_MIN)
  double ref_max_return;  // expert policy (REF_MAX)
  int max_episode_steps;  // the time limit: a longer episode is two joined without a boundary
};

// nullptr when the name is not one of the three (accepts "hopper", "Hopper-v2",
// "hopper-medium-v2").
const EnvInfo* find_env(const std::string& name);

// find_env's environment; where there is none, throws "unknown environment 'NAME'" with the name
// it most likely meant and the three.
const EnvInfo& require_env(const std::string& name);

// Guesses the environment from a file name or dataset id by the env name it contains
// ("hopper_medium-v2.hdf5", "mujoco/walker2d/expert-v0"); nullptr when it names none.
const EnvInfo* guess_env_from_name(const std::string& name);

// A D4RL file's widths against an environment's: "FILE: 'observations'/'actions' have dims 11/3
// but walker2d (FROM) has 17/6", the parenthesis left out where `from` is "".
std::string dims_apart(const std::string& file, int obs_dim, int act_dim, const EnvInfo& env,
                       const std::string& from = "");

// The environments with these dimensions, in the table's order (halfcheetah and walker2d are
// both 17/6).
std::vector<const EnvInfo*> envs_with_dims(int obs_dim, int act_dim);
// The unique environment with these dimensions; nullptr when none or several.
const EnvInfo* guess_env_from_dims(int obs_dim, int act_dim);

}  // namespace minrnn::data
