#include "datasets/minari.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "datasets/env_table.h"
#include "datasets/hdf5_util.h"
#include "datasets/read_isolated.h"

namespace minrnn::data {
namespace {

namespace fs = std::filesystem;

std::string minari_root() {
  if (const char* dir = std::getenv("MINARI_DATASETS_PATH"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.minari/datasets";
}

MinariInfo read_metadata_json(const fs::path& dir) {
  MinariInfo info;
  info.dataset_id = dir.filename().string();
  const fs::path path = dir / "metadata.json";
  std::ifstream in(path);
  if (!in) return info;  // optional: the HDF5 file has everything the reader needs
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (j.contains("dataset_id") && j["dataset_id"].is_string()) info.dataset_id = j["dataset_id"];
  if (j.contains("env_spec")) {
    nlohmann::json spec = j["env_spec"];
    // Minari stores env_spec as a JSON document inside a string.
    if (spec.is_string()) spec = nlohmann::json::parse(spec.get<std::string>(), nullptr, false);
    if (spec.is_object() && spec.contains("id") && spec["id"].is_string()) info.env_id = spec["id"];
  }
  if (j.contains("ref_min_score") && j["ref_min_score"].is_number() &&
      j.contains("ref_max_score") && j["ref_max_score"].is_number()) {
    info.has_ref_scores = true;
    info.ref_min_score = j["ref_min_score"];
    info.ref_max_score = j["ref_max_score"];
  }
  return info;
}

// episode_{i} groups sorted by i (HDF5 lists names in string order: episode_10 before episode_2).
std::vector<int64_t> episode_numbers(hid_t file, const std::string& path) {
  std::vector<int64_t> numbers;
  for (const std::string& name : h5::list_group(file, "", path)) {
    if (name.rfind("episode_", 0) != 0) continue;
    const std::string digits = name.substr(8);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    numbers.push_back(std::stoll(digits));
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace

bool is_minari_reference(const std::string& id_or_path) {
  std::error_code ec;
  if (fs::is_directory(id_or_path, ec)) return true;
  if (fs::exists(id_or_path, ec)) return fs::path(id_or_path).filename() == "main_data.hdf5";
  const bool has_slash = id_or_path.find('/') != std::string::npos;
  const bool hdf5_suffix = fs::path(id_or_path).extension() == ".hdf5";
  return has_slash && !hdf5_suffix;
}

std::string resolve_minari_dir(const std::string& id_or_path) {
  std::error_code ec;
  fs::path p(id_or_path);
  if (fs::is_regular_file(p, ec) && p.filename() == "main_data.hdf5") {
    return p.parent_path().parent_path().string();
  }
  if (fs::is_directory(p, ec)) {
    if (fs::is_regular_file(p / "data" / "main_data.hdf5", ec)) return p.string();
    throw std::runtime_error(p.string() + ": not a Minari dataset (no data/main_data.hdf5 inside)");
  }
  const fs::path dir = fs::path(minari_root()) / id_or_path;
  if (fs::is_regular_file(dir / "data" / "main_data.hdf5", ec)) return dir.string();
  throw std::runtime_error("Minari dataset '" + id_or_path + "' not found at " +
                           (dir / "data" / "main_data.hdf5").string() +
                           "; fetch it with Python's `minari download " + id_or_path +
                           "` (or set MINARI_DATASETS_PATH to the folder that holds it)");
}

namespace {

D4rlData read_minari_here(const std::string& dataset_dir, MinariInfo* info_out,
                          const D4rlReadOptions& options) {
  const fs::path dir(dataset_dir);
  const std::string path = (dir / "data" / "main_data.hdf5").string();
  MinariInfo info = read_metadata_json(dir);
  h5::Id file = h5::open_for_reading(path);
  const hid_t f = file.get();
  const std::vector<int64_t> numbers = episode_numbers(f, path);
  if (numbers.empty())
    throw std::invalid_argument(path + ": empty dataset (no episode_{i} groups)");

  // First pass: shapes only, so every field is allocated once and filled in place.
  D4rlData data;
  std::vector<int64_t> lengths;
  int64_t total = 0;
  for (int64_t i : numbers) {
    const std::string g = "episode_" + std::to_string(i);
    if (h5::is_group(f, g + "/observations")) {
      throw std::invalid_argument(path + ": '" + g +
                                  "/observations' is a group (dict observation "
                                  "spaces are not supported)");
    }
    h5::DatasetInfo obs = h5::describe(f, g + "/observations", path);
    h5::DatasetInfo act = h5::describe(f, g + "/actions", path);
    if (obs.shape.size() != 2 || act.shape.size() != 2) {
      throw std::invalid_argument(path + ": '" + g + "/observations' and '" + g +
                                  "/actions' must be 2-D (T+1, obs_dim) and (T, act_dim)");
    }
    const int64_t T = act.shape[0];
    if (obs.shape[0] != T + 1) {
      throw std::invalid_argument(path + ": '" + g + "/observations' has " +
                                  std::to_string(obs.shape[0]) +
                                  " rows, expected T+1 = " + std::to_string(T + 1));
    }
    for (const char* key : {"rewards", "terminations", "truncations"}) {
      h5::DatasetInfo k = h5::describe(f, g + "/" + key, path);
      if (k.shape.empty() || k.shape[0] != T || (k.shape.size() == 2 && k.shape[1] != 1) ||
          k.shape.size() > 2) {
        throw std::invalid_argument(path + ": '" + g + "/" + key + "' must have shape (" +
                                    std::to_string(T) + ",)");
      }
    }
    if (obs.shape[1] > (1 << 20) || act.shape[1] > (1 << 20)) {
      throw std::invalid_argument(path + ": '" + g + "' has dims " + std::to_string(obs.shape[1]) +
                                  "/" + std::to_string(act.shape[1]) +
                                  ", more than any environment's (corrupt file?)");
    }
    if (data.obs_dim == 0) {
      data.obs_dim = static_cast<int>(obs.shape[1]);
      data.act_dim = static_cast<int>(act.shape[1]);
    } else if (obs.shape[1] != data.obs_dim || act.shape[1] != data.act_dim) {
      throw std::invalid_argument(path + ": '" + g + "' has dims " + std::to_string(obs.shape[1]) +
                                  "/" + std::to_string(act.shape[1]) + ", earlier episodes " +
                                  std::to_string(data.obs_dim) + "/" +
                                  std::to_string(data.act_dim));
    }
    lengths.push_back(T);
    total += T;
  }
  if (total == 0) throw std::invalid_argument(path + ": empty dataset (0 steps)");
  // Each episode's datasets were checked against the file's size as they were opened; their sum
  // is checked too (a corrupt file's episodes can share one dataset's storage).
  std::error_code ec;
  const double file_bytes = static_cast<double>(fs::file_size(path, ec));
  const double need = static_cast<double>(total) * (2.0 * data.obs_dim + data.act_dim + 3) * 4;
  if (ec || need > 2 * 1100 * file_bytes + (1 << 20)) {
    throw std::invalid_argument(path + ": its episodes declare " + std::to_string(total) +
                                " steps of dims " + std::to_string(data.obs_dim) + "/" +
                                std::to_string(data.act_dim) +
                                ", more than the file can hold (truncated or corrupt file?)");
  }
  if (options.env != "none") {
    const EnvInfo* env = !options.env.empty()   ? find_env(options.env)
                         : !info.env_id.empty() ? find_env(info.env_id)
                                                : guess_env_from_name(info.dataset_id);
    if (env != nullptr && (env->obs_dim != data.obs_dim || env->act_dim != data.act_dim)) {
      throw std::invalid_argument(
          path + ": observations/actions have dims " + std::to_string(data.obs_dim) + "/" +
          std::to_string(data.act_dim) + " but " + env->name + " has " +
          std::to_string(env->obs_dim) + "/" + std::to_string(env->act_dim));
    }
  }

  data.observations.resize(total * data.obs_dim);
  if (options.read_next_observations) data.next_observations.resize(total * data.obs_dim);
  data.actions.resize(total * data.act_dim);
  data.rewards.resize(total);
  data.terminals.resize(total);
  data.timeouts.resize(total);
  int64_t row = 0;
  for (size_t e = 0; e < numbers.size(); ++e) {
    const std::string g = "episode_" + std::to_string(numbers[e]) + "/";
    const int64_t T = lengths[e];
    if (T == 0) continue;
    h5::read_float_rows(f, g + "observations", 0, T, data.observations.data() + row * data.obs_dim,
                        path);
    if (options.read_next_observations) {
      h5::read_float_rows(f, g + "observations", 1, T,
                          data.next_observations.data() + row * data.obs_dim, path);
    }
    h5::read_float_rows(f, g + "actions", 0, T, data.actions.data() + row * data.act_dim, path);
    h5::read_float_rows(f, g + "rewards", 0, T, data.rewards.data() + row, path);
    h5::read_flag_rows(f, g + "terminations", 0, T, data.terminals.data() + row, path);
    h5::read_flag_rows(f, g + "truncations", 0, T, data.timeouts.data() + row, path);
    for (int64_t t = row; t < row + T - 1; ++t) {
      if (data.terminals[t] || data.timeouts[t]) {
        throw std::invalid_argument(path + ": '" + g + "terminations/truncations' set at step " +
                                    std::to_string(t - row) + ", before the episode's last step " +
                                    std::to_string(T - 1));
      }
    }
    const int64_t last = row + T - 1;
    if (!data.terminals[last] && !data.timeouts[last]) {
      data.timeouts[last] = 1;  // the group boundary ends the episode; counted in the info
      ++info.episodes_without_end_flag;
    }
    row += T;
  }
  data.validate(path);
  info.total_episodes = static_cast<int64_t>(numbers.size());
  info.total_steps = total;
  if (info_out != nullptr) *info_out = info;
  return data;
}

}  // namespace

D4rlData read_minari(const std::string& dataset_dir, MinariInfo* info_out,
                     const D4rlReadOptions& options) {
  const std::string path = (fs::path(dataset_dir) / "data" / "main_data.hdf5").string();
  return detail::read_isolated(path, info_out, [&](MinariInfo* info) {
    return read_minari_here(dataset_dir, info, options);
  });
}

}  // namespace minrnn::data
