// The `slurm:` section of a sweep file, parsed strictly (sweep/slurm.h).
#include <yaml-cpp/yaml.h>

#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/name_list.h"
#include "io/yaml_keys.h"
#include "sweep/slurm.h"

namespace minrnn::sweep {
namespace {

[[noreturn]] void bad_slurm_key(const std::string& file, const std::string& key,
                                const std::string& what) {
  throw std::invalid_argument(file + ": key 'slurm." + key + "': " + what);
}

std::string scalar(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) bad_slurm_key(file, key, "expected a string");
  return n.Scalar();
}

// A string matching `pattern` (whole), else an error saying what was expected.
std::string matching(const YAML::Node& n, const std::string& file, const std::string& key,
                     const char* pattern, const std::string& expected) {
  const std::string v = scalar(n, file, key);
  // No Slurm name or size is this long, and libstdc++'s std::regex recurses once per character:
  // a value of ~30 000 would overflow the stack.
  constexpr size_t kMaxLength = 256;
  if (v.size() > kMaxLength) {
    bad_slurm_key(file, key,
                  "expected " + expected + ", got " + std::to_string(v.size()) +
                      " characters (at most " + std::to_string(kMaxLength) + ")");
  }
  if (!std::regex_match(v, std::regex(pattern)))
    bad_slurm_key(file, key, "expected " + expected + ", got '" + v + "'");
  return v;
}

int integer(const YAML::Node& n, const std::string& file, const std::string& key, int lo, int hi) {
  if (!n.IsScalar()) bad_slurm_key(file, key, "expected an integer");
  int64_t v = 0;
  try {
    v = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    bad_slurm_key(file, key, "expected an integer, got '" + n.Scalar() + "'");
  }
  if (v < lo || v > hi)
    bad_slurm_key(file, key,
                  std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return int(v);
}

std::vector<std::string> lines(const YAML::Node& n, const std::string& file,
                               const std::string& key) {
  if (!n.IsSequence()) bad_slurm_key(file, key, "expected a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) {
    const std::string v = scalar(item, file, key);
    if (v.find_first_of("\n\r") != std::string::npos) bad_slurm_key(file, key, "one line per item");
    out.push_back(v);
  }
  return out;
}

// sbatch options the batch script sets itself: another value would break the bookkeeping.
const std::set<std::string>& reserved_options() {
  static const std::set<std::string> names = {
      "-a",          "--array",   "-o",           "--output",  "-e",         "--error",
      "--open-mode", "--requeue", "--no-requeue", "--signal",  "--parsable", "--wrap",
      "-D",          "--chdir",   "-J",           "--job-name"};
  return names;
}

}  // namespace

SlurmSpec parse_slurm_spec(const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) throw std::invalid_argument(file + ": key 'slurm': expected a mapping");
  if (const std::string twice = io::repeated_key(node); !twice.empty())
    throw std::invalid_argument(file + ": key 'slurm': " + twice);
  SlurmSpec s;
  const char* name = "^[A-Za-z0-9_.+-]+$";
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "partition") {
      s.partition = matching(v, file, key, "^[A-Za-z0-9_.+-]+(,[A-Za-z0-9_.+-]+)*$",
                             "a partition name (or a comma-separated list)");
    } else if (key == "time") {
      s.time = matching(v, file, key,
                        "^([0-9]+(:[0-9]{1,2}){0,2}|[0-9]+-[0-9]{1,2}(:[0-9]{1,2}){0,2}|"
                        "UNLIMITED|INFINITE)$",
                        "a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                        "D-HH:MM:SS");
    } else if (key == "mem") {
      s.mem = matching(v, file, key, "^[0-9]+[KMGT]?$", "a size such as 16G or 4000M");
    } else if (key == "gres") {
      s.gres = matching(v, file, key,
                        "^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*)*$",
                        "a generic resource such as gpu:1 or gpu:a100:2");
    } else if (key == "account") {
      s.account = matching(v, file, key, name, "an account name");
    } else if (key == "qos") {
      s.qos = matching(v, file, key, name, "a QoS name");
    } else if (key == "cpus_per_task") {
      s.cpus_per_task = integer(v, file, key, 1, 4096);
    } else if (key == "gpus") {
      s.gpus = integer(v, file, key, 0, 64);
    } else if (key == "array_throttle") {
      s.array_throttle = integer(v, file, key, 1, 1000000);
    } else if (key == "signal_before") {
      s.signal_before = integer(v, file, key, 1, 65535);
    } else if (key == "setup") {
      s.setup = lines(v, file, key);
    } else if (key == "sbatch_args") {
      s.sbatch_args = lines(v, file, key);
      for (const auto& a : s.sbatch_args) {
        if (a.empty() || a[0] != '-')
          bad_slurm_key(file, key, "'" + a + "' is not an sbatch option");
        const std::string option = a.substr(0, a.find('='));
        if (reserved_options().count(option))
          bad_slurm_key(file, key, "'" + option + "' is set by minrnn sweep itself");
      }
    } else {
      const std::vector<std::string> known = {
          "partition", "time", "cpus_per_task",  "mem",           "gpus",  "gres",
          "account",   "qos",  "array_throttle", "signal_before", "setup", "sbatch_args"};
      bad_slurm_key(file, key, "unknown key" + io::known_names_hint(key, known));
    }
  }
  if (s.gpus > 0 && !s.gres.empty())
    bad_slurm_key(file, "gpus", "give either gpus or gres, not both");
  return s;
}

}  // namespace minrnn::sweep
