// `minrnn data download`, `train --download` and a sweep's check of its datasets, with the real
// binary against a server the test starts on 127.0.0.1 (tests/fetch/http_server.h): HF_ENDPOINT
// and MINRNN_D4RL_URL point the binary at it, MINARI_DATASETS_PATH and D4RL_DATASET_DIR at the
// test's folder. The Minari dataset served is a real one (`minrnn collect --format minari`).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "datasets/d4rl.h"
#include "tests/datasets/fixtures.h"
#include "tests/fetch/fake_hub.h"
#include "tests/paths.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::FakeHub;
using testing::HttpServer;
using testing::TempDir;
namespace fs = std::filesystem;

const std::string kMainData =
    "/datasets/farama-minari/mujoco/resolve/main/hopper/medium-v0/data/main_data.hdf5";

using testing::read_text;
// A test folder with a server, the hub on it, and the variables that point minrnn at both.
struct Served {
  TempDir dir;
  HttpServer server{dir.path / "www"};
  FakeHub hub{server, dir.path / "www"};
  fs::path minari = dir.path / "minari", d4rl = dir.path / "d4rl";

  Served() {
    ::setenv("HF_ENDPOINT", server.url().c_str(), 1);
    ::setenv("MINRNN_D4RL_URL", server.url("/d4rl").c_str(), 1);
    ::setenv("MINARI_DATASETS_PATH", minari.c_str(), 1);
    ::setenv("D4RL_DATASET_DIR", d4rl.c_str(), 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
  }

  testing::CommandResult minrnn(const std::string& args) {
    return testing::run_command("cd '" + dir.path.string() + "' && '" + testing::minrnn_binary() +
                                "' " + args);
  }

  // mujoco/hopper/medium-v0 on the hub: a small Hopper-v5 dataset `minrnn collect` records.
  void publish_minari(int steps = 400) {
    const auto r = minrnn("collect hopper-v5 random --steps " + std::to_string(steps) +
                          " --format minari --dataset-id mujoco/hopper/medium-v0 --out src");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    hub.put_dataset("hopper/medium-v0", dir.path / "src");
    hub.put("namespace_metadata.json", R"({"display_name": "MuJoCo"})");
    hub.publish_listings();
  }
};

using testing::expect_output_naming;

TEST(DownloadCli, AMinariDatasetEndToEndThenASecondDownloadIsANoOp) {
  Served s;
  s.publish_minari();
  const auto r = s.minrnn("data download mujoco/hopper/medium-v0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_output_naming(r, {"mujoco/hopper/medium-v0: downloaded", "checksums checked",
                           (s.minari / "mujoco/hopper/medium-v0").string()});
  const auto inspect = s.minrnn("data inspect mujoco/hopper/medium-v0 --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("\"env_id\": \"Hopper-v5\""), std::string::npos);

  const size_t files_before = s.server.requests_for(kMainData).size();
  const auto again = s.minrnn("data download mujoco/hopper/medium-v0");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  expect_output_naming(again, {"already present", "nothing downloaded"});
  EXPECT_EQ(s.server.requests_for(kMainData).size(), files_before);
}

TEST(DownloadCli, AD4rlFileOtherThanThePublishedOneIsRefusedAndNothingIsKept) {
  Served s;
  fs::create_directories(s.dir.path / "www" / "d4rl");
  data::write_d4rl((s.dir.path / "www/d4rl/hopper_medium-v2.hdf5").string(),
                   data::testing::make_data(11, 3, {100, 100}));
  const auto r = s.minrnn("data download hopper-medium-v2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_output_naming(r, {s.server.url("/d4rl/hopper_medium-v2.hdf5"), "size mismatch",
                           "expected 152756557 bytes"});
  EXPECT_FALSE(fs::exists(s.d4rl / "hopper_medium-v2.hdf5"));
  EXPECT_FALSE(fs::exists(s.d4rl / "hopper_medium-v2.hdf5.part"));
}

TEST(DownloadCli, NotFoundNamesTheUrlAndUnknownIdsAreRefusedBeforeAnyRequest) {
  Served s;
  const auto missing = s.minrnn("data download hopper-expert-v2");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  expect_output_naming(missing, {s.server.url("/d4rl/hopper_expert-v2.hdf5"), "HTTP 404"});

  const size_t requests = s.server.requests().size();
  const auto unknown = s.minrnn("data download hopper-expert-v2 ant-medium-v2");
  EXPECT_NE(unknown.exit_code, 0);
  expect_output_naming(unknown, {"'ant-medium-v2' is not a dataset id minrnn can download"});
  expect_output_naming(s.minrnn("data download hopper-mediun-v2"),
                       {"(did you mean 'hopper-medium-v2'?)"});
  EXPECT_EQ(s.server.requests().size(), requests);
}

TEST(DownloadCli, CtrlCKeepsThePartExits75AndTheSameCommandCompletes) {
  Served s;
  s.publish_minari(1500);
  s.server.set_bytes_per_second(20000);
  const fs::path log = s.dir.path / "out.log";
  const std::string minrnn = testing::minrnn_binary();  // before the fork: the server has a thread
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl(minrnn.c_str(), "minrnn", "data", "download", "mujoco/hopper/medium-v0", nullptr);
    ::_exit(127);
  }
  const fs::path part = s.minari / "mujoco/hopper/medium-v0/data/main_data.hdf5.part";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::error_code ec;
  while (!(fs::exists(part, ec) && fs::file_size(part, ec) > 2000) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(-child, SIGINT);  // the terminal's Ctrl-C: the whole process group
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << read_text(log);
  EXPECT_EQ(WEXITSTATUS(status), 75) << read_text(log);
  EXPECT_NE(read_text(log).find("stopped by SIGINT"), std::string::npos) << read_text(log);
  const std::string said = read_text(log);  // how to resume, said once (it was said twice)
  EXPECT_NE(said.find(".part keeps "), std::string::npos) << said;
  EXPECT_EQ(said.find("to resume"), said.rfind("to resume")) << said;
  ASSERT_TRUE(fs::exists(part));
  const auto kept = fs::file_size(part);
  EXPECT_GT(kept, 2000u);
  EXPECT_FALSE(fs::exists(s.minari / "mujoco/hopper/medium-v0/data/main_data.hdf5"));

  s.server.set_bytes_per_second(0);
  const auto again = s.minrnn("data download mujoco/hopper/medium-v0");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_text(s.minari / "mujoco/hopper/medium-v0/data/main_data.hdf5"),
            read_text(s.hub.file("hopper/medium-v0/data/main_data.hdf5")));
  const auto main = s.server.requests_for(kMainData);
  ASSERT_GE(main.size(), 2u);
  const std::string range = main.back().range;
  ASSERT_EQ(range.rfind("bytes=", 0), 0u) << "the rerun must continue with a Range request";
  EXPECT_GE(std::stoll(range.substr(6)), int64_t(kept));
}

// Of `minrnn data download A B`, a dataset whose metadata.json the download cannot use (here its
// combined_datasets is no list) is named and the other still fetched; the exit status says one
// failed. (Such an error used to end the command before B.)
TEST(DownloadCli, OneDatasetRefusedIsNamedAndTheOthersAreStillFetched) {
  Served s;
  s.publish_minari();
  s.hub.put_dataset("hopper/broken-v0", s.dir.path / "src");
  std::string meta = read_text(s.hub.file("hopper/broken-v0/data/metadata.json"));
  meta.replace(0, 1, "{\"combined_datasets\": 5, ");
  s.hub.put("hopper/broken-v0/data/metadata.json", meta);
  s.hub.publish_listings();
  const auto r = s.minrnn("data download mujoco/hopper/broken-v0 mujoco/hopper/medium-v0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_output_naming(r, {"minrnn: error: mujoco/hopper/broken-v0: ", "combined_datasets",
                           "mujoco/hopper/medium-v0: downloaded", "1 of 2 failed"});
  EXPECT_TRUE(fs::exists(s.minari / "mujoco/hopper/medium-v0/data/main_data.hdf5"));
}

TEST(DownloadCli, AFullDiskNamesTheFileAndKeepsWhatWasWritten) {
  Served s;
  s.publish_minari(1500);
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const std::string minrnn = testing::minrnn_binary();  // before the fork: the server has a thread
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    const rlimit limit{20000, 20000};  // what a full disk does to write(): here EFBIG
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::execl(minrnn.c_str(), "minrnn", "data", "download", "mujoco/hopper/medium-v0", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) output.append(buf, size_t(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  const fs::path data = s.minari / "mujoco/hopper/medium-v0/data";
  EXPECT_NE(
      output.find("cannot write " + (data / "main_data.hdf5.part").string() + ": File too large"),
      std::string::npos)
      << output;
  EXPECT_NE(output.find(s.hub.file_url("hopper/medium-v0/data/main_data.hdf5")), std::string::npos)
      << output;
  EXPECT_FALSE(fs::exists(data / "main_data.hdf5"));
  EXPECT_TRUE(fs::exists(data / "main_data.hdf5.part"));
}

// A tiny agent on the Minari id: trains in seconds.
const char* kMinariConfig =
    "dataset: mujoco/hopper/medium-v0\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
    "context_len: 5\nbatch_size: 4\nmax_steps: 4\nwarmup_steps: 1\neval_every: 0\n"
    "eval_episodes: 1\ncheckpoint_every: 2\nlog_every: 1\ntarget_return: 3600\n";

TEST(DownloadCli, TrainSaysHowToDownloadAMissingDatasetAndDownloadFetchesIt) {
  Served s;
  s.publish_minari();
  std::ofstream(s.dir.path / "c.yaml") << kMinariConfig;
  const auto missing = s.minrnn("train c.yaml --run-dir run --quiet");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  expect_output_naming(missing, {"minrnn data download mujoco/hopper/medium-v0", "--download"});

  const auto trained = s.minrnn("train c.yaml --run-dir run --quiet --download");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  expect_output_naming(trained, {"mujoco/hopper/medium-v0 downloaded", "step 4"});
  EXPECT_TRUE(fs::exists(s.minari / "mujoco/hopper/medium-v0/data/main_data.hdf5"));
}

TEST(DownloadCli, ASweepWithMissingDataStartsNothingAndItsDryRunSaysSo) {
  Served s;
  std::ofstream(s.dir.path / "published-mingru.yaml")
      << "dataset: hopper-medium-v2\nbackbone: mingru\nmax_steps: 2\n";
  std::ofstream(s.dir.path / "mine-mingru.yaml")
      << "dataset: data/mine-v2.hdf5\nbackbone: mingru\nmax_steps: 2\n";
  std::ofstream(s.dir.path / "s.yaml")
      << "datasets: [published, mine]\nbackbones: [mingru]\nseeds: [0, 1]\n"
         "config: '{dataset}-{backbone}.yaml'\nout: sw\n";
  const auto refused = s.minrnn("sweep s.yaml");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  expect_output_naming(refused, {"2 datasets of runs still to train missing; nothing was started",
                                 (s.d4rl / "hopper_medium-v2.hdf5").string(), "data/mine-v2.hdf5",
                                 "minrnn data download hopper-medium-v2", "--download"});
  EXPECT_EQ(refused.output.find("minrnn data download data/mine"), std::string::npos);
  EXPECT_FALSE(fs::exists(s.dir.path / "sw"));  // not one run directory

  const auto dry = s.minrnn("sweep s.yaml --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  expect_output_naming(dry, {"data missing: minrnn data download hopper-medium-v2",
                             "data missing: no file data/mine-v2.hdf5"});
  EXPECT_EQ(dry.output.find("to train"), std::string::npos) << dry.output;
  EXPECT_FALSE(fs::exists(s.dir.path / "sw"));
}

}  // namespace
}  // namespace minrnn
