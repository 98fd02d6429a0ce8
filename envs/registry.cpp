#include "envs/registry.h"

#include <nlohmann/json.hpp>

#include "envs/env_name.h"
#include "envs/env_spec_json.h"
#include "io/python_json.h"

namespace minrnn::envs {

using nlohmann::json;

ResolvedEnv resolve_env(const std::string& name) {
  const size_t first = name.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && name[first] == '{') {
    return resolve_spec_json(io::parse_python_json(name, "env_spec"), "env_spec");
  }
  const EnvName parts = parse_env_name(name);
  const int semantics = parts.version >= 5 ? 5 : 4;
  ResolvedEnv r{make_locomotion_task(parts.family, semantics,
                                     default_locomotion_options(parts.family, semantics)),
                semantics == 5 ? parts.family + "-v5" : parts.family};
  return r;
}

ResolvedEnv resolve_env_spec(const std::string& env_spec_json, const std::string& field) {
  return resolve_spec_json(io::parse_python_json(env_spec_json, field), field);
}

std::string gymnasium_env_spec_json(const std::string& name) {
  const ResolvedEnv r = resolve_env(name);
  const EnvSpec& s = r.task.spec;
  json kwargs = json::object();
  if (!r.canonical.empty() && r.canonical[0] == '{') {
    const json canonical = io::parse_python_json(r.canonical, "env");
    if (canonical.contains("kwargs")) kwargs = canonical["kwargs"];
  }
  const std::string module = s.name == "halfcheetah" ? "half_cheetah" : s.name;
  // Gymnasium's registry (gymnasium/envs/__init__.py): reward thresholds of the three.
  const json threshold = s.name == "halfcheetah" ? json(4800.0)
                         : s.name == "hopper"    ? json(3800.0)
                                                 : json(nullptr);
  // Key order as EnvSpec.to_json writes it.
  std::string out = "{\"id\": " + json(s.id).dump() + ", \"entry_point\": " +
                    json("gymnasium.envs.mujoco." + module + "_v" + std::to_string(s.version) +
                         ":" + gymnasium_class(s.name))
                        .dump() +
                    ", \"reward_threshold\": " + io::dump_python_json(threshold) +
                    ", \"nondeterministic\": false, \"max_episode_steps\": " +
                    std::to_string(s.max_episode_steps) +
                    ", \"order_enforce\": true, \"disable_env_checker\": false, \"kwargs\": " +
                    io::dump_python_json(kwargs) +
                    ", \"additional_wrappers\": [], \"vector_entry_point\": null}";
  return out;
}

std::string env_name_from_dataset_id(const std::string& name) {
  return resolve_env(name).task.spec.name;
}

std::string canonical_env_name(const std::string& name) {
  return resolve_env(name).canonical;
}

EnvSpec env_spec(const std::string& name) {
  return resolve_env(name).task.spec;
}

std::unique_ptr<Env> make_env(const std::string& name, uint64_t seed) {
  return std::make_unique<LocomotionEnv>(resolve_env(name).task, seed);
}

double normalized_score(const std::string& name, double ret) {
  const EnvSpec spec = env_spec(name);
  return normalized_score(ret, spec.ref_min_score, spec.ref_max_score);
}

double normalized_score(double ret, double ref_min, double ref_max) {
  return 100.0 * (ret - ref_min) / (ref_max - ref_min);
}

}  // namespace minrnn::envs
