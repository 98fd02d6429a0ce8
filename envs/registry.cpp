#include "envs/registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include "io/name_list.h"
#include "io/python_json.h"

namespace minrnn::envs {

namespace {

using nlohmann::json;

const std::vector<std::string>& d4rl_qualities() {
  static const std::vector<std::string> qualities = {"random", "medium", "medium-replay",
                                                     "medium-expert", "expert"};
  return qualities;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

[[noreturn]] void unknown_name(const std::string& name, const std::string& why = "") {
  std::vector<std::string> known = env_names();
  const std::vector<std::string> ids = d4rl_dataset_ids();
  known.insert(known.end(), ids.begin(), ids.end());
  throw std::invalid_argument(
      "unknown environment or D4RL dataset id '" + name + "'" + io::did_you_mean(name, known) +
      (why.empty() ? "" : " (" + why + ")") +
      "; known environments: " + io::comma_separated(env_names()) +
      ", each also as <env>-v2, -v3, -v4 (gym v2-v4 semantics, as D4RL recorded) and -v5 "
      "(Gymnasium v5, as Minari recorded), or a Gymnasium env_spec JSON; known D4RL ids: " +
      io::comma_separated(ids));
}

// Gymnasium's version of a versioned name: 2, 3, 4 have v4's semantics; -1 when not a version.
int parse_version(const std::string& digits) {
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(digits);
}

struct NameParts {
  std::string family;
  int version = 4;         // the Gymnasium version asked for: 2, 3, 4 or 5
  bool versioned = false;  // "hopper-v5", not "hopper" or a D4RL id
};

// "hopper", "Hopper-v5", "hopper-medium-v2"; unknown_name() otherwise.
NameParts parse_plain_name(const std::string& name) {
  const std::string key = lower(name);
  for (const auto& family : env_names()) {
    if (key == family) return {family, 4, false};
    for (const auto& quality : d4rl_qualities()) {
      if (key == family + "-" + quality + "-v2") return {family, 2, false};
    }
    if (key.rfind(family + "-v", 0) == 0) {
      const int version = parse_version(key.substr(family.size() + 2));
      if (version >= 2 && version <= 5) return {family, version, true};
      if (version >= 0) {
        unknown_name(name, family + " has versions v2, v3, v4 (one semantics) and v5, not v" +
                               std::to_string(version));
      }
    }
  }
  unknown_name(name);
}

// Gymnasium's class and module of a family (for checking an env_spec's entry_point).
std::string class_name(const std::string& family) {
  return family == "halfcheetah" ? "HalfCheetahEnv"
         : family == "hopper"    ? "HopperEnv"
                                 : "Walker2dEnv";
}
// Gymnasium's default xml_file for a family at a version.
std::string default_xml_file(const std::string& family, int version) {
  if (family == "halfcheetah") return "half_cheetah.xml";
  if (family == "hopper") return "hopper.xml";
  return version >= 5 ? "walker2d_v5.xml" : "walker2d.xml";
}

// Options of MujocoEnv that only change what a render draws: accepted, they touch no
// observation, reward or termination.
const std::set<std::string>& rendering_only_options() {
  static const std::set<std::string> keys = {
      "render_mode",           "width",    "height",        "camera_id", "camera_name",
      "default_camera_config", "max_geom", "visual_options"};
  return keys;
}

std::string shown(const json& value) {
  return io::dump_python_json(value);
}

double finite_number(const json& value, const std::string& what) {
  const double x = io::json_number(value, what);
  if (!std::isfinite(x)) {
    throw std::invalid_argument(what + " = " + shown(value) + ": must be a finite number");
  }
  return x;
}

std::array<double, 2> number_pair(const json& value, const std::string& what) {
  if (!value.is_array() || value.size() != 2 || !io::is_json_number(value[0]) ||
      !io::is_json_number(value[1])) {
    throw std::invalid_argument(what + " = " + shown(value) +
                                ": expected a pair of numbers (low, high)");
  }
  const double lo = io::json_number(value[0], what), hi = io::json_number(value[1], what);
  if (std::isnan(lo) || std::isnan(hi) || !(lo < hi)) {
    throw std::invalid_argument(what + " = " + shown(value) + ": expected low < high");
  }
  return {lo, hi};
}

bool boolean(const json& value, const std::string& what) {
  if (!value.is_boolean()) {
    throw std::invalid_argument(what + " = " + shown(value) + ": expected true or false");
  }
  return value.get<bool>();
}

bool same(const LocomotionOptions& a, const LocomotionOptions& b) {
  return a.forward_reward_weight == b.forward_reward_weight &&
         a.ctrl_cost_weight == b.ctrl_cost_weight && a.healthy_reward == b.healthy_reward &&
         a.terminate_when_unhealthy == b.terminate_when_unhealthy &&
         a.healthy_state_range == b.healthy_state_range && a.healthy_z_range == b.healthy_z_range &&
         a.healthy_angle_range == b.healthy_angle_range &&
         a.reset_noise_scale == b.reset_noise_scale &&
         a.exclude_current_positions_from_observation ==
             b.exclude_current_positions_from_observation &&
         a.frame_skip == b.frame_skip && a.max_episode_steps == b.max_episode_steps;
}

// Applies env_spec.kwargs to the version's defaults; `kept` receives the options that change
// the env (for the canonical name).
void apply_kwargs(const std::string& family, int asked_version, const json& kwargs,
                  const std::string& field, LocomotionOptions& o, json& kept) {
  const std::string where = field + ".kwargs";
  if (!kwargs.is_object()) {
    throw std::invalid_argument(where + " = " + shown(kwargs) + ": expected an object");
  }
  const bool legged = family != "halfcheetah";
  const std::string id_shown = (family == "halfcheetah" ? "HalfCheetah"
                                : family == "hopper"    ? "Hopper"
                                                        : "Walker2d") +
                               std::string("-v") + std::to_string(asked_version);
  for (const auto& [key, value] : kwargs.items()) {
    const std::string what = where + "." + key;
    bool known = true, changes_env = true;
    if (key == "forward_reward_weight") {
      o.forward_reward_weight = finite_number(value, what);
    } else if (key == "ctrl_cost_weight") {
      o.ctrl_cost_weight = finite_number(value, what);
    } else if (key == "reset_noise_scale") {
      o.reset_noise_scale = finite_number(value, what);
      if (o.reset_noise_scale < 0) {
        throw std::invalid_argument(what + " = " + shown(value) + ": must be >= 0");
      }
    } else if (key == "exclude_current_positions_from_observation") {
      o.exclude_current_positions_from_observation = boolean(value, what);
    } else if (legged && key == "healthy_reward") {
      o.healthy_reward = finite_number(value, what);
    } else if (legged && key == "terminate_when_unhealthy") {
      o.terminate_when_unhealthy = boolean(value, what);
    } else if (legged && key == "healthy_z_range") {
      o.healthy_z_range = number_pair(value, what);
    } else if (legged && key == "healthy_angle_range") {
      o.healthy_angle_range = number_pair(value, what);
    } else if (family == "hopper" && key == "healthy_state_range") {
      o.healthy_state_range = number_pair(value, what);
    } else if (asked_version >= 5 && key == "frame_skip") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1000) {
        throw std::invalid_argument(what + " = " + shown(value) +
                                    ": expected an integer in [1, 1000]");
      }
      o.frame_skip = static_cast<int>(value.get<int64_t>());
    } else if ((asked_version == 3 || asked_version >= 5) && key == "xml_file") {
      const std::string want = default_xml_file(family, asked_version);
      const std::string file = value.is_string() ? value.get<std::string>() : "";
      const size_t slash = file.rfind('/');
      const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
      const bool gymnasium_asset =
          slash == std::string::npos ||
          file.find("/gymnasium/envs/mujoco/assets/") != std::string::npos ||
          file.find("/gym/envs/mujoco/assets/") != std::string::npos;
      if (base != want || !gymnasium_asset) {
        throw std::invalid_argument(what + " = " + shown(value) + ": only " + id_shown +
                                    "'s own model (xml_file \"" + want +
                                    "\") is built in; a custom model is not supported");
      }
      changes_env = false;
    } else if (rendering_only_options().count(key) &&
               (asked_version >= 5 || key != "default_camera_config")) {
      changes_env = false;
    } else {
      known = false;
    }
    if (!known) {
      throw std::invalid_argument(what + " = " + shown(value) + ": not an option of " + id_shown +
                                  " that minrnn implements (docs/envs.md lists them)");
    }
    if (changes_env) kept[key] = value;
  }
}

ResolvedEnv resolve_spec_json(const json& spec, const std::string& field) {
  if (!spec.is_object()) {
    throw std::invalid_argument(field + " = " + shown(spec) + ": expected a JSON object");
  }
  static const std::set<std::string> known = {"id",
                                              "entry_point",
                                              "reward_threshold",
                                              "nondeterministic",
                                              "max_episode_steps",
                                              "order_enforce",
                                              "disable_env_checker",
                                              "kwargs",
                                              "additional_wrappers",
                                              "vector_entry_point",
                                              "autoreset",
                                              "apply_api_compatibility",
                                              "namespace",
                                              "name",
                                              "version"};
  for (const auto& [key, value] : spec.items()) {
    if (!known.count(key)) {
      throw std::invalid_argument(field + "." + key + " = " + shown(value) +
                                  ": not a field of a Gymnasium EnvSpec that minrnn knows");
    }
  }
  if (!spec.contains("id") || !spec["id"].is_string()) {
    throw std::invalid_argument(field + ".id: missing (expected e.g. \"Hopper-v5\")");
  }
  const std::string id = spec["id"].get<std::string>();
  if (id.find('/') != std::string::npos) {
    throw std::invalid_argument(field + ".id = \"" + id +
                                "\": a namespaced environment; minrnn has Gymnasium's own "
                                "HalfCheetah, Hopper and Walker2d only");
  }
  NameParts parts;
  try {
    parts = parse_plain_name(id);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(field + ".id = \"" + id + "\": " + e.what());
  }
  if (!parts.versioned) {
    throw std::invalid_argument(field + ".id = \"" + id +
                                "\": expected a Gymnasium id with a version (\"Hopper-v5\")");
  }
  if (spec.contains("namespace") && !spec["namespace"].is_null()) {
    throw std::invalid_argument(field + ".namespace = " + shown(spec["namespace"]) +
                                ": namespaced environments are not supported");
  }
  if (spec.contains("entry_point") && !spec["entry_point"].is_null()) {
    const json& ep = spec["entry_point"];
    const std::string text = ep.is_string() ? ep.get<std::string>() : "";
    const size_t colon = text.find(':');
    const std::string module = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string cls = colon == std::string::npos ? "" : text.substr(colon + 1);
    const bool gym_module =
        module.rfind("gymnasium.envs.mujoco", 0) == 0 || module.rfind("gym.envs.mujoco", 0) == 0;
    if (!gym_module || cls != class_name(parts.family)) {
      throw std::invalid_argument(
          field + ".entry_point = " + shown(ep) + ": not Gymnasium's " + class_name(parts.family) +
          " (expected e.g. \"gymnasium.envs.mujoco." +
          (parts.family == "halfcheetah" ? "half_cheetah" : parts.family) + "_v" +
          std::to_string(std::max(parts.version, 4)) + ":" + class_name(parts.family) + "\")");
    }
  }
  if (spec.contains("additional_wrappers")) {
    const json& wrappers = spec["additional_wrappers"];
    if (!wrappers.is_null() && !(wrappers.is_array() && wrappers.empty())) {
      throw std::invalid_argument(field + ".additional_wrappers = " + shown(wrappers) +
                                  ": wrappers change observations or rewards; minrnn does not "
                                  "implement them");
    }
  }
  const int semantics = parts.version >= 5 ? 5 : 4;
  LocomotionOptions o = default_locomotion_options(parts.family, semantics);
  if (spec.contains("max_episode_steps")) {
    const json& m = spec["max_episode_steps"];
    if (!m.is_number_integer() || m.get<int64_t>() < 1 || m.get<int64_t>() > 100000000) {
      throw std::invalid_argument(field + ".max_episode_steps = " + shown(m) +
                                  ": expected a positive integer (an env without a time limit "
                                  "is not supported)");
    }
    o.max_episode_steps = static_cast<int>(m.get<int64_t>());
  }
  json kept = json::object();
  if (spec.contains("kwargs") && !spec["kwargs"].is_null()) {
    apply_kwargs(parts.family, parts.version, spec["kwargs"], field, o, kept);
  }
  ResolvedEnv r{make_locomotion_task(parts.family, semantics, o), ""};
  if (same(o, default_locomotion_options(parts.family, semantics))) {
    r.canonical = semantics == 5 ? parts.family + "-v5" : parts.family;
  } else {
    json canonical = {{"id", r.task.spec.id}};
    if (!kept.empty()) canonical["kwargs"] = kept;
    if (o.max_episode_steps != 1000) canonical["max_episode_steps"] = o.max_episode_steps;
    r.canonical = io::dump_python_json(canonical);
  }
  return r;
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

ResolvedEnv resolve_env(const std::string& name) {
  const size_t first = name.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && name[first] == '{') {
    return resolve_spec_json(io::parse_python_json(name, "env_spec"), "env_spec");
  }
  const NameParts parts = parse_plain_name(name);
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
                         ":" + class_name(s.name))
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
