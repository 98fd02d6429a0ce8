// A sweep file's values, read with errors that name the file and the key as the user wrote it
// ("s.yaml: key 'slurm.time': expected a string"): the sweep's own keys and its slurm: section's.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

namespace minrnn::sweep {

// Throws std::invalid_argument "FILE: key 'KEY': WHAT".
[[noreturn]] void bad_key(const std::string& file, const std::string& key, const std::string& what);
std::string scalar_string(const YAML::Node& n, const std::string& file, const std::string& key);
int64_t scalar_int(const YAML::Node& n, const std::string& file, const std::string& key);

}  // namespace minrnn::sweep
