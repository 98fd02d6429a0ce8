// Reading a sweep file strictly (sweep/sweep.h): every key known, every value of its type, an
// unknown key or backbone offered the name a typo meant.
#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "io/input_file.h"
#include "io/name_list.h"
#include "rl/decision_model.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {
namespace {

[[noreturn]] void bad(const std::string& file, const std::string& key, const std::string& what) {
  throw std::invalid_argument(file + ": key '" + key + "': " + what);
}

std::string scalar_string(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) bad(file, key, "expected a string");
  return n.as<std::string>();
}

int64_t scalar_int(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) bad(file, key, "expected an integer");
  try {
    return n.as<int64_t>();
  } catch (const YAML::Exception&) {
    bad(file, key, "expected an integer, got '" + n.Scalar() + "'");
  }
}

// `pack`: auto (0) or a number of runs, 1 to 4096.
int pack_size(const YAML::Node& n, const std::string& file) {
  if (n.IsScalar() && n.Scalar() == "auto") return 0;
  const std::string got = n.IsScalar() ? n.Scalar() : "";
  int64_t size = 0;
  try {
    size = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    bad(file, "pack", "expected auto or a positive integer, got '" + got + "'");
  }
  if (size < 1 || size > 4096) bad(file, "pack", "expected auto or 1 to 4096, got '" + got + "'");
  return int(size);
}

std::vector<std::string> string_list(const YAML::Node& n, const std::string& file,
                                     const std::string& key) {
  if (!n.IsSequence() || n.size() == 0) bad(file, key, "expected a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(scalar_string(item, file, key));
  return out;
}

}  // namespace

SweepSpec parse_sweep(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(file + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) throw std::invalid_argument(file + ": expected a mapping of sweep keys");
  SweepSpec s;
  s.file = file;
  s.out = "runs/sweeps/" + fs::path(file).stem().string();
  bool has_datasets = false, has_backbones = false, has_seeds = false;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      throw std::invalid_argument(file + ": a key must be a name, not a list or map");
    }
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "datasets") {
      s.datasets = string_list(v, file, key), has_datasets = true;
    } else if (key == "backbones") {
      s.backbones = string_list(v, file, key), has_backbones = true;
      for (const std::string& b : s.backbones) {
        if (const std::string error = rl::unknown_backbone(b); !error.empty())
          bad(file, key, error);
      }
    } else if (key == "seeds") {
      if (!v.IsSequence() || v.size() == 0) bad(file, key, "expected a non-empty list of integers");
      for (const auto& item : v) s.seeds.push_back(scalar_int(item, file, key));
      has_seeds = true;
    } else if (key == "config") {
      s.config_template = scalar_string(v, file, key);
    } else if (key == "set") {
      s.sets = string_list(v, file, key);
      for (const auto& kv_text : s.sets)
        if (kv_text.find('=') == std::string::npos)
          bad(file, key, "'" + kv_text + "' is not key=value");
    } else if (key == "out") {
      s.out = scalar_string(v, file, key);
    } else if (key == "pack") {
      s.pack = pack_size(v, file);
    } else if (key == "parallel" || key == "threads" || key == "eval_episodes") {
      const int64_t n = scalar_int(v, file, key);
      if (n < (key == "threads" ? 0 : 1) || n > 4096) bad(file, key, "out of range");
      (key == "parallel" ? s.parallel : key == "threads" ? s.threads : s.eval_episodes) = int(n);
    } else if (key == "slurm") {
      s.slurm = parse_slurm_spec(v, file);
    } else {
      const std::vector<std::string> known = {"datasets", "backbones",     "seeds",    "config",
                                              "set",      "out",           "parallel", "pack",
                                              "threads",  "eval_episodes", "slurm"};
      bad(file, key, "unknown key" + io::known_names_hint(key, known));
    }
  }
  if (!has_datasets) bad(file, "datasets", "missing");
  if (!has_backbones) bad(file, "backbones", "missing");
  if (!has_seeds) bad(file, "seeds", "missing");
  return s;
}

SweepSpec load_sweep(const std::string& path) {
  return parse_sweep(io::read_input_file(path, "sweep file"), path);
}

}  // namespace minrnn::sweep
