// `minrnn data download ID`: a dataset id to its files, each fetched with download_file (resumable,
// verified, atomic) into the folder the readers look in (datasets/catalog.h).
//   - D4RL v2 MuJoCo: one file, its size and sha256 from the published table, from
//     $MINRNN_D4RL_URL or the Berkeley server, to $D4RL_DATASET_DIR or ~/.d4rl/datasets.
//   - Minari: the hub ($HF_ENDPOINT or huggingface.co) lists the dataset's folder (each file's size
//     and sha256 or git blob id); every file is fetched and checked, then renamed into place with
//     data/main_data.hdf5 last, so a reader never takes a half-fetched folder for a dataset. Also
//     each namespace level's namespace_metadata.json, and, as Python's minari does, the datasets
//     its metadata.json lists in combined_datasets. Below $MINARI_DATASETS_PATH or
//     ~/.minari/datasets.
#pragma once
#include <string>
#include <vector>

#include "fetch/download.h"

namespace minrnn::fetch {

struct DatasetDownloadOptions {
  DownloadOptions file;
  std::string hf_endpoint;    // "" : data::hf_endpoint()
  std::string d4rl_base_url;  // "" : data::d4rl_base_url()
};

struct FileReport {
  std::string url, path;
  DownloadResult result;
};

struct DatasetDownloadReport {
  std::string id;
  std::string where;                  // the D4RL file, or the Minari dataset's folder
  std::vector<FileReport> files;      // of this dataset and of those combined into it
  std::vector<std::string> combined;  // combined_datasets fetched with it
  int fetched() const;                // files fetched now (the others were present)
  int64_t bytes_received() const;
};

// Throws std::invalid_argument for an id it cannot download (data::check_downloadable_id),
// FetchError naming the URL, io::WriteError naming the file, StopRequested.
DatasetDownloadReport download_dataset(const std::string& id,
                                       const DatasetDownloadOptions& options);

// For `train --download` / `sweep --download`: fetches the dataset a config names when it is
// missing and an id minrnn can download; nothing when it is there (false). A missing path, or an
// id it cannot download, throws std::runtime_error naming where it was looked for.
bool download_if_missing(const std::string& id_or_path, const DatasetDownloadOptions& options);

}  // namespace minrnn::fetch
