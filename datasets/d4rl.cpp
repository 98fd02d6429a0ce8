// D4RL reading and validation; the writer lives in d4rl_write.cpp.
#include "datasets/d4rl.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "datasets/catalog.h"
#include "datasets/env_table.h"
#include "datasets/hdf5_util.h"
#include "datasets/read_isolated.h"
#include "io/input_file.h"
#include "io/name_list.h"

namespace minrnn::data {
namespace {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void check_finite(const std::vector<float>& values, int64_t width, const std::string& what,
                  const std::string& key) {
  const int64_t i = first_non_finite(values);
  if (i >= 0) {
    throw std::invalid_argument(what + ": '" + key + "' has a non-finite value (" +
                                std::to_string(values[i]) + ") at row " +
                                std::to_string(i / width));
  }
}

void check_size(size_t actual, int64_t expected, const std::string& what, const std::string& key) {
  if (static_cast<int64_t>(actual) != expected) {
    throw std::invalid_argument(what + ": '" + key + "' has " + std::to_string(actual) +
                                " values, expected " + std::to_string(expected));
  }
}

void check_flags(const std::vector<uint8_t>& flags, const std::string& what,
                 const std::string& key) {
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] > 1) {
      throw std::invalid_argument(what + ": '" + key + "' row " + std::to_string(i) + " is " +
                                  std::to_string(flags[i]) + ", expected 0/1");
    }
  }
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Observation and action widths past this are a corrupt header, not an environment.
constexpr int64_t kMaxWidth = 1 << 20;

// Checks the shape of a per-step key: (N, width) for rank 2, or (N,) / (N, 1) when width is 1.
int64_t expect_rows(const h5::DatasetInfo& info, const std::string& path, const std::string& key,
                    int64_t num_rows, bool matrix) {
  const auto& s = info.shape;
  bool ok = matrix ? s.size() == 2 : (s.size() == 1 || (s.size() == 2 && s[1] == 1));
  if (!ok) {
    throw std::invalid_argument(path + ": '" + key + "' has shape " + shape_str(s) + ", expected " +
                                (matrix ? "(N, dim)" : "(N,) or (N, 1)"));
  }
  if (num_rows >= 0 && s[0] != num_rows) {
    throw std::invalid_argument(path + ": '" + key + "' has " + std::to_string(s[0]) +
                                " rows but 'observations' has " + std::to_string(num_rows));
  }
  const int64_t width = s.size() == 2 ? s[1] : 1;
  if (width > kMaxWidth) {
    throw std::invalid_argument(path + ": '" + key + "' has " + std::to_string(width) +
                                " columns, more than any environment's " +
                                std::to_string(kMaxWidth) + " (corrupt file?)");
  }
  return width;
}

void read_infos(hid_t file, const std::string& group, const std::string& path, int64_t num_rows,
                std::map<std::string, FloatArray>& infos) {
  for (const std::string& name : h5::list_group(file, group, path)) {
    std::string key = group + "/" + name;
    if (h5::is_group(file, key)) {
      read_infos(file, key, path, num_rows, infos);
      continue;
    }
    h5::DatasetInfo info = h5::describe(file, key, path);
    if (info.shape.empty() || info.shape[0] != num_rows) {
      throw std::invalid_argument(path + ": '" + key + "' has shape " + shape_str(info.shape) +
                                  ", expected " + std::to_string(num_rows) + " rows");
    }
    FloatArray& array = infos[key.substr(std::string("infos/").size())];
    array.shape = info.shape;
    array.values.resize(product(info.shape));
    h5::read_float_rows(file, key, 0, num_rows, array.values.data(), path);
  }
}

void read_metadata(hid_t file, const std::string& group, const std::string& path,
                   D4rlMetadata& meta) {
  for (const std::string& name : h5::list_group(file, group, path)) {
    std::string key = group + "/" + name;
    std::string rel = key.substr(std::string("metadata/").size());
    if (h5::is_group(file, key)) {
      read_metadata(file, key, path, meta);
      continue;
    }
    h5::DatasetInfo info = h5::describe(file, key, path);
    if (info.type_class == H5T_STRING && product(info.shape) == 1) {
      meta.strings[rel] = h5::read_string(file, key, path);
    } else if (info.type_class == H5T_INTEGER && product(info.shape) == 1) {
      meta.ints[rel] = h5::read_int(file, key, path);
    } else if (info.type_class == H5T_FLOAT) {
      meta.arrays[rel] = FloatArray{info.shape, h5::read_floats(file, key, path)};
    } else {
      meta.unread.push_back(rel);
    }
  }
}

}  // namespace

void Transitions::append_step(const float* obs, const float* action, float reward,
                              const float* next_obs, bool terminal, bool timeout) {
  observations.insert(observations.end(), obs, obs + obs_dim);
  if (next_obs != nullptr)
    next_observations.insert(next_observations.end(), next_obs, next_obs + obs_dim);
  actions.insert(actions.end(), action, action + act_dim);
  rewards.push_back(reward);
  terminals.push_back(terminal ? 1 : 0);
  timeouts.push_back(timeout ? 1 : 0);
}

int64_t first_non_finite(const std::vector<float>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return static_cast<int64_t>(i);
  return -1;
}

void Transitions::validate(const std::string& what) const {
  if (obs_dim <= 0 || act_dim <= 0) {
    throw std::invalid_argument(what + ": obs_dim and act_dim must be positive (got " +
                                std::to_string(obs_dim) + ", " + std::to_string(act_dim) + ")");
  }
  int64_t n = num_steps();
  if (n == 0) throw std::invalid_argument(what + ": empty dataset (0 steps)");
  check_size(observations.size(), n * obs_dim, what, "observations");
  if (!next_observations.empty())
    check_size(next_observations.size(), n * obs_dim, what, "next_observations");
  check_size(actions.size(), n * act_dim, what, "actions");
  check_size(terminals.size(), n, what, "terminals");
  check_size(timeouts.size(), n, what, "timeouts");
  check_flags(terminals, what, "terminals");
  check_flags(timeouts, what, "timeouts");
  check_finite(observations, obs_dim, what, "observations");
  check_finite(next_observations, obs_dim, what, "next_observations");
  check_finite(actions, act_dim, what, "actions");
  check_finite(rewards, 1, what, "rewards");
  for (const auto& [name, array] : infos) {
    if (array.shape.empty() || array.shape[0] != n) {
      throw std::invalid_argument(what + ": 'infos/" + name + "' must have " + std::to_string(n) +
                                  " rows, has shape " + shape_str(array.shape));
    }
    check_size(array.values.size(), product(array.shape), what, "infos/" + name);
  }
  for (const auto& [name, array] : metadata.arrays) {
    check_size(array.values.size(), product(array.shape), what, "metadata/" + name);
  }
}

namespace {

// FNV-1a over 8-byte words (the tail bytes one by one): not a cryptographic hash, a quick one —
// ~0.1 s for a million hopper steps.
class Fnv64 {
 public:
  void add(const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      mix(word);
    }
    for (; i < bytes; ++i) mix(p[i]);
  }
  template <typename T>
  void add(const std::vector<T>& v) {
    add_count(v.size());
    add(v.data(), v.size() * sizeof(T));
  }
  void add_count(uint64_t n) { mix(n); }
  uint64_t value() const { return h_; }

 private:
  void mix(uint64_t word) { h_ = (h_ ^ word) * 0x100000001b3ull; }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::string Transitions::fingerprint() const {
  Fnv64 h;
  h.add_count(static_cast<uint64_t>(obs_dim));
  h.add_count(static_cast<uint64_t>(act_dim));
  h.add(observations);
  h.add(actions);
  h.add(rewards);
  h.add(terminals);
  h.add(timeouts);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value()));
  return hex;
}

namespace {

Transitions read_d4rl_here(const std::string& path, const ReadOptions& options) {
  h5::Id file = h5::open_for_reading(path);
  hid_t f = file.get();

  // Shapes and dimensions first: cheap, and a wrong file fails before anything large is read.
  h5::DatasetInfo obs_info = h5::describe(f, "observations", path);
  expect_rows(obs_info, path, "observations", -1, true);
  int64_t n = obs_info.shape[0];
  if (n == 0) throw std::invalid_argument(path + ": empty dataset ('observations' has 0 rows)");
  Transitions data;
  data.obs_dim = static_cast<int>(obs_info.shape[1]);
  data.act_dim =
      static_cast<int>(expect_rows(h5::describe(f, "actions", path), path, "actions", n, true));
  for (const char* key : {"rewards", "terminals", "timeouts"}) {
    expect_rows(h5::describe(f, key, path), path, key, n, false);
  }
  // The env asked for; a guess from the file's name is load_dataset's to weigh (the file's
  // metadata/env_spec, or a config's env, may say the name is wrong).
  if (!options.env.empty() && options.env != "none") {
    const EnvInfo& env = require_env(options.env);
    if (env.obs_dim != data.obs_dim || env.act_dim != data.act_dim)
      throw std::invalid_argument(dims_apart(path, data.obs_dim, data.act_dim, env));
  }

  data.observations.resize(n * data.obs_dim);
  h5::read_float_rows(f, "observations", 0, n, data.observations.data(), path);
  data.actions.resize(n * data.act_dim);
  h5::read_float_rows(f, "actions", 0, n, data.actions.data(), path);
  data.rewards.resize(n);
  h5::read_float_rows(f, "rewards", 0, n, data.rewards.data(), path);
  data.terminals.resize(n);
  h5::read_flag_rows(f, "terminals", 0, n, data.terminals.data(), path);
  data.timeouts.resize(n);
  h5::read_flag_rows(f, "timeouts", 0, n, data.timeouts.data(), path);
  if (options.read_next_observations && h5::exists(f, "next_observations")) {
    h5::DatasetInfo info = h5::describe(f, "next_observations", path);
    if (info.shape != obs_info.shape) {
      throw std::invalid_argument(path + ": 'next_observations' has shape " +
                                  shape_str(info.shape) + ", expected " +
                                  shape_str(obs_info.shape) + " like 'observations'");
    }
    data.next_observations.resize(n * data.obs_dim);
    h5::read_float_rows(f, "next_observations", 0, n, data.next_observations.data(), path);
  }
  if (options.read_infos && h5::is_group(f, "infos")) read_infos(f, "infos", path, n, data.infos);
  if (options.read_metadata && h5::is_group(f, "metadata")) {
    read_metadata(f, "metadata", path, data.metadata);
  }
  data.validate(path);
  return data;
}

}  // namespace

Transitions read_d4rl(const std::string& path, const ReadOptions& options) {
  return detail::read_isolated(path, nullptr,
                               [&](MinariInfo*) { return read_d4rl_here(path, options); });
}

D4rlMadeHere read_d4rl_made_here(const std::string& path) {
  h5::Id file = h5::open_for_reading(path);
  D4rlMadeHere made;
  if (h5::exists(file.get(), "metadata/env_spec"))
    made.env_spec = h5::read_string(file.get(), "metadata/env_spec", path);
  if (!h5::exists(file.get(), "metadata/algorithm")) return made;
  try {
    made.synthetic = h5::read_string(file.get(), "metadata/algorithm", path) == kSyntheticAlgorithm;
  } catch (const std::invalid_argument&) {
    // Not one string (an array, a number): not data synth's word, and not training's to refuse.
  }
  return made;
}

std::string d4rl_file_name(const std::string& id) {
  // "hopper-medium-replay-v2" -> "hopper_medium_replay-v2.hdf5": dashes inside the name become
  // underscores, the one before the version stays.
  size_t version = id.rfind("-v");
  std::string name = id.substr(0, version);
  std::string suffix = version == std::string::npos ? "" : id.substr(version);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name + suffix + ".hdf5";
}

std::string resolve_d4rl_path(const std::string& id_or_path) {
  std::error_code ec;
  if (std::filesystem::exists(id_or_path, ec)) return id_or_path;
  if (id_or_path.find('/') != std::string::npos || id_or_path.size() < 5 ||
      id_or_path.compare(id_or_path.size() - 5, 5, ".hdf5") == 0) {
    throw std::runtime_error(io::no_such(id_or_path, "file"));
  }
  const std::string path = d4rl_dataset_dir() + "/" + d4rl_file_name(id_or_path);
  if (std::filesystem::exists(path, ec)) return path;
  const std::string missing = "D4RL dataset '" + id_or_path + "' not found at " + path;
  if (find_d4rl_published(id_or_path) == nullptr) {
    throw std::runtime_error(
        missing + ", and it is not one of the D4RL v2 MuJoCo datasets minrnn can download" +
        io::did_you_mean(id_or_path, d4rl_published_ids()) + " (" + d4rl_published_ids_phrase() +
        "); put the file there (D4RL_DATASET_DIR sets the folder) or name "
        "its path");
  }
  // A download stopped part-way (walk 47: not said) goes on where it stopped.
  const std::string part = download_part_path(path);
  if (std::filesystem::is_regular_file(part, ec)) {
    const auto bytes = std::filesystem::file_size(part, ec);
    throw std::runtime_error(missing + "; a download of it stopped part-way (" + part + ", " +
                             std::to_string(ec ? 0 : bytes) + " bytes): `" +
                             download_command({id_or_path}) +
                             "` goes on from there (train and sweep: --download)");
  }
  throw std::runtime_error(missing + "; download it with `" + download_command({id_or_path}) +
                           "` (train and sweep: --download), or put the file there "
                           "(D4RL_DATASET_DIR sets the folder)");
}

}  // namespace minrnn::data
