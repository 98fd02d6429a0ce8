// The `slurm:` section of a sweep file, parsed strictly (sweep/slurm.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/name_list.h"
#include "io/yaml_keys.h"
#include "sweep/slurm.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

// The slurm: section's keys are named as a user finds them in the file: slurm.<key>.
[[noreturn]] void bad_slurm_key(const std::string& file, const std::string& key,
                                const std::string& what) {
  io::bad_key(file, "slurm." + key, what);
}

std::string scalar(const YAML::Node& n, const std::string& file, const std::string& key) {
  return io::scalar_string(n, file, "slurm." + key);
}

// The forms sbatch takes, checked by hand (libstdc++'s std::regex recursed once per character: a
// value of ~30 000 overflowed the stack).
using Form = bool (*)(const std::string&);

// `s` split at every `sep`, empty parts kept.
std::vector<std::string> parts_of(const std::string& s, char sep) {
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t end = s.find(sep, at);
    parts.push_back(s.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return parts;
    at = end + 1;
  }
}

// Not empty, at most `most` characters, each a letter or digit or one of `extra`.
bool word(const std::string& s, const char* extra, size_t most = std::string::npos) {
  return !s.empty() && s.size() <= most && std::all_of(s.begin(), s.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           (c != '\0' && std::strchr(extra, c) != nullptr);
  });
}
bool digits(const std::string& s, size_t most = std::string::npos) {
  return word(s, "", most) &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool name(const std::string& s) {
  return word(s, "_.+-");
}
bool name_list(const std::string& s) {  // a,b,c
  const auto names = parts_of(s, ',');
  return std::all_of(names.begin(), names.end(), name);
}
bool size(const std::string& s) {  // 16G, 4000M, 2048
  const bool unit = !s.empty() && s.back() != '\0' && std::strchr("KMGT", s.back()) != nullptr;
  return digits(unit ? s.substr(0, s.size() - 1) : s);
}
bool gres(const std::string& s) {  // gpu:1, gpu:a100:2,shard:4
  for (const std::string& item : parts_of(s, ',')) {
    const auto fields = parts_of(item, ':');
    if (!word(fields[0], "_")) return false;
    for (size_t i = 1; i < fields.size(); ++i)
      if (!word(fields[i], "_.-")) return false;
  }
  return true;
}
// minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED, INFINITE.
bool time_limit(const std::string& t) {
  if (t == "UNLIMITED" || t == "INFINITE") return true;
  const size_t dash = t.find('-');
  // Days and leading minutes up to 9 digits (years beyond any cluster's limit): stoll holds them.
  if (dash != std::string::npos && !digits(t.substr(0, dash), 9)) return false;
  const auto fields = parts_of(dash == std::string::npos ? t : t.substr(dash + 1), ':');
  if (fields.size() > 3) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    const bool leading_minutes = i == 0 && dash == std::string::npos;
    if (!digits(fields[i], leading_minutes ? 9 : 2)) return false;
  }
  return true;
}

// A string of the form `form`, else an error saying what was expected.
std::string of_form(const YAML::Node& n, const std::string& file, const std::string& key, Form form,
                    const std::string& expected) {
  const std::string v = scalar(n, file, key);
  if (!form(v)) bad_slurm_key(file, key, "expected " + expected + ", got '" + v + "'");
  return v;
}

int integer(const YAML::Node& n, const std::string& file, const std::string& key, int lo, int hi) {
  const int64_t v = io::scalar_int(n, file, "slurm." + key);
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

// A slurm.time value in seconds (-1 for UNLIMITED): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
// D-HH:MM:SS, as sbatch reads them (time_limit above has checked the form).
int64_t time_limit_seconds(const std::string& t) {
  if (t == "UNLIMITED" || t == "INFINITE") return -1;  // so is 0 (below)
  const size_t dash = t.find('-');
  const int64_t days = dash == std::string::npos ? 0 : std::stoll(t.substr(0, dash));
  std::vector<int64_t> parts;
  for (const std::string& p : parts_of(dash == std::string::npos ? t : t.substr(dash + 1), ':'))
    parts.push_back(std::stoll(p));
  int64_t seconds = 0;
  if (dash != std::string::npos) {  // D-HH[:MM[:SS]]
    const int64_t unit[] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * unit[i];
  } else if (parts.size() == 3) {  // HH:MM:SS
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {  // minutes, MM:SS
    seconds = parts[0] * 60 + (parts.size() == 2 ? parts[1] : 0);
  }
  const int64_t total = days * 86400 + seconds;
  return total == 0 ? -1 : total;
}

}  // namespace

SlurmSpec parse_slurm_spec(const YAML::Node& node, const std::string& file) {
  io::check_mapping(node, file + ": key 'slurm'", "a mapping");
  SlurmSpec s;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "partition") {
      s.partition =
          of_form(v, file, key, name_list, "a partition name (or a comma-separated list)");
    } else if (key == "time") {
      s.time = of_form(v, file, key, time_limit,
                       "a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                       "D-HH:MM:SS");
    } else if (key == "mem") {
      s.mem = of_form(v, file, key, size, "a size such as 16G or 4000M");
    } else if (key == "gres") {
      s.gres = of_form(v, file, key, gres, "a generic resource such as gpu:1 or gpu:a100:2");
    } else if (key == "account") {
      s.account = of_form(v, file, key, name, "an account name");
    } else if (key == "qos") {
      s.qos = of_form(v, file, key, name, "a QoS name");
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
      for (const auto& a : s.sbatch_args)
        if (const std::string problem = sbatch_arg_problem(a); !problem.empty())
          bad_slurm_key(file, key, problem);
    } else {
      const std::vector<std::string> known = {
          "partition", "time", "cpus_per_task",  "mem",           "gpus",  "gres",
          "account",   "qos",  "array_throttle", "signal_before", "setup", "sbatch_args"};
      bad_slurm_key(file, key, "unknown key" + io::known_names_hint(key, known));
    }
  }
  if (s.gpus > 0 && !s.gres.empty())
    bad_slurm_key(file, "gpus", "give either gpus or gres, not both");
  // The warning must come after the task starts, or the task is signalled at once and requeues
  // itself in a loop.
  if (const int64_t limit = s.time.empty() ? -1 : time_limit_seconds(s.time);
      limit >= 0 && s.signal_before >= limit) {
    bad_slurm_key(file, "signal_before",
                  std::to_string(s.signal_before) + " seconds" +
                      (node["signal_before"] ? "" : " (the default)") +
                      " is not less than slurm.time '" + s.time + "' (" + std::to_string(limit) +
                      " seconds): expected slurm.signal_before below slurm.time");
  }
  return s;
}

}  // namespace minrnn::sweep
