// The datasets `minrnn data download` can fetch, where each one's files come from and where they
// go (the folders the readers look in), and whether a dataset a config names is there. Pure
// naming: no network here (fetch/dataset_download.h does the fetching).
//
//   data::locate_dataset("hopper-medium-v2")   // {where: ~/.d4rl/datasets/hopper_medium-v2.hdf5,
//                                              //  present: false, downloadable: true}
//   data::download_command({"hopper-medium-v2"})  // "minrnn data download hopper-medium-v2"
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minrnn::data {

// One D4RL v2 MuJoCo file as its server publishes it: REFERENCE.md §7 (TensorFlow Datasets'
// checksums.tsv for d4rl_mujoco_*). The downloader checks every byte against these.
struct D4rlPublishedFile {
  const char* id;      // "hopper-medium-replay-v2"
  int64_t bytes;       // 75854457
  const char* sha256;  // lowercase hex
};

// All 18: {hopper, halfcheetah, walker2d} × {random, medium, expert, medium-replay,
// medium-expert, full-replay}.
const std::vector<D4rlPublishedFile>& d4rl_published_files();
// The entry for an id, nullptr when the id is not one of them.
const D4rlPublishedFile* find_d4rl_published(const std::string& id);
// Their ids, and the ids in one phrase: "{hopper,halfcheetah,walker2d}-{random,...}-v2".
std::vector<std::string> d4rl_published_ids();
std::string d4rl_published_ids_phrase();

// Where `id_or_path` reads a file under a published D4RL file's name (the id, or a path ending in
// its file name) whose size is not the published one: "FILE holds N bytes, D4RL's ID M: not the
// published file (…)". "" otherwise (the published size, no D4RL name, no file). A collected or
// edited dataset under D4RL's name would otherwise score beside the paper's numbers unremarked.
// `made_by`: the minrnn command that made the file (made_by_minrnn: D4RL's files carry no word of
// it), which the note names rather than asking whether it was edited.
std::string d4rl_lookalike_note(const std::string& id_or_path, const std::string& made_by = "");

// The folder D4RL files are read from and downloaded to: $D4RL_DATASET_DIR, else ~/.d4rl/datasets.
std::string d4rl_dataset_dir();

// Where D4RL's files are served; $MINRNN_D4RL_URL names a mirror of that folder instead.
constexpr const char* kD4rlBaseUrl =
    "http://rail.eecs.berkeley.edu/datasets/offline_rl/gym_mujoco_v2";
std::string d4rl_base_url();
// <d4rl_base_url()>/<file name of the id>.
std::string d4rl_url(const std::string& id);

// Where Minari's datasets are served: Hugging Face, or $HF_ENDPOINT (a mirror of the hub's API).
constexpr const char* kHuggingFaceEndpoint = "https://huggingface.co";
std::string hf_endpoint();  // without a trailing slash
// Minari's default remote (minari.storage.remotes.DEFAULT_REMOTE, hf://farama-minari).
constexpr const char* kMinariHubOrganisation = "farama-minari";

// Where a Minari id lives on the hub and on disk, as Python's minari maps it
// (HuggingFaceStorage): "mujoco/hopper/medium-v0" is the dataset repo farama-minari/mujoco,
// folder hopper/medium-v0, downloaded below <minari_root()>/mujoco.
struct MinariRemote {
  std::string id;          // "mujoco/hopper/medium-v0"
  std::string repo;        // "farama-minari/mujoco"
  std::string folder;      // "hopper/medium-v0": the dataset's folder inside the repo
  std::string local_root;  // <minari_root()>/mujoco: a repo path P lands at local_root/P
  // The repo folders that may hold a namespace_metadata.json, one per level of the id's
  // namespace ("mujoco" is the repo's top, "mujoco/hopper" its folder "hopper"): "", "hopper".
  std::vector<std::string> namespace_folders;
};
// Throws std::invalid_argument naming the id when it is not (namespace/)...name-v<N> with a
// namespace.
MinariRemote minari_remote(const std::string& id);

// The hub's listing of a folder (recursive: every file below it) and a file's download address.
std::string hub_tree_url(const std::string& endpoint, const std::string& repo,
                         const std::string& folder, bool recursive);
std::string hub_file_url(const std::string& endpoint, const std::string& repo,
                         const std::string& path);

// One file of a hub listing. Files the hub keeps in LFS (the HDF5 data) carry their sha256; small
// ones kept in git (metadata.json) carry their git blob id (sha1 of "blob <size>\0" + contents).
struct HubFile {
  std::string path;  // in the repo: "hopper/medium-v0/data/main_data.hdf5"
  int64_t size = 0;
  std::string sha256;    // LFS files
  std::string git_sha1;  // the others
};
// The files of a tree-API answer (directories skipped). Throws std::invalid_argument naming `url`
// when the text is not such a listing (not JSON, an entry without path or size, an LFS entry
// without a 64-digit sha256).
std::vector<HubFile> parse_hub_tree(const std::string& json_text, const std::string& url);

// A downloaded Minari dataset's data/metadata.json "combined_datasets": the ids of the datasets
// it was combined from, which Minari fetches with it. Empty when there is no such key.
std::vector<std::string> minari_combined_datasets(const std::string& metadata_json_path);

// True for the ids `minrnn data download` knows how to fetch: the 18 D4RL files above and any
// Minari id with a namespace (whether the hub has it is known only by asking it).
bool is_downloadable_id(const std::string& id);
// Throws std::invalid_argument naming the id and what can be downloaded, unless downloadable.
void check_downloadable_id(const std::string& id);
// "minrnn data download ID1 ID2 ...".
std::string download_command(const std::vector<std::string>& ids);
// Where a download of `path` keeps the bytes it has so far (<path>.part), which the next one goes
// on from: fetch writes it, a dataset not there yet is told of it.
std::string download_part_path(const std::string& path);

// Where a dataset named in a config or on the command line is read from and whether it is there,
// without reading it: the same rules as load_dataset (docs/datasets.md, "Where files are found").
struct DatasetLocation {
  std::string where;  // the file (D4RL) or the data/main_data.hdf5 (Minari) looked for
  bool present = false;
  bool downloadable = false;  // is_downloadable_id: an id, not a path someone made
};
DatasetLocation locate_dataset(const std::string& id_or_path);

}  // namespace minrnn::data
