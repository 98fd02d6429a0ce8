#include "datasets/minari.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "datasets/catalog.h"
#include "datasets/env_table.h"
#include "datasets/hdf5_util.h"
#include "datasets/minari_metadata.h"
#include "datasets/read_isolated.h"
#include "io/env_switch.h"
#include "io/input_file.h"
#include "io/name_list.h"
#include "io/python_json.h"

namespace minrnn::data {
namespace {

namespace fs = std::filesystem;

// The data's dims against a space from metadata.json.
void check_space(const MinariSpace& space, int64_t dim, const MinariInfo& info, const char* key,
                 const char* data_key) {
  if (!space.present) return;
  if (space.shape != std::vector<int64_t>{dim}) {
    std::string shape = "[";
    for (size_t i = 0; i < space.shape.size(); ++i)
      shape += (i ? ", " : "") + std::to_string(space.shape[i]);
    throw std::invalid_argument(info.metadata_path + ": " + key + ".shape = " + shape +
                                "] but the episodes' " + data_key + " have " + std::to_string(dim) +
                                " columns");
  }
}

// The episode_{i} groups sorted by i (HDF5 lists names in string order: episode_10 before
// episode_2). Two names of one number (episode_3, episode_03) would make the order ambiguous.
std::vector<std::string> episode_groups(hid_t file, const std::string& path) {
  std::vector<std::pair<uint64_t, std::string>> numbered;
  for (const std::string& name : h5::list_group(file, "", path)) {
    if (name.rfind("episode_", 0) != 0) continue;
    const char* digits = name.c_str() + 8;
    const char* end = name.c_str() + name.size();
    if (digits == end || !std::all_of(digits, end, ::isdigit)) continue;
    uint64_t number = 0;
    if (std::from_chars(digits, end, number).ec != std::errc()) {
      throw std::invalid_argument(path + ": group '" + name +
                                  "': an episode number past 2^64 (expected episode_{i})");
    }
    numbered.emplace_back(number, name);
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<std::string> names;
  for (size_t i = 0; i < numbered.size(); ++i) {
    if (i > 0 && numbered[i].first == numbered[i - 1].first) {
      throw std::invalid_argument(path + ": groups '" + numbered[i - 1].second + "' and '" +
                                  numbered[i].second + "' are both episode " +
                                  std::to_string(numbered[i].first));
    }
    names.push_back(numbered[i].second);
  }
  // Minari numbers a dataset's episodes 0, 1, ...: a gap is an episode lost from the file.
  for (size_t i = 0; i < numbered.size(); ++i) {
    if (numbered[i].first != i) {
      throw std::invalid_argument(path + ": no group 'episode_" + std::to_string(i) + "' (" +
                                  (i == 0 ? std::string("the first is '")
                                          : "after '" + numbered[i - 1].second + "' comes '") +
                                  numbered[i].second + "'): an episode is missing from the file");
    }
  }
  return names;
}

// Minari also stores datasets as Arrow (data_format "arrow"): say so instead of "not found".
void check_hdf5_format(const fs::path& dir) {
  const std::string path = (dir / "data" / "metadata.json").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  nlohmann::json j;
  try {
    j = io::parse_python_json(io::read_input_file(path, "Minari metadata.json"), path);
  } catch (const std::invalid_argument&) {
    return;  // the reader says what is wrong with it, if it gets that far
  }
  if (j.is_object() && j.contains("data_format") && j["data_format"].is_string() &&
      j["data_format"] != "hdf5") {
    throw std::invalid_argument(path + ": data_format = \"" + j["data_format"].get<std::string>() +
                                "\": minrnn reads Minari's hdf5 format only (re-save the dataset "
                                "with data_format=\"hdf5\" in Python's minari)");
  }
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

std::string minari_root() {
  return io::env_or("MINARI_DATASETS_PATH", io::env_or("HOME", ".") + "/.minari/datasets");
}

std::string resolve_minari_dir(const std::string& id_or_path) {
  std::error_code ec;
  fs::path p(id_or_path);
  if (fs::is_regular_file(p, ec) && p.filename() == "main_data.hdf5") {
    // Minari's layout is <dataset>/data/main_data.hdf5, and the reader needs <dataset>.
    const fs::path data_dir = fs::absolute(p, ec).parent_path();
    if (data_dir.filename() != "data") {
      throw std::invalid_argument(
          p.string() + ": a Minari main_data.hdf5 sits in <dataset>/data/, this one in " +
          data_dir.string() + " (move it there, or give a D4RL file another name)");
    }
    const fs::path dataset = p.parent_path().parent_path();
    return (dataset.empty() ? data_dir.parent_path() : dataset).string();
  }
  if (fs::is_directory(p, ec)) {
    if (fs::is_regular_file(p / "data" / "main_data.hdf5", ec)) return p.string();
    check_hdf5_format(p);
    throw std::runtime_error(p.string() + ": not a Minari dataset (no data/main_data.hdf5 inside)");
  }
  const fs::path dir = fs::path(minari_root()) / id_or_path;
  if (fs::is_directory(dir, ec)) check_hdf5_format(dir);
  if (fs::is_regular_file(dir / "data" / "main_data.hdf5", ec)) return dir.string();
  const std::string missing = "Minari dataset '" + id_or_path + "' not found at " +
                              (dir / "data" / "main_data.hdf5").string();
  if (!is_downloadable_id(id_or_path)) {
    throw std::runtime_error(missing + " (and '" + id_or_path +
                             "' is neither a folder here nor a Minari id, namespace/name-v<N>)" +
                             io::nearby_name_hint(id_or_path));
  }
  // A local dataset whose name is close comes first: a typo of it would otherwise be offered a
  // download the hub then refuses.
  const std::string near = io::nearby_name(dir.string());  // offered as an id, not a path
  const std::string hint =
      near.empty() ? ""
                   : io::did_you_mean_text((fs::path(id_or_path).parent_path() / near).string());
  throw std::runtime_error(missing + hint + "; download it with `" +
                           download_command({id_or_path}) +
                           "` (train and sweep: --download), or set MINARI_DATASETS_PATH to the "
                           "folder that holds it");
}

namespace {

// Episode group g's length T from its datasets' shapes, checked against each other and against
// the dims of earlier episodes (data.obs_dim/act_dim, set by the first).
int64_t episode_length(hid_t f, const std::string& g, const std::string& path, Transitions& data) {
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
  const std::string dims = std::to_string(obs.shape[1]) + "/" + std::to_string(act.shape[1]);
  if (obs.shape[1] > (1 << 20) || act.shape[1] > (1 << 20)) {
    throw std::invalid_argument(path + ": '" + g + "' has dims " + dims +
                                ", more than any environment's (corrupt file?)");
  }
  if (data.obs_dim == 0) {
    data.obs_dim = static_cast<int>(obs.shape[1]);
    data.act_dim = static_cast<int>(act.shape[1]);
  } else if (obs.shape[1] != data.obs_dim || act.shape[1] != data.act_dim) {
    throw std::invalid_argument(path + ": '" + g + "' has dims " + dims + ", earlier episodes " +
                                std::to_string(data.obs_dim) + "/" + std::to_string(data.act_dim));
  }
  return T;
}

// Each episode's datasets were checked against the file's size as they were opened; their sum
// is checked too (a corrupt file's episodes can share one dataset's storage).
void check_file_can_hold(const std::string& path, int64_t total, const Transitions& data) {
  std::error_code ec;
  const double file_bytes = static_cast<double>(fs::file_size(path, ec));
  const double need = static_cast<double>(total) * (2.0 * data.obs_dim + data.act_dim + 3) * 4;
  if (ec || need > 2 * 1100 * file_bytes + (1 << 20)) {
    throw std::invalid_argument(path + ": its episodes declare " + std::to_string(total) +
                                " steps of dims " + std::to_string(data.obs_dim) + "/" +
                                std::to_string(data.act_dim) +
                                ", more than the file can hold (truncated or corrupt file?)");
  }
}

// The data's dims against the spaces in metadata.json and the environment the dataset names.
void check_dims(const std::string& path, const MinariInfo& info, const Transitions& data,
                const ReadOptions& options) {
  check_space(info.observation_space, data.obs_dim, info, "observation_space", "observations");
  check_space(info.action_space, data.act_dim, info, "action_space", "actions");
  if (options.env == "none") return;
  const std::string& spec_id = info.eval_env_id.empty() ? info.env_id : info.eval_env_id;
  // The environment asked for (--env) is the one checked and named, before the file's own.
  const bool asked = !options.env.empty();
  const EnvInfo* env = asked              ? &require_env(options.env)
                       : !spec_id.empty() ? find_env(spec_id)
                                          : guess_env_from_name(info.dataset_id);
  const int env_obs_dim = env == nullptr ? 0 : env->obs_dim + (info.observes_x ? 1 : 0);
  if (env != nullptr && (env_obs_dim != data.obs_dim || env->act_dim != data.act_dim)) {
    throw std::invalid_argument(
        path + ": observations/actions have dims " + std::to_string(data.obs_dim) + "/" +
        std::to_string(data.act_dim) + " but " + (asked || spec_id.empty() ? env->name : spec_id) +
        " has " + std::to_string(env_obs_dim) + "/" + std::to_string(env->act_dim));
  }
}

// Episode group g's T steps into data's rows [row, row + T). An end flag before the last step is
// an error; none at the last step is supplied (the group boundary ends the episode) and counted.
void read_episode(hid_t f, const std::string& g, int64_t T, int64_t row, const std::string& path,
                  bool next_observations, Transitions& data, MinariInfo& info) {
  h5::read_float_rows(f, g + "observations", 0, T, data.observations.data() + row * data.obs_dim,
                      path);
  if (next_observations) {
    h5::read_float_rows(f, g + "observations", 1, T,
                        data.next_observations.data() + row * data.obs_dim, path);
  }
  h5::read_float_rows(f, g + "actions", 0, T, data.actions.data() + row * data.act_dim, path);
  h5::read_float_rows(f, g + "rewards", 0, T, data.rewards.data() + row, path);
  h5::read_flag_rows(f, g + "terminations", 0, T, data.terminals.data() + row, path);
  h5::read_flag_rows(f, g + "truncations", 0, T, data.timeouts.data() + row, path);
  for (int64_t t = row; t < row + T - 1; ++t) {
    if (data.terminals[t] || data.timeouts[t]) {
      const std::string flag = data.terminals[t] ? "terminations" : "truncations";
      throw std::invalid_argument(path + ": '" + g + flag + "' set at step " +
                                  std::to_string(t - row) + ", before the episode's last step " +
                                  std::to_string(T - 1) +
                                  " (Minari flags only an episode's last step)");
    }
  }
  const int64_t last = row + T - 1;
  if (!data.terminals[last] && !data.timeouts[last]) {
    data.timeouts[last] = 1;
    ++info.episodes_without_end_flag;
  }
}

// A NaN or infinity named where the user's file holds it ('episode_4/rewards' row 1), not at a row
// of the buffer the episodes were joined into (next observations are an episode's rows 1..T).
void check_finite_by_episode(const std::string& path, const std::vector<std::string>& episodes,
                             const std::vector<int64_t>& lengths, const Transitions& data) {
  struct Field {
    const std::vector<float>* values;
    int64_t width;
    const char* key;
    int64_t first_row;
  };
  for (const Field& f :
       {Field{&data.observations, data.obs_dim, "observations", 0},
        Field{&data.next_observations, data.obs_dim, "observations", 1},
        Field{&data.actions, data.act_dim, "actions", 0}, Field{&data.rewards, 1, "rewards", 0}}) {
    const int64_t i = first_non_finite(*f.values);
    if (i < 0) continue;
    int64_t row = i / f.width;
    size_t e = 0;
    while (row >= lengths[e]) row -= lengths[e++];
    throw std::invalid_argument(path + ": '" + episodes[e] + "/" + f.key +
                                "' has a non-finite value (" + std::to_string((*f.values)[i]) +
                                ") at row " + std::to_string(row + f.first_row));
  }
}

Transitions read_minari_here(const std::string& dataset_dir, MinariInfo* info_out,
                             const ReadOptions& options) {
  const fs::path dir(dataset_dir);
  const std::string path = (dir / "data" / "main_data.hdf5").string();
  MinariInfo info = read_minari_metadata(dir);
  h5::Id file = h5::open_for_reading(path);
  const hid_t f = file.get();
  const std::vector<std::string> episodes = episode_groups(f, path);
  if (episodes.empty())
    throw std::invalid_argument(path + ": empty dataset (no episode_{i} groups)");

  // First pass: shapes only, so every field is allocated once and filled in place.
  Transitions data;
  std::vector<int64_t> lengths;
  int64_t total = 0;
  for (const std::string& episode : episodes) {
    lengths.push_back(episode_length(f, episode, path, data));
    total += lengths.back();
  }
  if (total == 0) throw std::invalid_argument(path + ": empty dataset (0 steps)");
  check_file_can_hold(path, total, data);
  check_dims(path, info, data, options);

  data.observations.resize(total * data.obs_dim);
  if (options.read_next_observations) data.next_observations.resize(total * data.obs_dim);
  data.actions.resize(total * data.act_dim);
  data.rewards.resize(total);
  data.terminals.resize(total);
  data.timeouts.resize(total);
  int64_t row = 0;
  for (size_t e = 0; e < episodes.size(); ++e) {
    if (lengths[e] == 0) continue;
    read_episode(f, episodes[e] + "/", lengths[e], row, path, options.read_next_observations, data,
                 info);
    row += lengths[e];
  }
  check_finite_by_episode(path, episodes, lengths, data);
  data.validate(path);
  info.total_episodes = static_cast<int64_t>(episodes.size());
  info.total_steps = total;
  for (const auto& [key, declared, held] :
       {std::tuple{"total_episodes", info.declared_episodes, info.total_episodes},
        std::tuple{"total_steps", info.declared_steps, info.total_steps}}) {
    if (declared >= 0 && declared != held) {
      throw std::invalid_argument(info.metadata_path + ": " + key + " = " +
                                  std::to_string(declared) + " but " + path + " holds " +
                                  std::to_string(held) + " (an incomplete or altered dataset)");
    }
  }
  if (info_out != nullptr) *info_out = info;
  return data;
}

}  // namespace

Transitions read_minari(const std::string& dataset_dir, MinariInfo* info_out,
                        const ReadOptions& options) {
  const std::string path = (fs::path(dataset_dir) / "data" / "main_data.hdf5").string();
  return detail::read_isolated(path, info_out, [&](MinariInfo* info) {
    return read_minari_here(dataset_dir, info, options);
  });
}

}  // namespace minrnn::data
