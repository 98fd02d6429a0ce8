#include "rl/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "io/input_file.h"
#include "io/name_list.h"
#include "io/yaml_keys.h"
#include "rl/corl_names.h"
#include "rl/decision_model.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// The shortest decimal that reads back as the same double: "0.1" and "0.0003" where yaml-cpp
// writes 0.10000000000000001 and 0.00029999999999999997 (what a person reads in config.yaml, and
// still exact). An exponent keeps a point ("1.0e-05"), so YAML 1.1 readers (PyYAML) see a float.
std::string shortest_decimal(double value) {
  char text[40];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  // A whole number's digits, not an exponent: 3600, not 3.6e+03.
  const double magnitude = std::fabs(value);
  if (magnitude >= 1 && magnitude < 1e16)
    digits = std::max(digits, static_cast<int>(std::floor(std::log10(magnitude))) + 1);
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  std::string out = text;
  const size_t exponent = out.find('e');
  if (exponent != std::string::npos && out.find('.') == std::string::npos)
    out.insert(exponent, ".0");
  return out;
}

// One key: how to read it into a TrainConfig and how to print it back.
struct Field {
  std::string name;
  std::string type;  // for error messages
  std::function<void(TrainConfig&, const YAML::Node&)> set;
  std::function<std::string(const TrainConfig&)> get;
};

template <typename T>
Field field(const std::string& name, const std::string& type, T TrainConfig::*member) {
  return {name, type, [member](TrainConfig& c, const YAML::Node& n) { c.*member = n.as<T>(); },
          [member](const TrainConfig& c) {
            if constexpr (std::is_same_v<T, double>) return shortest_decimal(c.*member);
            YAML::Emitter e;
            e << c.*member;
            return std::string(e.c_str());
          }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      field("dataset", "a string", &TrainConfig::dataset),
      field("env", "a string", &TrainConfig::env),
      field("top_fraction", "a number", &TrainConfig::top_fraction),
      field("backbone", "a string", &TrainConfig::backbone),
      field("n_layers", "an integer", &TrainConfig::n_layers),
      field("embed_dim", "an integer", &TrainConfig::embed_dim),
      field("n_heads", "an integer", &TrainConfig::n_heads),
      field("expansion", "a number", &TrainConfig::expansion),
      field("conv", "true or false", &TrainConfig::conv),
      field("log_space", "true or false", &TrainConfig::log_space),
      field("dropout", "a number", &TrainConfig::dropout),
      field("context_len", "an integer", &TrainConfig::context_len),
      field("max_ep_len", "an integer", &TrainConfig::max_ep_len),
      field("lr", "a number", &TrainConfig::lr),
      field("weight_decay", "a number", &TrainConfig::weight_decay),
      field("warmup_steps", "an integer", &TrainConfig::warmup_steps),
      field("max_steps", "an integer", &TrainConfig::max_steps),
      field("batch_size", "an integer", &TrainConfig::batch_size),
      field("grad_clip", "a number", &TrainConfig::grad_clip),
      field("matmul_precision", "a string", &TrainConfig::matmul_precision),
      field("target_return", "a number", &TrainConfig::target_return),
      field("return_scale", "a number", &TrainConfig::return_scale),
      field("eval_every", "an integer", &TrainConfig::eval_every),
      field("eval_episodes", "an integer", &TrainConfig::eval_episodes),
      field("checkpoint_every", "an integer", &TrainConfig::checkpoint_every),
      field("log_every", "an integer", &TrainConfig::log_every),
      field("seed", "an integer", &TrainConfig::seed),
      field("device", "a string", &TrainConfig::device),
  };
  return table;
}

// Sets `key` of `c` from `value`; why it cannot ("" where it was set).
std::string why_not_set(TrainConfig& c, const std::string& key, const YAML::Node& value) {
  for (const auto& f : fields()) {
    if (f.name != key) continue;
    if (value.IsNull()) return "expected " + f.type + ", got nothing (an empty value)";
    if (!value.IsScalar()) return "expected " + f.type + ", got a list or map";
    try {
      f.set(c, value);
    } catch (const YAML::Exception&) {
      return "expected " + f.type + ", got '" + value.Scalar() + "'";
    }
    return "";
  }
  std::vector<std::string> known;
  for (const auto& f : fields()) known.push_back(f.name);
  if (const char* ours = our_name_for_corls(key)) {
    return std::string("unknown key (CORL's dt.py name: here it is '") + ours +
           "') (known: " + io::comma_separated(known) + ")";
  }
  return "unknown key" + io::known_names_hint(key, known);
}

// Where an override's key was set (origin's value): its errors are RefusedOverride.
const std::string kOverrideOrigin = "--set";

// bad_key's refusal, as a RefusedOverride where the key's value came from an override.
[[noreturn]] void refuse(const std::string& where, const std::string& key,
                         const std::string& what) {
  if (where == kOverrideOrigin)
    throw RefusedOverride(key, what, io::bad_key_message(where, key, what));
  io::bad_key(where, key, what);
}

void set_key(TrainConfig& c, const std::string& key, const YAML::Node& value,
             const std::string& where, std::map<std::string, std::string>& origin) {
  if (const std::string why = why_not_set(c, key, value); !why.empty()) refuse(where, key, why);
  origin[key] = where;
}

// Applies `node`'s keys, after those of its `defaults:` file (depth-limited against cycles).
void apply_file(TrainConfig& c, const YAML::Node& node, const std::string& where,
                const std::string& base_dir, std::map<std::string, std::string>& origin,
                int depth) {
  if (node.IsNull()) return;  // an empty file
  io::check_mapping(node, where, "a map of key: value");
  if (const auto d = node["defaults"]) {
    if (!d.IsScalar()) io::bad_key(where, "defaults", "expected a file name");
    if (depth > 8) io::bad_key(where, "defaults", "more than 8 nested defaults (a cycle?)");
    fs::path p = d.Scalar();
    if (p.is_relative()) p = fs::path(base_dir) / p;
    // A regular file of a config's size: a folder, a FIFO or /dev/zero is refused, not read.
    std::string text;
    try {
      text = io::read_input_file(p.string(), "config");
    } catch (const std::invalid_argument& e) {
      io::bad_key(
          where, "defaults",
          std::string(e.what()) + (fs::path(d.Scalar()).is_relative()
                                       ? " (a relative name is read from the config's folder)"
                                       : ""));
    }
    apply_file(c, io::parse_yaml(text, p.string()), p.string(), p.parent_path().string(), origin,
               depth + 1);
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      throw std::invalid_argument(where + ": a key must be a name, not a list or map");
    }
    const auto key = kv.first.Scalar();
    if (key != "defaults") set_key(c, key, kv.second, where, origin);
  }
}

// `origin` says where each key was set; a key set nowhere is the config's own (`where`) to set.
void check(bool ok, const std::map<std::string, std::string>& origin, const std::string& key,
           const std::string& expected, const std::string& got) {
  if (ok) return;
  auto it = origin.find(key);
  if (it == origin.end()) {
    io::bad_key(origin.at(""), key,
                "expected " + expected + ", got " + got + " (the built-in default: set it here)");
  }
  refuse(it->second, key, "expected " + expected + ", got " + got);
}

// check of a key against another's value (`partner`'s): where the partner's value is an
// override's and the key's is not, the override is what made the pair wrong, and it is refused
// (a command line's usage error), the key's own complaint beside it.
void check_against(bool ok, const std::map<std::string, std::string>& origin,
                   const std::string& key, const std::string& expected, const std::string& got,
                   const std::string& partner, const std::string& partner_value) {
  if (ok) return;
  const auto by = origin.find(partner), own = origin.find(key);
  const bool key_overridden = own != origin.end() && own->second == kOverrideOrigin;
  if (by != origin.end() && by->second == kOverrideOrigin && !key_overridden) {
    const std::string key_where = own == origin.end() ? "its built-in default" : own->second;
    refuse(kOverrideOrigin, partner,
           partner_value + " leaves " + key + " wrong (" + key_where + ": expected " + expected +
               ", got " + got + ")");
  }
  check(ok, origin, key, expected, got);
}

// The sampler and the rollout count in int.
constexpr int64_t kMaxCount = std::numeric_limits<int>::max();
std::string count_range() {
  return "from 1 to " + std::to_string(kMaxCount);
}

template <typename T>
std::string text_of(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// The model's shape and each backbone's own options (on another backbone they would be silently
// ignored). `o`: where each key's value came from (check's).
void validate_model(const TrainConfig& c, const std::map<std::string, std::string>& o) {
  check(!c.dataset.empty(), o, "dataset", "a D4RL id or .hdf5 path", "nothing");
  check(unknown_backbone(c.backbone).empty(), o, "backbone",
        "one of " + io::comma_separated(backbone_names()),
        "'" + c.backbone + "'" + io::did_you_mean(c.backbone, backbone_names()));
  check(c.n_layers >= 1, o, "n_layers", ">= 1", text_of(c.n_layers));
  check(c.embed_dim >= 1, o, "embed_dim", ">= 1", text_of(c.embed_dim));
  check(c.n_heads >= 1, o, "n_heads", ">= 1", text_of(c.n_heads));
  check_against(c.embed_dim % c.n_heads == 0, o, "n_heads", "a divisor of embed_dim",
                text_of(c.n_heads) + " with embed_dim " + text_of(c.embed_dim), "embed_dim",
                text_of(c.embed_dim));
  const bool min_rnn = c.backbone == "mingru" || c.backbone == "minlstm";
  const bool attention = c.backbone == "transformer";
  check_against(attention || c.n_heads == 1, o, "n_heads", "1 unless backbone is transformer",
                text_of(c.n_heads) + " with backbone " + c.backbone, "backbone", c.backbone);
  // The recurrence's width is round(expansion · embed_dim): at least 1 (a smaller one was clamped
  // to 1, silently), at most 64 · embed_dim.
  const double width = c.expansion * static_cast<double>(c.embed_dim);
  check(std::isfinite(c.expansion) && c.expansion > 0 && c.expansion <= 64 && width >= 0.5, o,
        "expansion", "in (0, 64] with round(expansion · embed_dim) >= 1", text_of(c.expansion));
  check_against(!attention || c.expansion == 1, o, "expansion", "1 with backbone transformer",
                text_of(c.expansion), "backbone", c.backbone);
  check_against(min_rnn || !c.conv, o, "conv", "false unless backbone is mingru or minlstm",
                "true with backbone " + c.backbone, "backbone", c.backbone);
  check_against(min_rnn || c.log_space, o, "log_space", "true unless backbone is mingru or minlstm",
                "false with backbone " + c.backbone, "backbone", c.backbone);
  check(c.dropout >= 0 && c.dropout < 1, o, "dropout", "in [0, 1)", text_of(c.dropout));
  check(c.top_fraction > 0 && c.top_fraction <= 1, o, "top_fraction", "in (0, 1]",
        text_of(c.top_fraction));
  check(c.context_len >= 1 && c.context_len <= kMaxCount, o, "context_len", count_range(),
        text_of(c.context_len));
  check(c.max_ep_len >= 1, o, "max_ep_len", ">= 1", text_of(c.max_ep_len));
}

// The optimization: learning rate and its schedule, batch, clipping, precision.
void validate_training(const TrainConfig& c, const std::map<std::string, std::string>& o) {
  check(c.lr > 0 && c.lr < 1, o, "lr", "in (0, 1)", text_of(c.lr));
  // AdamW scales every weight by 1 − lr · weight_decay a step: at 1 or more it zeroes or flips
  // them.
  check(c.weight_decay >= 0, o, "weight_decay", ">= 0", text_of(c.weight_decay));
  check_against(c.lr * c.weight_decay < 1, o, "weight_decay", "lr · weight_decay < 1",
                text_of(c.weight_decay) + " with lr " + text_of(c.lr), "lr", text_of(c.lr));
  check(c.warmup_steps >= 0, o, "warmup_steps", ">= 0", text_of(c.warmup_steps));
  check(c.max_steps >= 1, o, "max_steps", ">= 1", text_of(c.max_steps));
  check(c.batch_size >= 1 && c.batch_size <= kMaxCount, o, "batch_size", count_range(),
        text_of(c.batch_size));
  check(std::isfinite(c.grad_clip) && c.grad_clip >= 0, o, "grad_clip",
        "a finite number >= 0 (0 = off)", text_of(c.grad_clip));
  check(c.matmul_precision == "fp32" || c.matmul_precision == "tf32", o, "matmul_precision",
        "fp32 or tf32", "'" + c.matmul_precision + "'");
}

// The run around it: conditioning, evaluations, cadences, seed, device.
void validate_run(const TrainConfig& c, const std::map<std::string, std::string>& o) {
  check(std::isfinite(c.return_scale) && c.return_scale > 0, o, "return_scale",
        "a finite number > 0", text_of(c.return_scale));
  // The policy conditions on it in float, divided by the return scale (infer/policy.h).
  check(std::isfinite(static_cast<float>(c.target_return / c.return_scale)), o, "target_return",
        "a finite number (within float's range once divided by return_scale)",
        text_of(c.target_return));
  check(c.eval_every >= 0, o, "eval_every", ">= 0", text_of(c.eval_every));
  check(c.eval_episodes >= 1 && c.eval_episodes <= kMaxEvalEpisodes, o, "eval_episodes",
        "from 1 to " + std::to_string(kMaxEvalEpisodes), text_of(c.eval_episodes));
  check(c.checkpoint_every >= 1, o, "checkpoint_every", ">= 1", text_of(c.checkpoint_every));
  check(c.log_every >= 1, o, "log_every", ">= 1", text_of(c.log_every));
  check(c.seed >= 0 && c.seed <= kMaxSeed, o, "seed", "from 0 to " + std::to_string(kMaxSeed),
        text_of(c.seed));
  const bool cuda_n = c.device.rfind("cuda:", 0) == 0 && c.device.size() > 5 &&
                      c.device.size() <= 8 &&
                      c.device.find_first_not_of("0123456789", 5) == std::string::npos;
  check(c.device == "auto" || c.device == "cpu" || c.device == "cuda" || cuda_n, o, "device",
        "auto, cpu, cuda or cuda:N", "'" + c.device + "'");
}

void validate(const TrainConfig& c, std::map<std::string, std::string> o,
              const std::string& where) {
  o[""] = where;
  validate_model(c, o);
  validate_training(c, o);
  validate_run(c, o);
}

bool is_key_value(const std::string& text) {
  const auto eq = text.find('=');
  return eq != std::string::npos && eq > 0;
}

// The value of a "key=value" override, read as YAML (as a string where it is no YAML).
YAML::Node override_value(const std::string& key_value) {
  const std::string text = key_value.substr(key_value.find('=') + 1);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception&) {
    value = YAML::Node(text);
  }
  return value.IsNull() ? YAML::Node(std::string()) : value;
}

}  // namespace

std::string override_key(const std::string& key_value) {
  return key_value.substr(0, key_value.find('='));
}

RepeatedOverride repeated_override(const std::vector<std::string>& overrides) {
  for (size_t i = 0; i < overrides.size(); ++i) {
    if (overrides[i].find('=') == std::string::npos) continue;  // refused as no key=value
    for (size_t j = 0; j < i; ++j) {
      if (override_key(overrides[j]) == override_key(overrides[i]))
        return {override_key(overrides[i]), overrides[j], overrides[i]};
    }
  }
  return {};
}

std::string override_of(const std::vector<std::string>& overrides, const std::string& key) {
  std::string entry;
  for (const std::string& o : overrides)
    if (override_key(o) == key) entry = o;
  return entry;
}

std::string why_not_override(const std::string& key_value) {
  if (!is_key_value(key_value)) return "expected key=value";
  TrainConfig c;
  return why_not_set(c, override_key(key_value), override_value(key_value));
}

TrainConfig parse_config(const std::string& text, const std::string& where,
                         const std::string& base_dir, const std::vector<std::string>& overrides) {
  TrainConfig c;
  std::map<std::string, std::string> origin;
  apply_file(c, io::parse_yaml(text, where), where, base_dir, origin, 0);
  for (const auto& kv : overrides) {
    if (!is_key_value(kv)) throw std::invalid_argument("--set '" + kv + "': expected key=value");
    set_key(c, override_key(kv), override_value(kv), kOverrideOrigin, origin);
  }
  validate(c, origin, where);
  return c;
}

TrainConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_config(io::read_input_file(path, "config file"), path,
                      fs::path(path).parent_path().string(), overrides);
}

std::vector<std::pair<std::string, std::string>> config_entries(const TrainConfig& c) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& f : fields()) entries.emplace_back(f.name, f.get(c));
  return entries;
}

std::string to_yaml(const TrainConfig& c) {
  std::string out;
  for (const auto& [key, value] : config_entries(c)) out += key + ": " + value + "\n";
  return out;
}

std::string config_differences(const TrainConfig& from, const TrainConfig& to) {
  std::string out;
  for (const auto& f : fields()) {
    // Where a run computes, not what: a run may resume, or a sweep go on, on another device (a
    // checkpoint loads onto any), and `auto` is recorded as the device it chose.
    if (f.name == "device") continue;
    const std::string a = f.get(from), b = f.get(to);
    if (a != b) out += (out.empty() ? "" : "; ") + f.name + ": " + a + " -> " + b;
  }
  return out;
}

std::string trained_config_differences(const TrainConfig& trained, const TrainConfig& asked) {
  TrainConfig budget_aside = trained;
  budget_aside.max_steps = asked.max_steps;
  return config_differences(budget_aside, asked);
}

std::vector<std::string> config_keys() {
  std::vector<std::string> keys;
  for (const auto& f : fields()) keys.push_back(f.name);
  return keys;
}

}  // namespace minrnn::rl
