// fetch::download_dataset for Minari ids against a fake hub on 127.0.0.1 (tests/fetch/fake_hub.h):
// the files land where the reader looks, with each namespace's metadata and the datasets a
// dataset combines; a half-fetched dataset is never visible as one; a listing that names a file
// twice, comes slowly or has more files than the process may open.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "datasets/catalog.h"
#include "datasets/episodes.h"
#include "datasets/minari.h"
#include "fetch/dataset_download.h"
#include "tests/datasets/fixtures.h"
#include "tests/fetch/fake_hub.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::fetch {
namespace {

using testing::FakeHub;
using testing::HttpServer;
using testing::TempDir;
namespace fs = std::filesystem;

using minrnn::testing::read_text;

// A small hopper dataset in Minari's layout, written by the project's own writer.
void write_dataset(const fs::path& dir, const std::string& id, int episodes,
                   const std::string& combined = "") {
  data::MinariWriteOptions o;
  o.dataset_id = id;
  o.env_spec = R"({"id": "Hopper-v5", "max_episode_steps": 1000})";
  o.observation_space = data::box_space(11, -INFINITY, INFINITY, "float64");
  o.action_space = data::box_space(3, -1, 1, "float32");
  data::write_minari(dir.string(), data::testing::make_data(11, 3, std::vector<int>(episodes, 60)),
                     o);
  if (combined.empty()) return;
  // combined_datasets, as minari.combine_datasets writes it.
  const fs::path meta = dir / "data" / "metadata.json";
  std::string text = read_text(meta);
  text.replace(0, 1, "{\"combined_datasets\": [\"" + combined + "\"], ");
  std::ofstream(meta) << text;
}

// The hub with mujoco/hopper/mix-v0 (combined from mujoco/hopper/part-v0) and the namespace
// metadata of "mujoco" and "mujoco/hopper"; the local Minari root is <dir>/minari.
struct Hub {
  TempDir dir;
  HttpServer server{dir.path / "www"};
  FakeHub hub{server, dir.path / "www"};
  fs::path root = dir.path / "minari";
  DatasetDownloadOptions options;

  Hub() {
    write_dataset(dir.path / "src" / "part", "mujoco/hopper/part-v0", 3);
    write_dataset(dir.path / "src" / "mix", "mujoco/hopper/mix-v0", 5, "mujoco/hopper/part-v0");
    hub.put_dataset("hopper/part-v0", dir.path / "src" / "part");
    hub.put_dataset("hopper/mix-v0", dir.path / "src" / "mix");
    hub.put("namespace_metadata.json", R"({"display_name": "MuJoCo"})");
    hub.put("hopper/namespace_metadata.json", R"({"display_name": "Hopper"})");
    hub.put("README.md", "the repo's own readme: not a dataset file\n");
    hub.publish_listings();
    ::setenv("MINARI_DATASETS_PATH", root.c_str(), 1);
    options.hf_endpoint = hub.endpoint();
    options.file.attempts = 1;
    options.file.http.low_speed_time_s = 5;
  }
};

TEST(MinariDownload, ADatasetArrivesWithItsNamespacesAndCombinedDatasets) {
  Hub h;
  const DatasetDownloadReport report = download_dataset("mujoco/hopper/mix-v0", h.options);
  EXPECT_EQ(report.where, (h.root / "mujoco" / "hopper" / "mix-v0").string());
  ASSERT_EQ(report.combined, std::vector<std::string>{"mujoco/hopper/part-v0"});
  for (const char* path :
       {"mujoco/namespace_metadata.json", "mujoco/hopper/namespace_metadata.json",
        "mujoco/hopper/mix-v0/data/main_data.hdf5", "mujoco/hopper/mix-v0/data/metadata.json",
        "mujoco/hopper/part-v0/data/main_data.hdf5", "mujoco/hopper/part-v0/data/metadata.json"}) {
    EXPECT_TRUE(fs::exists(h.root / path)) << path;
  }
  EXPECT_FALSE(fs::exists(h.root / "mujoco" / "README.md"));  // only the dataset's folder
  EXPECT_EQ(read_text(h.root / "mujoco/hopper/mix-v0/data/main_data.hdf5"),
            read_text(h.hub.file("hopper/mix-v0/data/main_data.hdf5")));
  for (const auto& e : fs::recursive_directory_iterator(h.root))
    EXPECT_NE(e.path().extension(), ".part") << e.path();
  // The reader finds it by id, as it finds one Python's minari downloaded.
  const data::Dataset ds = data::load_dataset("mujoco/hopper/mix-v0");
  EXPECT_EQ(ds.format, "minari");
  EXPECT_EQ(ds.index.stats.num_episodes, 5);
  EXPECT_TRUE(data::locate_dataset("mujoco/hopper/part-v0").present);

  // Again: every file checked against the listing, none fetched.
  const size_t before = h.server.requests().size();
  const DatasetDownloadReport again = download_dataset("mujoco/hopper/mix-v0", h.options);
  EXPECT_EQ(again.fetched(), 0);
  const auto requests = h.server.requests();
  for (size_t i = before; i < requests.size(); ++i)
    EXPECT_EQ(requests[i].target.rfind("/api/", 0), 0u) << "fetched again: " << requests[i].target;
}

TEST(MinariDownload, AHalfFetchedDatasetIsNotVisibleAndTheNextRunResumesIt) {
  Hub h;
  const std::string main_path =
      "/datasets/farama-minari/mujoco/resolve/main/hopper/part-v0/data/main_data.hdf5";
  h.server.cut_next_file_after(4000, false, main_path);  // fetched last, after metadata.json
  EXPECT_THROW(download_dataset("mujoco/hopper/part-v0", h.options), FetchError);
  const fs::path data = h.root / "mujoco/hopper/part-v0/data";
  EXPECT_FALSE(fs::exists(data / "main_data.hdf5"));
  EXPECT_FALSE(fs::exists(data / "metadata.json"));  // renamed in only once all are fetched
  EXPECT_EQ(fs::file_size(data / "main_data.hdf5.part"), 4000u);
  EXPECT_FALSE(data::locate_dataset("mujoco/hopper/part-v0").present);

  download_dataset("mujoco/hopper/part-v0", h.options);
  EXPECT_TRUE(data::locate_dataset("mujoco/hopper/part-v0").present);
  const auto main = h.server.requests_for(main_path);
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[1].range, "bytes=4000-");
}

TEST(MinariDownload, ADatasetTheHubDoesNotHaveNamesTheListingUrl) {
  Hub h;
  const std::string listing =
      h.server.url("/api/datasets/farama-minari/mujoco/tree/main/hopper/absent-v0?recursive=true");
  try {
    download_dataset("mujoco/hopper/absent-v0", h.options);
    FAIL();
  } catch (const FetchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Minari dataset 'mujoco/hopper/absent-v0'"), std::string::npos) << what;
    EXPECT_NE(what.find(listing), std::string::npos) << what;
    EXPECT_NE(what.find("HTTP 404"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(h.root / "mujoco" / "hopper" / "absent-v0"));
}

TEST(MinariDownload, AFileThatDiffersFromTheListingIsAChecksumMismatch) {
  Hub h;
  std::string bytes = read_text(h.hub.file("hopper/part-v0/data/main_data.hdf5"));
  bytes[bytes.size() / 2] ^= 1;  // same size, other bytes than the listing's sha256
  h.hub.put("hopper/part-v0/data/main_data.hdf5", bytes);
  try {
    download_dataset("mujoco/hopper/part-v0", h.options);
    FAIL();
  } catch (const FetchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(h.hub.file_url("hopper/part-v0/data/main_data.hdf5")), std::string::npos);
    EXPECT_NE(what.find("checksum mismatch"), std::string::npos) << what;
  }
  EXPECT_FALSE(data::locate_dataset("mujoco/hopper/part-v0").present);
  EXPECT_FALSE(fs::exists(h.root / "mujoco/hopper/part-v0/data/main_data.hdf5.part"));
}

TEST(MinariDownload, AListingOverSeveralPagesIsReadToItsEnd) {
  Hub h;
  h.hub.page_listing("hopper/part-v0", 1);
  download_dataset("mujoco/hopper/part-v0", h.options);
  EXPECT_TRUE(data::locate_dataset("mujoco/hopper/part-v0").present);
  EXPECT_EQ(
      h.server.requests_for("/api/datasets/farama-minari/mujoco/tree/main/hopper/part-v0").size(),
      2u);
}

TEST(MinariDownload, ListingPagesThatLeadBackAreRefused) {
  Hub h;
  const std::string target = h.hub.listing_target("hopper/part-v0", true);
  h.server.add_document(target, "[]", h.server.url(target));
  try {
    download_dataset("mujoco/hopper/part-v0", h.options);
    FAIL();
  } catch (const FetchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("leads back to " + h.server.url(target)), std::string::npos) << what;
  }
  EXPECT_LE(h.server.requests_for(target.substr(0, target.find('?'))).size(), 2u);
}

// The listing's paths are joined to the user's Minari folder: one that climbs out of the
// dataset's folder (or is absolute) would let a mirror write any file the user can.
TEST(MinariDownload, AListedPathOutsideTheDatasetsFolderIsRefused) {
  for (const std::string& path :
       {std::string("hopper/part-v0/../../escaped.txt"), std::string("hopper/other-v0/data/x.txt"),
        std::string("/escaped.txt")}) {
    Hub h;
    const std::string target = h.hub.listing_target("hopper/part-v0", true);
    nlohmann::json entry = {
        {"type", "file"}, {"oid", std::string(40, 'a')}, {"size", 1}, {"path", path}};
    h.server.add_document(target, nlohmann::json::array({entry}).dump());
    try {
      download_dataset("mujoco/hopper/part-v0", h.options);
      FAIL() << path;
    } catch (const FetchError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("lists '" + path +
                          "': expected a relative path inside "
                          "'hopper/part-v0/'"),
                std::string::npos)
          << what;
    }
    EXPECT_FALSE(fs::exists(h.root)) << path;  // nothing fetched, nothing written
    EXPECT_FALSE(fs::exists(h.dir.path / "escaped.txt")) << path;
  }
}

// A listing that names a file twice: one download of it, not a second that finds the first's
// lock ("being written by another download"); two different entries for one path are refused.
TEST(MinariDownload, APathListedTwiceIsFetchedOnceAndTwoDifferentEntriesAreRefused) {
  Hub h;
  const std::string target = h.hub.listing_target("hopper/part-v0", true);
  nlohmann::json entries = h.hub.listing("hopper/part-v0", true);
  for (const auto& e : h.hub.listing("hopper/part-v0", true))
    if (e["path"] == "hopper/part-v0/data/metadata.json") entries.push_back(e);
  h.server.add_document(target, entries.dump());
  download_dataset("mujoco/hopper/part-v0", h.options);
  EXPECT_TRUE(data::locate_dataset("mujoco/hopper/part-v0").present);

  Hub other;
  entries = other.hub.listing("hopper/part-v0", true);
  for (const auto& e : other.hub.listing("hopper/part-v0", true)) {
    if (e["path"] != "hopper/part-v0/data/metadata.json") continue;
    entries.push_back(e);
    entries.back()["size"] = e["size"].get<int64_t>() + 1;
  }
  other.server.add_document(target, entries.dump());
  try {
    download_dataset("mujoco/hopper/part-v0", other.options);
    FAIL();
  } catch (const FetchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lists 'hopper/part-v0/data/metadata.json' twice"), std::string::npos)
        << what;
  }
}

// A listing the hub sends slowly says that it waits (here every 0.05 s) instead of looking hung.
TEST(MinariDownload, AListingThatTricklesSaysItWaits) {
  Hub h;
  h.server.set_bytes_per_second(4000);  // a listing of ~1.5 kB: ~0.4 s
  // The listings only: the first file asked for is not there.
  h.server.answer("/datasets/farama-minari/mujoco/resolve/main/namespace_metadata.json", 404);
  FILE* log = std::tmpfile();
  h.options.file.progress = {ProgressStyle::kLog, 0.05, log};
  EXPECT_THROW(download_dataset("mujoco/hopper/part-v0", h.options), FetchError);
  std::rewind(log);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), log));
  std::fclose(log);
  EXPECT_NE(text.find("waiting for the listing " +
                      h.server.url(h.hub.listing_target("hopper/part-v0", true)) + ":"),
            std::string::npos)
      << text;
}

// A listing without main_data.hdf5 names the dataset once (it was said twice).
TEST(MinariDownload, ADatasetWithoutMainDataIsNamedOnce) {
  Hub h;
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : h.hub.listing("hopper/part-v0", true))
    if (e["path"] != "hopper/part-v0/data/main_data.hdf5") entries.push_back(e);
  h.server.add_document(h.hub.listing_target("hopper/part-v0", true), entries.dump());
  try {
    download_dataset("mujoco/hopper/part-v0", h.options);
    FAIL();
  } catch (const FetchError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("Minari dataset 'mujoco/hopper/part-v0': the hub's ", 0), 0u) << what;
    EXPECT_EQ(what.find("Minari dataset", 1), std::string::npos) << what;
  }
}

// More files than the process may open (RLIMIT_NOFILE, `ulimit -n`): the verified files wait
// without an open file each, so the dataset arrives (it failed as "cannot connect").
TEST(MinariDownload, ADatasetOfMoreFilesThanTheOpenFileLimitArrives) {
  Hub h;
  for (int i = 0; i < 120; ++i)
    h.hub.put("hopper/part-v0/extra/f" + std::to_string(i) + ".txt", std::to_string(i) + "\n");
  h.hub.publish_listings();
  const fs::path log = h.dir.path / "child.log";
  const pid_t child = ::fork();  // the limit for the downloading process only, not the server's
  if (child == 0) {
    const rlimit limit{64, 64};
    ::setrlimit(RLIMIT_NOFILE, &limit);
    int code = 0;
    try {
      download_dataset("mujoco/hopper/part-v0", h.options);
    } catch (const std::exception& e) {
      std::ofstream(log) << e.what();
      code = 1;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << (fs::exists(log) ? read_text(log) : "");
  EXPECT_TRUE(data::locate_dataset("mujoco/hopper/part-v0").present);
  EXPECT_EQ(read_text(h.root / "mujoco/hopper/part-v0/extra/f119.txt"), "119\n");
}

}  // namespace
}  // namespace minrnn::fetch
