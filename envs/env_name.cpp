#include "envs/env_name.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

#include "envs/registry.h"
#include "io/name_list.h"
#include "io/text.h"

namespace minrnn::envs {
namespace {

[[noreturn]] void unknown_name(const std::string& name, const std::string& why = "") {
  std::vector<std::string> known = env_names();
  const std::vector<std::string> ids = d4rl_dataset_ids();
  known.insert(known.end(), ids.begin(), ids.end());
  throw std::invalid_argument(
      "unknown environment or D4RL dataset id '" + name + "'" + io::did_you_mean(name, known) +
      (why.empty() ? "" : " (" + why + ")") +
      "; known environments: " + io::comma_separated(env_names()) +
      ", each also as <env>-v2, -v3, -v4 (gym v2-v4 semantics, as D4RL recorded) and -v5 "
      "(Gymnasium v5, as Minari recorded), or a Gymnasium env_spec JSON; D4RL ids: "
      "<env>-<quality>-v2, quality one of " +
      io::comma_separated(d4rl_qualities()));
}

// Gymnasium's version of a versioned name: 2, 3, 4 have v4's semantics; -1 when not a version.
int parse_version(const std::string& digits) {
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(digits);
}

}  // namespace

EnvName parse_env_name(const std::string& name) {
  const std::string key = io::lowercase(name);
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

std::string gymnasium_class(const std::string& family) {
  return family == "halfcheetah" ? "HalfCheetahEnv"
         : family == "hopper"    ? "HopperEnv"
                                 : "Walker2dEnv";
}

std::string default_xml_file(const std::string& family, int version) {
  if (family == "halfcheetah") return "half_cheetah.xml";
  if (family == "hopper") return "hopper.xml";
  return version >= 5 ? "walker2d_v5.xml" : "walker2d.xml";
}

// registry.h's lists of names, defined beside the parser that reads them.
const std::vector<std::string>& env_names() {
  static const std::vector<std::string> names = {"halfcheetah", "hopper", "walker2d"};
  return names;
}

const std::vector<std::string>& d4rl_qualities() {
  static const std::vector<std::string> qualities = {"random",        "medium", "medium-replay",
                                                     "medium-expert", "expert", "full-replay"};
  return qualities;
}

std::vector<std::string> d4rl_dataset_ids() {
  std::vector<std::string> ids;
  for (const auto& env : env_names()) {
    for (const auto& quality : d4rl_qualities()) ids.push_back(env + "-" + quality + "-v2");
  }
  return ids;
}

}  // namespace minrnn::envs
