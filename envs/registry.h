// Environments by name. Every function here takes any of:
//   "hopper", "halfcheetah", "walker2d"         v4 semantics (gym v2-v4, what D4RL recorded)
//   "hopper-v5", "Hopper-v5", "walker2d-v4"...  that Gymnasium version; v2 and v3 (the names D4RL
//                                               used) have v4's semantics, v0/v1/v6... are refused
//   "hopper-medium-v2" (a D4RL dataset id)      its environment, v4 semantics
//   {"id": "Hopper-v5", "kwargs": {...}, ...}   a Gymnasium env_spec as JSON (what a Minari
//                                               dataset's metadata.json holds): the id, the
//                                               constructor options in kwargs, max_episode_steps
// An option Gymnasium's class takes but we do not implement (a custom xml_file, a wrapper), an
// option the class does not take, or a value of the wrong type is a std::invalid_argument naming
// it; nothing is ignored (rendering-only options excepted: they change no observation or reward,
// and are listed in docs/envs.md).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/locomotion.h"

namespace minrnn::envs {

// "halfcheetah", "hopper", "walker2d".
const std::vector<std::string>& env_names();
// D4RL's MuJoCo qualities: random, medium, medium-replay, medium-expert, expert, full-replay. The
// one list: datasets' catalogue names its files by it and collect's recipe makes all but one.
const std::vector<std::string>& d4rl_qualities();
// The 18 D4RL ids: <env>-<quality>-v2 for each env_names() and d4rl_qualities().
std::vector<std::string> d4rl_dataset_ids();

struct ResolvedEnv {
  LocomotionTask task;
  // The shortest name that gives this env back: "hopper" (v4 at its defaults; the name D4RL
  // runs have always recorded), "hopper-v5", or a compact env_spec JSON when an option differs
  // from the version's default.
  std::string canonical;
};
// Throws std::invalid_argument: an unknown name lists the known ones; a bad env_spec names the
// field and its value ("env_spec.kwargs.xml_file = \"my.xml\": ...").
ResolvedEnv resolve_env(const std::string& name);
// A Gymnasium env_spec JSON document; errors name `field` ("eval_env_spec") and the key in it.
ResolvedEnv resolve_env_spec(const std::string& env_spec_json, const std::string& field);

// The Gymnasium EnvSpec of any accepted name as JSON, the way Gymnasium's EnvSpec.to_json writes
// it (id, entry_point, reward_threshold, ..., kwargs with the options that differ from the
// version's defaults): what a Minari dataset's env_spec holds, and what gym.make takes back.
std::string gymnasium_env_spec_json(const std::string& name);

// The family ("hopper") of any accepted name; std::invalid_argument listing the known names
// otherwise.
std::string env_name_from_dataset_id(const std::string& name);
// The canonical name (see ResolvedEnv) of any accepted name.
std::string canonical_env_name(const std::string& name);
EnvSpec env_spec(const std::string& name);
// A fresh environment, already reset with `seed`.
std::unique_ptr<Env> make_env(const std::string& name, uint64_t seed = 0);

// D4RL normalized score with the env's reference returns (EnvSpec::ref_min_score/ref_max_score):
// 100 * (ret - REF_MIN) / (REF_MAX - REF_MIN).
double normalized_score(const std::string& name, double ret);
// The same with given reference returns (a Minari dataset's ref_min_score / ref_max_score).
double normalized_score(double ret, double ref_min, double ref_max);

}  // namespace minrnn::envs
