#include "envs/env_spec_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "envs/env_name.h"
#include "io/name_list.h"
#include "io/python_json.h"

namespace minrnn::envs {
namespace {

using nlohmann::json;

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

int frame_skip_of(const json& value, const std::string& what) {
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1000) {
    throw std::invalid_argument(what + " = " + shown(value) + ": expected an integer in [1, 1000]");
  }
  return static_cast<int>(value.get<int64_t>());
}

// An xml_file kwarg is accepted only where it names the version's own model (a bare name, or
// gym's or Gymnasium's asset path): a custom model is refused, never silently replaced by ours.
void check_own_xml_file(const json& value, const std::string& what, const std::string& family,
                        int asked_version, const std::string& id_shown) {
  const std::string want = default_xml_file(family, asked_version);
  const std::string file = value.is_string() ? value.get<std::string>() : "";
  const size_t slash = file.rfind('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  const bool gymnasium_asset = slash == std::string::npos ||
                               file.find("/gymnasium/envs/mujoco/assets/") != std::string::npos ||
                               file.find("/gym/envs/mujoco/assets/") != std::string::npos;
  if (base != want || !gymnasium_asset) {
    throw std::invalid_argument(what + " = " + shown(value) + ": only " + id_shown +
                                "'s own model (xml_file \"" + want +
                                "\") is built in; a custom model is not supported");
  }
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
      o.frame_skip = frame_skip_of(value, what);
    } else if ((asked_version == 3 || asked_version >= 5) && key == "xml_file") {
      check_own_xml_file(value, what, family, asked_version, id_shown);
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

// Every field of `spec` is one of a Gymnasium EnvSpec's.
void check_spec_fields(const json& spec, const std::string& field) {
  if (!spec.is_object()) {
    throw std::invalid_argument(field + " = " + shown(spec) + ": expected a JSON object");
  }
  static const std::vector<std::string> known = {"id",
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
    if (std::count(known.begin(), known.end(), key) == 0) {
      throw std::invalid_argument(field + "." + key + " = " + shown(value) +
                                  ": not a field of a Gymnasium EnvSpec that minrnn knows" +
                                  io::did_you_mean(key, known));
    }
  }
}

// The family and version of the spec's id: one of Gymnasium's own, versioned, not namespaced.
EnvName spec_id(const json& spec, const std::string& field) {
  if (!spec.contains("id") || !spec["id"].is_string()) {
    throw std::invalid_argument(field + ".id: missing (expected e.g. \"Hopper-v5\")");
  }
  const std::string id = spec["id"].get<std::string>();
  if (id.find('/') != std::string::npos) {
    throw std::invalid_argument(field + ".id = \"" + id +
                                "\": a namespaced environment; minrnn has Gymnasium's own "
                                "HalfCheetah, Hopper and Walker2d only");
  }
  EnvName parts;
  try {
    parts = parse_env_name(id);
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
  return parts;
}

// The spec builds Gymnasium's own class for its id, unwrapped: anything else would observe or
// reward differently from the env minrnn steps.
void check_gymnasium_class(const json& spec, const EnvName& parts, const std::string& field) {
  if (spec.contains("entry_point") && !spec["entry_point"].is_null()) {
    const json& ep = spec["entry_point"];
    const std::string text = ep.is_string() ? ep.get<std::string>() : "";
    const size_t colon = text.find(':');
    const std::string module = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string cls = colon == std::string::npos ? "" : text.substr(colon + 1);
    const bool gym_module =
        module.rfind("gymnasium.envs.mujoco", 0) == 0 || module.rfind("gym.envs.mujoco", 0) == 0;
    if (!gym_module || cls != gymnasium_class(parts.family)) {
      throw std::invalid_argument(
          field + ".entry_point = " + shown(ep) + ": not Gymnasium's " +
          gymnasium_class(parts.family) + " (expected e.g. \"gymnasium.envs.mujoco." +
          (parts.family == "halfcheetah" ? "half_cheetah" : parts.family) + "_v" +
          std::to_string(std::max(parts.version, 4)) + ":" + gymnasium_class(parts.family) + "\")");
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
}

}  // namespace

ResolvedEnv resolve_spec_json(const json& spec, const std::string& field) {
  check_spec_fields(spec, field);
  const EnvName parts = spec_id(spec, field);
  check_gymnasium_class(spec, parts, field);
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

}  // namespace minrnn::envs
