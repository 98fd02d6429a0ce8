#include "datasets/catalog.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "datasets/d4rl.h"
#include "datasets/minari.h"
#include "envs/registry.h"
#include "io/env_switch.h"
#include "io/input_file.h"
#include "io/name_list.h"
#include "io/python_json.h"

namespace minrnn::data {
namespace {

namespace fs = std::filesystem;

std::string without_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool is_lower_hex(const std::string& s, size_t digits) {
  if (s.size() != digits) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

const std::vector<D4rlPublishedFile>& d4rl_published_files() {
  // REFERENCE.md §7: the bytes and sha256 of each file as served at kD4rlBaseUrl.
  static const std::vector<D4rlPublishedFile> files = {
      {"hopper-expert-v2", 152427435,
       "01aa219a5f8eea5e639eccdc636ec2bf40e317159a95cf4bf6e985f16909941b"},
      {"hopper-full-replay-v2", 187998921,
       "56baf95963c51c1e964049a974566c50ba80f289390565523e60c0ba83e0982e"},
      {"hopper-medium-v2", 152756557,
       "5bdf1bc4a713c82941de44633df669b36c89850b652a25985166796d25cf71a0"},
      {"hopper-medium-expert-v2", 304537315,
       "9d51ad87f8c905be3880d84c6140bcdb7fbf39a19e046a237f238ba34fec9e26"},
      {"hopper-medium-replay-v2", 75854457,
       "e121c5f7c9857a307baa9edc6a2c3b48e85fedb9ac316ecddd0f48ca7ef4e39b"},
      {"hopper-random-v2", 152525345,
       "63103ef7059db4c0819bd054f4e83ff339030b50bcdb46bdbe50385f234b5054"},
      {"halfcheetah-expert-v2", 237464597,
       "d9fe53bb994eb1e20a99b4fa3412cd76a1bb7966a7ff55e0fcbdd6081bd2965f"},
      {"halfcheetah-full-replay-v2", 291381762,
       "27fdf7ea86e5a2cbd24d611ae9e703c86ec2e8e52823abc69dd9af6afb3a36c0"},
      {"halfcheetah-medium-v2", 237727262,
       "41324e8487a9556d8cfa4538827f8937f4d63dae3030825ebc9f3a726ed08ca0"},
      {"halfcheetah-medium-expert-v2", 474567252,
       "015db75dae5bbe8e94029b71fa0bafc2073365df0c94744e71031189f3f79c06"},
      {"halfcheetah-medium-replay-v2", 59448533,
       "48d494a4770c11f48260736dec090b78bdca8375647ed4d24bfa5b6610c7f683"},
      {"halfcheetah-random-v2", 237338037,
       "25407aef85b5d16c0f36b4149341edb4acc6a9e88c1db529b2de19e7464874ba"},
      {"walker2d-expert-v2", 230567195,
       "2985dc3d436a8baa10e8f43f946fe1d7c6337a4e4fbc65def70618093b18c59a"},
      {"walker2d-full-replay-v2", 285115514,
       "f2720f9d27b2acef6ec9a7d9ad3b80b6c2078ad4467cee668a81e3b3c80bcf2a"},
      {"walker2d-medium-v2", 232254996,
       "cf00f43add04c17fdfc2958dd581dea0851b2e5bedbe6fda073758a8f841aeda"},
      {"walker2d-medium-expert-v2", 462197079,
       "6b8d7f868c45bbaedf460be797fb7271b46dee6ebe45fe7a64319f2005b59a04"},
      {"walker2d-medium-replay-v2", 86323963,
       "e75de96a4f77acf7d4e0d6fdf0d7ccb177c26c44bb4388e4fd99f543ccfa18db"},
      {"walker2d-random-v2", 216109364,
       "4e863bb6090cf4a461548bd470564b32f1ae5b32ef3085f816b2ede7f092e7fa"},
  };
  return files;
}

const D4rlPublishedFile* find_d4rl_published(const std::string& id) {
  for (const auto& f : d4rl_published_files())
    if (id == f.id) return &f;
  return nullptr;
}

std::string d4rl_lookalike_note(const std::string& id_or_path, const std::string& made_by) {
  const DatasetLocation at = locate_dataset(id_or_path);
  if (!at.present) return "";
  const std::string file = fs::path(at.where).filename().string();
  for (const auto& f : d4rl_published_files()) {
    if (file != d4rl_file_name(f.id)) continue;
    std::error_code ec;
    const auto bytes = fs::file_size(at.where, ec);
    if (ec || static_cast<int64_t>(bytes) == f.bytes) return "";
    return at.where + " holds " + std::to_string(bytes) + " bytes, D4RL's " + f.id + " " +
           std::to_string(f.bytes) +
           (!made_by.empty()
                ? ": made by `" + made_by + "`, not the published file"
                : std::string(": not the published file (collected here, or edited?)")) +
           "; its scores are not the paper's data's";
  }
  return "";
}

std::string download_part_path(const std::string& path) {
  return path + ".part";
}

std::string d4rl_dataset_dir() {
  return io::env_or("D4RL_DATASET_DIR", io::env_or("HOME", ".") + "/.d4rl/datasets");
}

std::string d4rl_base_url() {
  return without_trailing_slashes(io::env_or("MINRNN_D4RL_URL", kD4rlBaseUrl));
}

std::string d4rl_url(const std::string& id) {
  return d4rl_base_url() + "/" + d4rl_file_name(id);
}

std::string hf_endpoint() {
  return without_trailing_slashes(io::env_or("HF_ENDPOINT", kHuggingFaceEndpoint));
}

MinariRemote minari_remote(const std::string& id) {
  check_minari_dataset_id(id);
  const size_t first_slash = id.find('/');
  if (first_slash == std::string::npos) {
    throw std::invalid_argument("Minari dataset id '" + id +
                                "' has no namespace: the hub keeps datasets as "
                                "namespace/name-v<N>, e.g. mujoco/hopper/medium-v0");
  }
  MinariRemote r;
  r.id = id;
  r.repo = std::string(kMinariHubOrganisation) + "/" + id.substr(0, first_slash);
  r.folder = id.substr(first_slash + 1);
  r.local_root = (fs::path(minari_root()) / id.substr(0, first_slash)).string();
  // Every namespace level from the top: "mujoco" -> "", "mujoco/hopper" -> "hopper".
  const std::string namespace_in_repo = fs::path(r.folder).parent_path().string();
  r.namespace_folders.push_back("");
  for (size_t at = 0; !namespace_in_repo.empty();) {
    const size_t slash = namespace_in_repo.find('/', at);
    r.namespace_folders.push_back(namespace_in_repo.substr(0, slash));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return r;
}

std::string hub_tree_url(const std::string& endpoint, const std::string& repo,
                         const std::string& folder, bool recursive) {
  std::string url = endpoint + "/api/datasets/" + repo + "/tree/main";
  if (!folder.empty()) url += "/" + folder;
  return recursive ? url + "?recursive=true" : url;
}

std::string hub_file_url(const std::string& endpoint, const std::string& repo,
                         const std::string& path) {
  return endpoint + "/datasets/" + repo + "/resolve/main/" + path;
}

std::vector<HubFile> parse_hub_tree(const std::string& json_text, const std::string& url) {
  auto bad = [&](const std::string& what) -> std::invalid_argument {
    return std::invalid_argument(url + ": not a listing of the hub's tree API: " + what);
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    throw bad("not JSON (starts '" + json_text.substr(0, 60) + "')");
  }
  if (!j.is_array()) throw bad("expected a JSON list of entries");
  std::vector<HubFile> files;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string())
      throw bad("an entry without a \"path\"");
    const std::string path = e["path"];
    if (e.value("type", "file") != "file") continue;  // "directory"
    if (!e.contains("size") || !e["size"].is_number_integer() || e["size"].get<int64_t>() < 0)
      throw bad("entry '" + path + "' has no size");
    HubFile f;
    f.path = path;
    f.size = e["size"];
    if (e.contains("lfs") && e["lfs"].is_object()) {
      const auto& lfs = e["lfs"];
      const std::string oid = lfs.contains("oid") && lfs["oid"].is_string() ? lfs["oid"] : "";
      if (!is_lower_hex(oid, 64)) throw bad("entry '" + path + "': lfs.oid is not a sha256");
      if (lfs.contains("size") && lfs["size"].is_number_integer()) f.size = lfs["size"];
      f.sha256 = oid;
    } else {
      const std::string oid = e.contains("oid") && e["oid"].is_string() ? e["oid"] : "";
      if (!is_lower_hex(oid, 40)) throw bad("entry '" + path + "': oid is not a git blob id");
      f.git_sha1 = oid;
    }
    files.push_back(f);
  }
  return files;
}

std::vector<std::string> minari_combined_datasets(const std::string& metadata_json_path) {
  const nlohmann::json j = io::parse_python_json(
      io::read_input_file(metadata_json_path, "Minari metadata.json"), metadata_json_path);
  std::vector<std::string> ids;
  if (!j.is_object() || !j.contains("combined_datasets")) return ids;
  const auto& list = j["combined_datasets"];
  if (!list.is_array()) {
    throw std::invalid_argument(metadata_json_path +
                                ": combined_datasets: expected a list of dataset ids");
  }
  for (const auto& id : list) {
    if (!id.is_string()) {
      throw std::invalid_argument(metadata_json_path +
                                  ": combined_datasets: expected dataset ids, got " + id.dump());
    }
    ids.push_back(id);
  }
  return ids;
}

bool is_downloadable_id(const std::string& id) {
  if (find_d4rl_published(id) != nullptr) return true;
  if (id.find('/') == std::string::npos) return false;
  try {
    minari_remote(id);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::vector<std::string> d4rl_published_ids() {
  std::vector<std::string> ids;
  for (const D4rlPublishedFile& f : d4rl_published_files()) ids.push_back(f.id);
  return ids;
}

std::string d4rl_published_ids_phrase() {
  const auto braced = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
    return "{" + text + "}";
  };
  return braced(envs::env_names()) + "-" + braced(envs::d4rl_qualities()) + "-v2";
}

void check_downloadable_id(const std::string& id) {
  if (is_downloadable_id(id)) return;
  throw std::invalid_argument("'" + id + "' is not a dataset id minrnn can download" +
                              io::did_you_mean(id, d4rl_published_ids()) +
                              ". It downloads the D4RL v2 MuJoCo files, " +
                              d4rl_published_ids_phrase() +
                              " (e.g. hopper-medium-replay-v2), and Minari datasets by id, "
                              "namespace/name-v<N> (e.g. mujoco/hopper/medium-v0)");
}

std::string download_command(const std::vector<std::string>& ids) {
  std::string command = "minrnn data download";
  for (const auto& id : ids) command += " " + id;
  return command;
}

DatasetLocation locate_dataset(const std::string& id_or_path) {
  std::error_code ec;
  DatasetLocation loc;
  if (is_minari_reference(id_or_path)) {
    const fs::path given(id_or_path);
    if (fs::is_regular_file(given, ec)) {  // .../data/main_data.hdf5
      loc.where = given.string();
    } else if (fs::is_directory(given, ec)) {
      loc.where = (given / "data" / "main_data.hdf5").string();
    } else {
      loc.where = (fs::path(minari_root()) / id_or_path / "data" / "main_data.hdf5").string();
      loc.downloadable = is_downloadable_id(id_or_path);
    }
  } else if (fs::exists(id_or_path, ec) || id_or_path.find('/') != std::string::npos ||
             id_or_path.size() < 5 || fs::path(id_or_path).extension() == ".hdf5") {
    loc.where = id_or_path;  // a path: resolve_d4rl_path's rule, which reads it as it is
  } else {
    loc.where = (fs::path(d4rl_dataset_dir()) / d4rl_file_name(id_or_path)).string();
    loc.downloadable = is_downloadable_id(id_or_path);
  }
  loc.present = fs::is_regular_file(loc.where, ec);
  return loc;
}

}  // namespace minrnn::data
