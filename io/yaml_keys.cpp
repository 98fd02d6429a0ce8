#include "io/yaml_keys.h"

#include <map>
#include <sstream>
#include <stdexcept>

namespace minrnn::io {

std::string repeated_key(const YAML::Node& map) {
  if (!map.IsMap()) return "";
  std::map<std::string, YAML::Mark> first;  // by key: where it was given first
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) continue;  // the readers refuse such keys themselves
    const YAML::Mark at = kv.first.Mark();
    const auto [seen, fresh] = first.emplace(kv.first.Scalar(), at);
    if (fresh) continue;
    const std::string lines = seen->second.is_null() || at.is_null()
                                  ? ""
                                  : " (lines " + std::to_string(seen->second.line + 1) + " and " +
                                        std::to_string(at.line + 1) + ")";
    return "key '" + kv.first.Scalar() + "' is given twice" + lines;
  }
  return "";
}

namespace {

// Line `line` (0-based) of `text`.
std::string line_of(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i <= line && std::getline(in, l); ++i) {
  }
  return l;
}

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& where) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // `set: [dataset=data/{dataset}.hdf5]`: the brace opens a YAML map inside the list (a walk,
    // 2026-11-30: only yaml-cpp's "end of sequence flow not found").
    const std::string l = line_of(text, e.mark.line);
    const size_t open = l.find('[');
    const bool brace_in_list = open != std::string::npos && l.find('{', open) != std::string::npos;
    throw std::invalid_argument(
        where + ": not valid YAML: " + e.what() +
        (brace_in_list ? " (a '{' inside [...] starts a YAML map: quote a value that holds one, "
                         "\"dataset=data/{dataset}.hdf5\")"
                       : ""));
  }
}

void check_mapping(const YAML::Node& node, const std::string& where, const std::string& expected) {
  if (!node.IsMap()) throw std::invalid_argument(where + ": expected " + expected);
  if (const std::string twice = repeated_key(node); !twice.empty())
    throw std::invalid_argument(where + ": " + twice);
}

std::string bad_key_message(const std::string& where, const std::string& key,
                            const std::string& what) {
  return where + ": key '" + key + "': " + what;
}

void bad_key(const std::string& where, const std::string& key, const std::string& what) {
  throw std::invalid_argument(bad_key_message(where, key, what));
}

std::string scalar_string(const YAML::Node& n, const std::string& where, const std::string& key) {
  if (!n.IsScalar()) bad_key(where, key, "expected a string");
  return n.Scalar();
}

int64_t scalar_int(const YAML::Node& n, const std::string& where, const std::string& key) {
  if (!n.IsScalar()) bad_key(where, key, "expected an integer");
  try {
    return n.as<int64_t>();
  } catch (const YAML::Exception&) {
    bad_key(where, key, "expected an integer, got '" + n.Scalar() + "'");
  }
}

}  // namespace minrnn::io
