// The Minari writer: main_data.hdf5 and metadata.json exactly as minari 0.5.x's DataCollector and
// HDF5Storage write them, so Python's minari.load_dataset opens the result.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/hdf5_util.h"
#include "datasets/minari.h"
#include "io/atomic_dir.h"
#include "io/atomic_file.h"
#include "io/python_json.h"

namespace minrnn::data {
namespace {

namespace fs = std::filesystem;

// The format version written: the layout of minari 0.5.4 (supported by every 0.5.x reader).
constexpr const char* kMinariVersion = "0.5.4";

std::string python_float(double x) {
  return io::dump_python_json(nlohmann::json(x));
}

// As minari.serialization.serialize_space writes a Box (key order included).
std::string serialize_box(const MinariSpace& s, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : s.shape) n *= d;
  if (s.type != "Box" || s.low.size() != static_cast<size_t>(n) ||
      s.high.size() != static_cast<size_t>(n)) {
    throw std::invalid_argument(what + ": expected a Box space with one low and high per entry");
  }
  std::ostringstream out;
  out << "{\"type\": \"Box\", \"dtype\": \"" << s.dtype << "\", \"shape\": [";
  for (size_t i = 0; i < s.shape.size(); ++i) out << (i ? ", " : "") << s.shape[i];
  out << "], \"low\": [";
  for (size_t i = 0; i < s.low.size(); ++i) out << (i ? ", " : "") << python_float(s.low[i]);
  out << "], \"high\": [";
  for (size_t i = 0; i < s.high.size(); ++i) out << (i ? ", " : "") << python_float(s.high[i]);
  out << "]}";
  return out.str();
}

double size_mb(const fs::path& dir) {
  double bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += static_cast<double>(entry.file_size());
  }
  return std::round(bytes / 1e5) / 10.0;  // as Minari: MB, one decimal
}

}  // namespace

MinariSpace box_space(int64_t dim, double low, double high, const std::string& dtype) {
  MinariSpace s;
  s.present = true;
  s.type = "Box";
  s.dtype = dtype;
  s.shape = {dim};
  s.low.assign(dim, low);
  s.high.assign(dim, high);
  return s;
}

namespace {

bool id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

}  // namespace

// Minari's DATASET_ID_RE, `^(?:[-_\w][-_\w/]*[-_\w]+/)?[-_\w]+?-v\d+$`,
// with the version required (load_dataset parses it as an int). Checked by hand: libstdc++'s
// std::regex recurses once per character and overflows the stack on an id of ~30 000 (a served
// metadata.json's combined_datasets may hold one).
bool is_minari_dataset_id(const std::string& id) {
  const size_t slash = id.rfind('/');
  const std::string name = slash == std::string::npos ? id : id.substr(slash + 1);
  if (slash != std::string::npos) {  // the namespace: 2+ characters, '/' only inside
    const std::string space = id.substr(0, slash);
    if (space.size() < 2 || space.front() == '/' || space.back() == '/') return false;
    for (char c : space)
      if (!id_char(c) && c != '/') return false;
  }
  const size_t digits = name.find_last_not_of("0123456789");
  if (digits == std::string::npos || digits + 1 == name.size() || digits < 2 ||
      name.compare(digits - 1, 2, "-v") != 0) {
    return false;
  }
  for (size_t i = 0; i + 1 < digits; ++i)
    if (!id_char(name[i])) return false;
  return true;
}

void check_minari_dataset_id(const std::string& id) {
  if (!is_minari_dataset_id(id)) {
    throw std::invalid_argument("Minari dataset id '" + id +
                                "': expected (namespace/)name-v<version>, e.g. "
                                "minrnn/hopper/medium-v0");
  }
}

namespace {

// Hidden files (a name from '.': a Finder's .DS_Store, an editor's swap file .metadata.json.swp)
// are no user's work a dataset's folder holds, yet may be someone's all the same: the dataset's
// replacement keeps them (docs/collect.md).
bool is_hidden(const std::string& name) {
  return !name.empty() && name[0] == '.';
}

// What a dataset's folder holds beside its own files (data/main_data.hdf5, data/metadata.json), as
// paths under it, sorted: the hidden ones, or the others, which replacing the folder would delete.
std::vector<std::string> files_beside_dataset(const fs::path& dir, bool hidden) {
  std::vector<std::string> other;
  std::error_code ec;
  for (fs::directory_iterator e(dir, ec), end; !ec && e != end; e.increment(ec)) {
    const std::string name = e->path().filename().string();
    if (name != "data") {
      if (is_hidden(name) == hidden) other.push_back(name);
      continue;
    }
    for (fs::directory_iterator d(e->path(), ec), end_d; !ec && d != end_d; d.increment(ec)) {
      const std::string inner = d->path().filename().string();
      if (inner != "main_data.hdf5" && inner != "metadata.json" && is_hidden(inner) == hidden)
        other.push_back("data/" + inner);
    }
  }
  if (ec) throw std::runtime_error(dir.string() + ": cannot be read: " + ec.message());
  std::sort(other.begin(), other.end());
  return other;
}

// The hidden files of the dataset `dir` replaces, copied into the new one before it goes in: a
// write that fails keeps them where they were, with the old dataset.
void carry_hidden_files(const fs::path& dir, const fs::path& staging) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  for (const std::string& name : files_beside_dataset(dir, /*hidden=*/true)) {
    fs::copy(dir / name, staging / name,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    if (ec) {
      throw std::runtime_error((dir / name).string() + ": cannot be kept in the new dataset (" +
                               ec.message() + "): nothing replaced");
    }
  }
}

}  // namespace

void check_minari_destination(const std::string& dataset_dir, bool overwrite) {
  std::error_code ec;
  if (!fs::exists(fs::path(dataset_dir), ec)) return;
  // overwrite replaces a dataset, never a folder of something else (a slip of --out), nor a
  // dataset's folder holding a user's files too (notes, plots: a walk, 2026-12-01).
  if (!fs::is_regular_file(fs::path(dataset_dir) / "data" / "main_data.hdf5", ec)) {
    throw std::runtime_error(dataset_dir +
                             ": exists and is not a Minari dataset (no data/main_data.hdf5): not "
                             "replaced, even with --force / overwrite");
  }
  if (const auto other = files_beside_dataset(dataset_dir, /*hidden=*/false); !other.empty()) {
    std::string named;
    for (size_t i = 0; i < other.size() && i < 3; ++i) named += (i ? ", " : "") + other[i];
    if (other.size() > 3) named += " and " + std::to_string(other.size() - 3) + " more";
    throw std::runtime_error(dataset_dir + ": a Minari dataset with other files in it (" + named +
                             "), which replacing it would delete: not replaced, even with --force "
                             "/ overwrite (move them out, or write the dataset elsewhere)");
  }
  if (!overwrite) {
    throw std::runtime_error(dataset_dir + ": already exists (--force / overwrite replaces it)");
  }
}

namespace {

// The checks before anything is written: the data, the id, the spaces against the data's dims.
void check_write_inputs(const std::string& dataset_dir, const Transitions& data,
                        const MinariWriteOptions& options) {
  data.validate(dataset_dir);
  check_minari_dataset_id(options.dataset_id);
  if (data.next_observations.empty()) {
    throw std::invalid_argument(dataset_dir +
                                ": the data has no next_observations; a Minari episode needs "
                                "its final observation");
  }
  if (options.env_spec.empty()) {
    throw std::invalid_argument(dataset_dir + ": env_spec is required");
  }
  if (options.observation_space.shape != std::vector<int64_t>{data.obs_dim} ||
      options.action_space.shape != std::vector<int64_t>{data.act_dim}) {
    throw std::invalid_argument(dataset_dir +
                                ": observation/action space shapes do not match "
                                "the data's dims " +
                                std::to_string(data.obs_dim) + "/" + std::to_string(data.act_dim));
  }
  if (options.has_ref_scores &&
      !(std::isfinite(options.ref_min_score) && std::isfinite(options.ref_max_score) &&
        options.ref_max_score > options.ref_min_score)) {
    throw std::invalid_argument(dataset_dir +
                                ": ref_max_score must be finite and exceed ref_min_score");
  }
  check_minari_destination(dataset_dir, options.overwrite);
}

// The [begin, end) steps of each finished episode; *tail gets the steps of an unfinished last one
// (dropped, as readers drop it).
std::vector<std::pair<int64_t, int64_t>> finished_episodes(const Transitions& data, int64_t* tail) {
  std::vector<std::pair<int64_t, int64_t>> episodes;
  int64_t begin = 0;
  for (int64_t t = 0; t < data.num_steps(); ++t) {
    if (data.terminals[t] || data.timeouts[t]) {
      episodes.push_back({begin, t + 1});
      begin = t + 1;
    }
  }
  *tail = data.num_steps() - begin;
  return episodes;
}

// main_data.hdf5: one group per episode, Minari's layout (T + 1 observations); returns the steps.
int64_t write_episodes(const std::string& file_name, const Transitions& data,
                       const std::vector<std::pair<int64_t, int64_t>>& episodes) {
  h5::Id file(H5Fcreate(file_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  if (!file.valid()) throw std::runtime_error(file_name + ": cannot create file");
  const hid_t f = file.get();
  const int obs_dim = data.obs_dim, act_dim = data.act_dim;
  std::vector<double> obs, rewards;
  int64_t steps = 0;
  for (size_t e = 0; e < episodes.size(); ++e) {
    const auto [b, end] = episodes[e];
    const int64_t T = end - b;
    const std::string g = "episode_" + std::to_string(e);
    obs.assign(data.observations.begin() + b * obs_dim, data.observations.begin() + end * obs_dim);
    obs.insert(obs.end(), data.next_observations.begin() + (end - 1) * obs_dim,
               data.next_observations.begin() + end * obs_dim);
    rewards.assign(data.rewards.begin() + b, data.rewards.begin() + end);
    h5::create_group(f, g);
    h5::write_int_attribute(f, g, "id", static_cast<int64_t>(e));
    h5::write_int_attribute(f, g, "total_steps", T);
    h5::write_doubles(f, g + "/observations", {T + 1, obs_dim}, obs.data(), 0);
    h5::write_floats(f, g + "/actions", {T, act_dim}, data.actions.data() + b * act_dim, 0);
    h5::write_doubles(f, g + "/rewards", {T}, rewards.data(), 0);
    h5::write_bools(f, g + "/terminations",
                    std::vector<uint8_t>(data.terminals.begin() + b, data.terminals.begin() + end),
                    0);
    h5::write_bools(f, g + "/truncations",
                    std::vector<uint8_t>(data.timeouts.begin() + b, data.timeouts.begin() + end),
                    0);
    h5::create_group(f, g + "/infos");
    steps += T;
  }
  if (H5Fclose(file.release()) < 0) throw std::runtime_error(file_name + ": cannot finish writing");
  return steps;
}

// metadata.json with Minari's keys; strings hold JSON documents where Minari's do.
nlohmann::ordered_json minari_metadata(const MinariWriteOptions& options,
                                       const MinariWriteResult& result, double size_mb) {
  nlohmann::ordered_json m;
  m["total_episodes"] = result.episodes;
  m["total_steps"] = result.steps;
  m["data_format"] = "hdf5";
  m["jpeg_encoding"] = true;
  m["observation_space"] = serialize_box(options.observation_space, "observation_space");
  m["action_space"] = serialize_box(options.action_space, "action_space");
  m["env_spec"] = options.env_spec;
  m["dataset_size"] = size_mb;
  m["dataset_id"] = options.dataset_id;
  if (!options.code_permalink.empty()) m["code_permalink"] = options.code_permalink;
  if (!options.author.empty()) m["author"] = nlohmann::json::array({options.author});
  if (!options.author_email.empty())
    m["author_email"] = nlohmann::json::array({options.author_email});
  if (!options.algorithm_name.empty()) m["algorithm_name"] = options.algorithm_name;
  if (!options.description.empty()) m["description"] = options.description;
  m["minari_version"] = kMinariVersion;
  if (!options.eval_env_spec.empty()) m["eval_env_spec"] = options.eval_env_spec;
  if (options.has_ref_scores) {
    m["ref_max_score"] = options.ref_max_score;
    m["ref_min_score"] = options.ref_min_score;
    if (options.num_episodes_average_score > 0)
      m["num_episodes_average_score"] = options.num_episodes_average_score;
  }
  return m;
}

}  // namespace

MinariWriteResult write_minari(const std::string& dataset_dir, const Transitions& data,
                               const MinariWriteOptions& options) {
  check_write_inputs(dataset_dir, data, options);
  MinariWriteResult result;
  const auto episodes = finished_episodes(data, &result.dropped_tail_steps);
  if (episodes.empty()) {
    throw std::invalid_argument(dataset_dir + ": no complete episode (no terminal or timeout)");
  }
  // The spaces and specs must serialize before anything is written.
  serialize_box(options.observation_space, "observation_space");
  serialize_box(options.action_space, "action_space");
  io::parse_python_json(options.env_spec, "env_spec");  // must be valid JSON
  if (!options.eval_env_spec.empty()) io::parse_python_json(options.eval_env_spec, "eval_env_spec");

  h5::silence_errors();
  io::AtomicDir out(dataset_dir);  // the old dataset (overwrite) goes only once this one is whole
  const fs::path data_dir = out.staging() / "data";
  fs::create_directories(data_dir);
  result.steps = write_episodes((data_dir / "main_data.hdf5").string(), data, episodes);
  result.episodes = static_cast<int64_t>(episodes.size());
  io::write_file_atomically(
      (data_dir / "metadata.json").string(),
      minari_metadata(options, result, size_mb(out.staging())).dump(4) + "\n");
  carry_hidden_files(out.path(), out.staging());
  if (!out.path().parent_path().empty()) fs::create_directories(out.path().parent_path());
  out.commit();
  return result;
}

}  // namespace minrnn::data
