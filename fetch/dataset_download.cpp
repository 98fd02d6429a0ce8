#include "fetch/dataset_download.h"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "datasets/catalog.h"
#include "datasets/d4rl.h"

namespace minrnn::fetch {
namespace {

namespace fs = std::filesystem;

FileSpec spec_of(const data::HubFile& file, const std::string& endpoint,
                 const data::MinariRemote& remote) {
  FileSpec spec;
  spec.url = data::hub_file_url(endpoint, remote.repo, file.path);
  spec.path = (fs::path(remote.local_root) / file.path).string();
  spec.size = file.size;
  spec.checksum = file.sha256.empty() ? Checksum{HashKind::kGitBlobSha1, file.git_sha1}
                                      : Checksum{HashKind::kSha256, file.sha256};
  return spec;
}

// A listed path is joined to the user's dataset folder: it must name a file inside `folder`, or a
// mirror could write anywhere the user can.
void check_listed_path(const std::string& path, const std::string& folder, const std::string& url) {
  const fs::path p(path);
  bool plain = !path.empty() && p.is_relative() && path.back() != '/';
  for (const fs::path& part : p) plain &= !part.empty() && part != "." && part != "..";
  const bool inside = folder.empty() || path.rfind(folder + "/", 0) == 0;
  if (!plain || !inside) {
    throw FetchError(url + " lists '" + path + "': expected a relative path inside '" +
                     (folder.empty() ? "." : folder) + "/' without '.' or '..' parts");
  }
}

// Adds a listing's page to `files`: each path once (a path listed twice would have two downloads
// of one .part, the second refused as "being written by another download"), two different
// entries for one path refused.
void add_listed(const std::vector<data::HubFile>& page, const std::string& folder,
                const std::string& url, std::vector<data::HubFile>* files,
                std::map<std::string, size_t>* at) {
  for (const data::HubFile& f : page) {
    check_listed_path(f.path, folder, url);
    const auto [it, added] = at->emplace(f.path, files->size());
    if (added) {
      files->push_back(f);
      continue;
    }
    const data::HubFile& first = (*files)[it->second];
    if (first.size != f.size || first.sha256 != f.sha256 || first.git_sha1 != f.git_sha1) {
      throw FetchError(url + " lists '" + f.path +
                       "' twice, with different sizes or checksums: which one is published?");
    }
  }
}

// Every file the hub lists in a folder, over as many pages as it takes. A listing slow to come
// says so (every progress.log_every_s in a log), where it would otherwise look hung.
std::vector<data::HubFile> list_folder(const std::string& endpoint, const data::MinariRemote& r,
                                       const std::string& folder, bool recursive,
                                       const DownloadOptions& options) {
  std::vector<data::HubFile> files;
  std::map<std::string, size_t> at;
  std::set<std::string> pages;
  ProgressOptions lines = options.progress;
  if (lines.style != ProgressStyle::kNone) lines.style = ProgressStyle::kLog;  // no final line
  for (std::string url = data::hub_tree_url(endpoint, r.repo, folder, recursive); !url.empty();) {
    if (!pages.insert(url).second) {
      throw FetchError("the hub's listing of '" + folder + "' leads back to " + url +
                       " (its pages' \"next\" links go round in a loop)");
    }
    Progress waiting(lines, "waiting for the listing " + url + ":", -1, 0);
    HttpOptions http = options.http;
    http.on_tick = [&waiting](int64_t received) { waiting.update(received); };
    std::string next;
    const std::string text = http_get_text(url, http, &next);
    try {
      add_listed(data::parse_hub_tree(text, url), folder, url, &files, &at);
    } catch (const std::invalid_argument& e) {  // a listing the hub served: a fetch failure
      throw FetchError(e.what());
    }
    url = next;
  }
  return files;
}

// The files of one Minari dataset, in the order they are put in place: each namespace level's
// metadata, then the dataset's files with data/main_data.hdf5 last.
std::vector<FileSpec> minari_files(const data::MinariRemote& remote, const std::string& endpoint,
                                   const DownloadOptions& options) {
  std::vector<FileSpec> specs;
  for (const std::string& folder : remote.namespace_folders) {
    const std::string wanted =
        folder.empty() ? "namespace_metadata.json" : folder + "/namespace_metadata.json";
    for (const auto& f : list_folder(endpoint, remote, folder, false, options)) {
      if (f.path != wanted) continue;
      specs.push_back(spec_of(f, endpoint, remote));
      specs.back().replace_if_different = true;  // the hub adds datasets to it
    }
  }
  const std::vector<data::HubFile> files =
      list_folder(endpoint, remote, remote.folder, true, options);
  const std::string main_data = remote.folder + "/data/main_data.hdf5";
  bool has_main_data = false;
  for (const auto& f : files) has_main_data |= f.path == main_data;
  if (!has_main_data) {
    throw FetchError("the hub's " + data::hub_tree_url(endpoint, remote.repo, remote.folder, true) +
                     " lists " + std::to_string(files.size()) + " files but no " + main_data +
                     " (minrnn reads Minari's hdf5 format only)");
  }
  for (const auto& f : files)
    if (f.path != main_data) specs.push_back(spec_of(f, endpoint, remote));
  for (const auto& f : files)
    if (f.path == main_data) specs.push_back(spec_of(f, endpoint, remote));
  return specs;
}

void download_minari(const std::string& id, const DatasetDownloadOptions& options,
                     std::set<std::string>* seen, DatasetDownloadReport* report) {
  seen->insert(id);
  const data::MinariRemote remote = data::minari_remote(id);
  const std::string endpoint =
      options.hf_endpoint.empty() ? data::hf_endpoint() : options.hf_endpoint;
  std::vector<FileSpec> specs;
  try {
    specs = minari_files(remote, endpoint, options.file);
  } catch (const FetchError& e) {
    throw FetchError("Minari dataset '" + id + "': " + e.what());
  }
  // Every file fetched and checked before the first is renamed into place.
  std::vector<VerifiedPart> parts;
  for (const FileSpec& spec : specs) {
    FileReport file{spec.url, spec.path, {}};
    if (auto part = fetch_part(spec, options.file, &file.result)) parts.push_back(std::move(*part));
    report->files.push_back(file);
  }
  for (VerifiedPart& part : parts) part.commit();
  const fs::path dataset = fs::path(remote.local_root) / remote.folder;
  const fs::path metadata = dataset / "data" / "metadata.json";
  if (!fs::exists(metadata)) return;
  for (const std::string& combined : data::minari_combined_datasets(metadata.string())) {
    if (seen->count(combined)) continue;
    report->combined.push_back(combined);
    download_minari(combined, options, seen, report);
  }
}

}  // namespace

int DatasetDownloadReport::fetched() const {
  int n = 0;
  for (const auto& f : files) n += !f.result.already_present;
  return n;
}

int64_t DatasetDownloadReport::bytes_received() const {
  int64_t n = 0;
  for (const auto& f : files) n += f.result.bytes_received;
  return n;
}

DatasetDownloadReport download_dataset(const std::string& id,
                                       const DatasetDownloadOptions& options) {
  data::check_downloadable_id(id);
  DatasetDownloadReport report;
  report.id = id;
  if (const data::D4rlPublishedFile* published = data::find_d4rl_published(id)) {
    const std::string base =
        options.d4rl_base_url.empty() ? data::d4rl_base_url() : options.d4rl_base_url;
    FileSpec spec;
    spec.url = base + "/" + data::d4rl_file_name(id);
    spec.path = (fs::path(data::d4rl_dataset_dir()) / data::d4rl_file_name(id)).string();
    spec.size = published->bytes;
    spec.checksum = {HashKind::kSha256, published->sha256};
    report.where = spec.path;
    report.files.push_back({spec.url, spec.path, download_file(spec, options.file)});
    return report;
  }
  const data::MinariRemote remote = data::minari_remote(id);
  report.where = (fs::path(remote.local_root) / remote.folder).string();
  std::set<std::string> seen;
  download_minari(id, options, &seen, &report);
  return report;
}

bool download_if_missing(const std::string& id_or_path, const DatasetDownloadOptions& options) {
  const data::DatasetLocation location = data::locate_dataset(id_or_path);
  if (location.present) return false;
  if (!location.downloadable) {
    throw std::runtime_error("dataset '" + id_or_path + "' is not at " + location.where +
                             ", and it is not an id minrnn can download (" +
                             "D4RL v2 MuJoCo or Minari ids): make that file, or name another");
  }
  download_dataset(id_or_path, options);
  return true;
}

}  // namespace minrnn::fetch
