// The Hugging Face hub as far as a Minari download uses it, served by the test HttpServer: a
// dataset repo's files at /datasets/<repo>/resolve/main/<path> and the tree API's listings
// (/api/datasets/<repo>/tree/main/<folder>[?recursive=true]) with each file's size and, as the hub
// gives them, the sha256 of LFS files (here: *.hdf5) and the git blob id of the others.
#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fetch/checksum.h"
#include "tests/fetch/http_server.h"

namespace minrnn::testing {

class FakeHub {
 public:
  // Files live under <root>/datasets/<repo>/resolve/main/, the path the server serves them at.
  FakeHub(HttpServer& server, const std::filesystem::path& root,
          std::string repo = "farama-minari/mujoco")
      : server_(server),
        repo_(std::move(repo)),
        files_(root / "datasets" / repo_ / "resolve" / "main") {
    std::filesystem::create_directories(files_);
  }

  std::string endpoint() const { return server_.url(); }
  std::string file_url(const std::string& path) const {
    return server_.url("/datasets/" + repo_ + "/resolve/main/" + path);
  }
  std::filesystem::path file(const std::string& path) const { return files_ / path; }

  void put(const std::string& path, const std::string& bytes) {
    std::filesystem::create_directories(file(path).parent_path());
    std::ofstream(file(path), std::ios::binary) << bytes;
  }
  // A Minari dataset folder (<dir>/data/...) as the repo folder `folder` ("hopper/medium-v0").
  void put_dataset(const std::string& folder, const std::filesystem::path& dir) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const std::string rel = std::filesystem::relative(e.path(), dir).string();
      std::filesystem::create_directories(file(folder + "/" + rel).parent_path());
      std::filesystem::copy_file(e.path(), file(folder + "/" + rel),
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }

  // (Re)publishes the listing of every folder, recursive and not, from the files as they are.
  void publish_listings() {
    list("");
    for (const auto& e : std::filesystem::recursive_directory_iterator(files_))
      if (e.is_directory()) list(std::filesystem::relative(e.path(), files_).string());
  }

  // The recursive listing of `folder` in two pages: the first `first_page` entries at the
  // listing's URL, linking (rel="next") to the rest.
  void page_listing(const std::string& folder, size_t first_page) {
    const nlohmann::json all = entries(folder, true);
    const std::string target = listing_target(folder, true);
    const std::string rest = target + "&cursor=2";
    server_.add_document(
        target,
        nlohmann::json(std::vector<nlohmann::json>(all.begin(), all.begin() + long(first_page)))
            .dump(),
        server_.url(rest));
    server_.add_document(
        rest, nlohmann::json(std::vector<nlohmann::json>(all.begin() + long(first_page), all.end()))
                  .dump());
  }

  // The tree API's entries for `folder`, as publish_listings serves them.
  nlohmann::json listing(const std::string& folder, bool recursive) const {
    return entries(folder, recursive);
  }

  std::string listing_target(const std::string& folder, bool recursive) const {
    std::string target = "/api/datasets/" + repo_ + "/tree/main";
    if (!folder.empty()) target += "/" + folder;
    return recursive ? target + "?recursive=true" : target;
  }

 private:
  nlohmann::json entries(const std::string& folder, bool recursive) const {
    nlohmann::json entries = nlohmann::json::array();
    const std::filesystem::path dir = folder.empty() ? files_ : files_ / folder;
    auto add = [&](const std::filesystem::directory_entry& e) {
      const std::string path = std::filesystem::relative(e.path(), files_).string();
      if (e.is_directory()) {
        entries.push_back(
            {{"type", "directory"}, {"oid", std::string(40, '0')}, {"size", 0}, {"path", path}});
        return;
      }
      const int64_t size = int64_t(e.file_size());
      nlohmann::json entry = {
          {"type", "file"},
          {"oid", fetch::file_checksum(e.path().string(), fetch::HashKind::kGitBlobSha1)},
          {"size", size},
          {"path", path}};
      if (e.path().extension() == ".hdf5") {
        entry["lfs"] = {{"oid", fetch::file_checksum(e.path().string(), fetch::HashKind::kSha256)},
                        {"size", size},
                        {"pointerSize", 134}};
      }
      entries.push_back(entry);
    };
    if (recursive) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) add(e);
    } else {
      for (const auto& e : std::filesystem::directory_iterator(dir)) add(e);
    }
    return entries;
  }

  void list(const std::string& folder) {
    for (bool recursive : {false, true})
      server_.add_document(listing_target(folder, recursive), entries(folder, recursive).dump());
  }

  HttpServer& server_;
  std::string repo_;
  std::filesystem::path files_;
};

}  // namespace minrnn::testing
