// Reading a sweep file strictly (sweep/sweep.h): every key known, every value of its type, an
// unknown key or backbone offered the name a typo meant.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/input_file.h"
#include "io/name_list.h"
#include "io/yaml_keys.h"
#include "rl/config.h"
#include "rl/decision_model.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {

namespace fs = std::filesystem;

namespace {

// `pack`: auto (0) or a number of runs, 1 to kSweepCountMax.
int pack_size(const YAML::Node& n, const std::string& file) {
  if (n.IsScalar() && n.Scalar() == "auto") return 0;
  const std::string got = n.IsScalar() ? n.Scalar() : "";
  int64_t size = 0;
  try {
    size = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    io::bad_key(file, "pack", "expected auto or a positive integer, got '" + got + "'");
  }
  if (size < 1 || size > kSweepCountMax)
    io::bad_key(file, "pack",
                "expected auto or 1 to " + std::to_string(kSweepCountMax) + ", got '" + got + "'");
  return int(size);
}

// A training config given to `minrnn sweep` (none of a sweep's own keys, some of a config's):
// said so, where its first key would be refused as unknown (a `dataset` meant as `datasets` in a
// sweep file is not, and gets its "did you mean").
void refuse_a_training_config(const YAML::Node& root, const std::string& file) {
  if (root["datasets"] || root["backbones"] || root["seeds"]) return;
  std::vector<std::string> found;
  if (root["defaults"]) found.push_back("defaults");
  for (const auto& entry : rl::config_entries(rl::TrainConfig{}))
    if (root[entry.first]) found.push_back(entry.first);
  if (found.empty()) return;
  throw std::invalid_argument(file + ": a training config's keys (" + io::comma_separated(found) +
                              "), none of a sweep file's: train it with `minrnn train " + file +
                              "`; a sweep file lists datasets, backbones and seeds "
                              "(configs/sweeps/*.yaml)");
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}
std::string quoted(int64_t n) {
  return std::to_string(n);
}

// Each entry of datasets, backbones and seeds names a part of a run directory's path: an entry
// given twice would plan two runs into one directory.
template <typename T>
void refuse_repeats(const std::vector<T>& entries, const std::string& file,
                    const std::string& key) {
  for (size_t i = 0; i < entries.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (entries[j] == entries[i]) io::bad_key(file, key, quoted(entries[i]) + " is given twice");
  }
}

// A dataset label is a folder of the sweep's `out` (<out>/<label>/<backbone>/seed<S>): one plain
// name, so that no run lands outside `out` or in another label's folder, nor in the folders the
// report (plots/) and a Slurm submission (slurm/) keep there.
constexpr size_t kMaxLabelLength = 100;
void check_label(const std::string& label, const std::string& file) {
  if (label.empty() || label == "." || label == ".." || label.find('/') != std::string::npos) {
    io::bad_key(file, "datasets",
                "expected plain names (a folder of `out` each: no '/', not '.' or '..'), got '" +
                    label + "'");
  }
  // Its report's files are named after it (plots/<label>-<backbone>-loss.svg) and its rows lines
  // of table3.md: a 240-character label trained, then failed the report half-written (a walk,
  // 2026-11-29); a newline split the table's row.
  if (label.size() > kMaxLabelLength) {
    io::bad_key(file, "datasets",
                "'" + label + "' is " + std::to_string(label.size()) +
                    " characters; a label names files of the report, and may have at most " +
                    std::to_string(kMaxLabelLength));
  }
  const auto control = std::find_if(label.begin(), label.end(),
                                    [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  if (control != label.end()) {
    io::bad_key(file, "datasets",
                "expected names of printable characters, got one with a control character (a "
                "newline, a tab) at character " +
                    std::to_string(control - label.begin() + 1));
  }
  if (label == "plots" || label == "slurm") {
    io::bad_key(file, "datasets",
                "'" + label + "' is the name of a folder the sweep's `out` keeps for its " +
                    (label == "plots" ? "report's curves" : "Slurm files") +
                    ": name the dataset otherwise");
  }
}

std::vector<std::string> string_list(const YAML::Node& n, const std::string& file,
                                     const std::string& key) {
  if (!n.IsSequence() || n.size() == 0)
    io::bad_key(file, key, "expected a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(io::scalar_string(item, file, key));
  return out;
}

std::vector<std::string> dataset_labels(const YAML::Node& v, const std::string& file) {
  std::vector<std::string> labels = string_list(v, file, "datasets");
  for (const std::string& label : labels) check_label(label, file);
  refuse_repeats(labels, file, "datasets");
  return labels;
}

std::vector<std::string> backbone_list(const YAML::Node& v, const std::string& file) {
  std::vector<std::string> names = string_list(v, file, "backbones");
  for (const std::string& b : names) {
    if (const std::string error = rl::unknown_backbone(b); !error.empty())
      io::bad_key(file, "backbones", error);
  }
  refuse_repeats(names, file, "backbones");
  return names;
}

std::vector<int64_t> seed_list(const YAML::Node& v, const std::string& file) {
  if (!v.IsSequence() || v.size() == 0)
    io::bad_key(file, "seeds", "expected a non-empty list of integers");
  std::vector<int64_t> seeds;
  for (const auto& item : v) {
    seeds.push_back(io::scalar_int(item, file, "seeds"));
    if (seeds.back() < 0 || seeds.back() > rl::kMaxSeed)
      io::bad_key(
          file, "seeds",
          "expected seeds from 0 to " + std::to_string(rl::kMaxSeed) + ", got " + item.Scalar());
  }
  refuse_repeats(seeds, file, "seeds");
  return seeds;
}

// `set`: key=value overrides of the config, each key once.
std::vector<std::string> override_list(const YAML::Node& v, const std::string& file) {
  std::vector<std::string> sets = string_list(v, file, "set");
  if (const rl::RepeatedOverride twice = rl::repeated_override(sets); !twice.key.empty()) {
    io::bad_key(file, "set",
                twice.key + " given twice ('" + twice.first + "', '" + twice.second + "')");
  }
  return sets;
}

// parallel, eval_episodes (1 up) and threads (0: as many as the machine has), to kSweepCountMax.
int count_key(const YAML::Node& v, const std::string& file, const std::string& key) {
  const int64_t n = io::scalar_int(v, file, key);
  const int lowest = key == "threads" ? 0 : 1;
  if (n < lowest || n > kSweepCountMax) {
    io::bad_key(file, key,
                "expected " + std::to_string(lowest) + " to " + std::to_string(kSweepCountMax) +
                    ", got " + std::to_string(n));
  }
  return int(n);
}

// One top-level key of a sweep file into `s`; an unknown key refused with the name it meant.
void read_sweep_key(const std::string& key, const YAML::Node& v, const std::string& file,
                    SweepSpec& s) {
  if (key == "datasets") {
    s.datasets = dataset_labels(v, file);
  } else if (key == "backbones") {
    s.backbones = backbone_list(v, file);
  } else if (key == "seeds") {
    s.seeds = seed_list(v, file);
  } else if (key == "config") {
    s.config_template = io::scalar_string(v, file, key);
  } else if (key == "set") {
    s.sets = override_list(v, file);
  } else if (key == "out") {
    s.out = io::scalar_string(v, file, key);
    if (s.out.empty()) io::bad_key(file, key, "expected a directory, got ''");
  } else if (key == "pack") {
    s.pack = pack_size(v, file);
  } else if (key == "parallel" || key == "threads" || key == "eval_episodes") {
    (key == "parallel"  ? s.parallel
     : key == "threads" ? s.threads
                        : s.eval_episodes) = count_key(v, file, key);
  } else if (key == "slurm") {
    s.slurm = parse_slurm_spec(v, file);
  } else {
    const std::vector<std::string> known = {"datasets", "backbones",     "seeds",    "config",
                                            "set",      "out",           "parallel", "pack",
                                            "threads",  "eval_episodes", "slurm"};
    io::bad_key(file, key, "unknown key" + io::known_names_hint(key, known));
  }
}

}  // namespace

std::string fill_cell(std::string text, const std::string& dataset, const std::string& backbone) {
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"{dataset}", dataset}, {"{backbone}", backbone}}) {
    for (size_t at = text.find(name); at != std::string::npos;
         at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  }
  return text;
}

std::string why_not_sweep_set(const std::string& key_value, const SweepSpec& spec) {
  // A misspelt placeholder ({datset}) would reach every run as text: a path no run finds.
  const std::string left = fill_cell(key_value, "", "");
  for (size_t open = left.find('{'); open != std::string::npos; open = left.find('{', open + 1)) {
    const size_t close = left.find('}', open);
    if (close == std::string::npos) break;
    if (close > open + 1 && std::all_of(left.begin() + open + 1, left.begin() + close, [](char c) {
          return std::islower(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return "unknown placeholder " + left.substr(open, close - open + 1) +
             " (a sweep fills in {dataset} and {backbone})";
    }
  }
  if (left == key_value) return rl::why_not_override(key_value);  // the same in every cell
  for (const std::string& dataset : spec.datasets) {
    for (const std::string& backbone : spec.backbones) {
      const std::string filled = fill_cell(key_value, dataset, backbone);
      if (const std::string why = rl::why_not_override(filled); !why.empty())
        return why + " (filled in for " + dataset + ", " + backbone + ")";
    }
  }
  return "";
}

SweepSpec parse_sweep(const std::string& text, const std::string& file) {
  const YAML::Node root = io::parse_yaml(text, file);
  io::check_mapping(root, file, "a mapping of sweep keys");
  refuse_a_training_config(root, file);
  SweepSpec s;
  s.file = file;
  s.out = "runs/sweeps/" + fs::path(file).stem().string();
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      throw std::invalid_argument(file + ": a key must be a name, not a list or map");
    }
    read_sweep_key(kv.first.Scalar(), kv.second, file, s);
  }
  for (const char* required : {"datasets", "backbones", "seeds"})
    if (!root[required]) io::bad_key(file, required, "missing");
  for (const std::string& set : s.sets)
    if (const std::string why = why_not_sweep_set(set, s); !why.empty())
      io::bad_key(file, "set", "'" + set + "': " + why);
  return s;
}

SweepSpec load_sweep(const std::string& path) {
  return parse_sweep(io::read_input_file(path, "sweep file"), path);
}

}  // namespace minrnn::sweep
