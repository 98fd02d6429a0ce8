// Keys of a YAML mapping as a person wrote them: yaml-cpp keeps every entry of a map, one key
// given twice included, and a reader taking the entries in turn would silently keep the last.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>

namespace minrnn::io {

// "key 'lr' is given twice (lines 3 and 7)" for the first key `map` gives twice (its lines where
// yaml-cpp marks them), "" where every key is given once or `map` is not a mapping.
std::string repeated_key(const YAML::Node& map);

}  // namespace minrnn::io
