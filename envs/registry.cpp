#include "envs/registry.h"

#include <stdexcept>

#include "envs/locomotion.h"

namespace minrnn::envs {

namespace {

const std::vector<std::string>& d4rl_qualities() {
  static const std::vector<std::string> qualities = {"random", "medium", "medium-replay",
                                                     "medium-expert", "expert"};
  return qualities;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

const std::vector<std::string>& env_names() {
  static const std::vector<std::string> names = {"halfcheetah", "hopper", "walker2d"};
  return names;
}

std::vector<std::string> d4rl_dataset_ids() {
  std::vector<std::string> ids;
  for (const auto& env : env_names()) {
    for (const auto& quality : d4rl_qualities()) ids.push_back(env + "-" + quality + "-v2");
  }
  return ids;
}

std::string env_name_from_dataset_id(const std::string& name_or_d4rl_id) {
  for (const auto& env : env_names()) {
    if (name_or_d4rl_id == env) return env;
    for (const auto& quality : d4rl_qualities()) {
      if (name_or_d4rl_id == env + "-" + quality + "-v2") return env;
    }
  }
  throw std::invalid_argument("unknown environment or D4RL dataset id '" + name_or_d4rl_id +
                              "'; known environments: " + join(env_names()) +
                              "; known D4RL ids: " + join(d4rl_dataset_ids()));
}

EnvSpec env_spec(const std::string& name_or_d4rl_id) {
  return locomotion_task(env_name_from_dataset_id(name_or_d4rl_id)).spec;
}

std::unique_ptr<Env> make_env(const std::string& name_or_d4rl_id, uint64_t seed) {
  return std::make_unique<LocomotionEnv>(env_name_from_dataset_id(name_or_d4rl_id), seed);
}

double normalized_score(const std::string& env_or_dataset_id, double ret) {
  const EnvSpec spec = env_spec(env_or_dataset_id);
  return 100.0 * (ret - spec.ref_min_score) / (spec.ref_max_score - spec.ref_min_score);
}

}  // namespace minrnn::envs
