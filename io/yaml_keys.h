// Keys of a YAML mapping as a person wrote them: yaml-cpp keeps every entry of a map, one key
// given twice included, and a reader taking the entries in turn would silently keep the last.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

namespace minrnn::io {

// "key 'lr' is given twice (lines 3 and 7)" for the first key `map` gives twice (its lines where
// yaml-cpp marks them), "" where every key is given once or `map` is not a mapping.
std::string repeated_key(const YAML::Node& map);

// What every YAML file minrnn reads (a config, a sweep) goes through first, with errors that start
// with `where` (the file, a key in it): `text` parsed ("WHERE: not valid YAML: ..."), and a node
// checked to be a mapping of keys given once each ("WHERE: expected EXPECTED", "WHERE: key 'lr'
// is given twice (lines 3 and 7)"). Throw std::invalid_argument.
YAML::Node parse_yaml(const std::string& text, const std::string& where);
void check_mapping(const YAML::Node& node, const std::string& where, const std::string& expected);

// A value refused: std::invalid_argument "WHERE: key 'KEY': WHAT" (a config's, a sweep file's,
// its slurm: section's as 'slurm.KEY'); bad_key_message that text, for an exception of another
// type.
std::string bad_key_message(const std::string& where, const std::string& key,
                            const std::string& what);
[[noreturn]] void bad_key(const std::string& where, const std::string& key,
                          const std::string& what);
// A scalar's text ("expected a string" otherwise), or its whole-number value ("expected an
// integer, got 'x'"), refused by bad_key.
std::string scalar_string(const YAML::Node& n, const std::string& where, const std::string& key);
int64_t scalar_int(const YAML::Node& n, const std::string& where, const std::string& key);

}  // namespace minrnn::io
