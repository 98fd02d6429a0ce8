#include "sweep/yaml_values.h"

#include <stdexcept>

namespace minrnn::sweep {

void bad_key(const std::string& file, const std::string& key, const std::string& what) {
  throw std::invalid_argument(file + ": key '" + key + "': " + what);
}

std::string scalar_string(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) bad_key(file, key, "expected a string");
  return n.Scalar();
}

int64_t scalar_int(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) bad_key(file, key, "expected an integer");
  try {
    return n.as<int64_t>();
  } catch (const YAML::Exception&) {
    bad_key(file, key, "expected an integer, got '" + n.Scalar() + "'");
  }
}

}  // namespace minrnn::sweep
