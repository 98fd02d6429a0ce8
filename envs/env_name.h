// A plain environment name taken apart ("hopper", "Hopper-v5", "hopper-medium-v2"): which of
// Gymnasium's three families, at which version, and the names Gymnasium gives them. Internal to
// envs/ (registry.h is the public face).
#pragma once
#include <string>

namespace minrnn::envs {

struct EnvName {
  std::string family;      // "hopper"
  int version = 4;         // the Gymnasium version asked for: 2, 3, 4 or 5
  bool versioned = false;  // "hopper-v5", not "hopper" or a D4RL id
};

// Case-insensitive; an unknown name, or a version Gymnasium does not have, is a
// std::invalid_argument listing the known names (and the typo's likely meaning).
EnvName parse_env_name(const std::string& name);

// Gymnasium's class of a family ("HopperEnv"): what an env_spec's entry_point must name.
std::string gymnasium_class(const std::string& family);
// Gymnasium's default xml_file for a family at a version.
std::string default_xml_file(const std::string& family, int version);

}  // namespace minrnn::envs
