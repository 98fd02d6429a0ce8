// What the download tests share: a small D4RL-layout file served by the test HttpServer with the
// spec to fetch it, download options that give up fast, and a check that an error names things.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "fetch/download.h"
#include "tests/datasets/fixtures.h"
#include "tests/fetch/http_server.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::testing {

// coreutils' sha256 of a file: an implementation other than the one under test.
inline std::string sha256sum(const std::filesystem::path& path) {
  const auto r = run_command("sha256sum '" + path.string() + "'");
  return r.output.substr(0, 64);
}

// A served D4RL-layout file (hopper dims, a few episodes: tens of kB) and the spec to fetch it
// into <dir>/local/.
struct ServedFile {
  TempDir dir;
  std::filesystem::path served = dir.path / "www" / "hopper_medium-v2.hdf5";
  std::filesystem::path local = dir.path / "local" / "hopper_medium-v2.hdf5";
  HttpServer server{dir.path / "www"};
  fetch::FileSpec spec;
  std::string bytes;

  ServedFile() {
    std::filesystem::create_directories(served.parent_path());
    data::write_d4rl(served.string(), data::testing::make_data(11, 3, {200, 150, 100}));
    bytes = read_text(served);
    spec.url = server.url("/hopper_medium-v2.hdf5");
    spec.path = local.string();
    spec.size = int64_t(bytes.size());
    spec.checksum = {fetch::HashKind::kSha256, sha256sum(served)};
  }
};

// `attempts` tries, no wait between them, timeouts of seconds.
inline fetch::DownloadOptions quick(int attempts = 1) {
  fetch::DownloadOptions options;
  options.attempts = attempts;
  options.retry_delay_s = 0;
  options.http.connect_timeout_s = 5;
  options.http.low_speed_time_s = 5;
  return options;
}

inline void expect_error_naming(const std::function<void()>& run,
                                const std::vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "expected an error";
  } catch (const std::exception& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "no '" << part << "' in: " << e.what();
  }
}

}  // namespace minrnn::testing
