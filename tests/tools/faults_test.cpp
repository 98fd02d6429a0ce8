// Faults as a user meets them, with the real `minrnn` binary: a file size limit (RLIMIT_FSIZE, what
// `ulimit -f` sets; a full disk fails the same writes with ENOSPC) hit while writing a checkpoint
// and while writing a dataset, after a kill -9. Each time: a clear error naming the file and the
// OS reason, exit status 1 (not a signal), the previous file intact and loadable, no temp file
// left, and the next run picks up where the last good file left off.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rl/trainer.h"
#include "tests/paths.h"
#include "tests/rl/fixtures.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

struct LimitedResult {
  int exit_code = -1;  // -1: ended by a signal
  int signal = 0;
  std::string output;
};

// Runs `minrnn ARGS` in `dir`, its files limited to `fsize_limit` bytes (0: no limit).
LimitedResult run_minrnn_limited(const fs::path& dir, const std::string& args,
                                 rlim_t fsize_limit = 0) {
  const std::string command = "exec '" + testing::minrnn_binary() + "' " + args;
  int out[2];
  if (::pipe(out) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    if (fsize_limit > 0) {
      // SIGXFSZ is left at its default (kill): minrnn must ignore it itself to report EFBIG.
      const rlimit rl{fsize_limit, fsize_limit};
      ::setrlimit(RLIMIT_FSIZE, &rl);
    }
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  LimitedResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.output.append(buf, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

using minrnn::testing::read_text;

std::vector<std::string> temp_files(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().string().find(".tmp") != std::string::npos) found.push_back(e.path().string());
  return found;
}

void expect_clean_failure(const LimitedResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << ":\n" << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const auto& part : parts)
    EXPECT_NE(r.output.find(part), std::string::npos) << "no '" << part << "' in:\n" << r.output;
}

// Starts `minrnn ARGS` in `dir` with its output going into a pipe of one page that nobody reads:
// once its progress lines fill the pipe, the run stops in its tracks (it cannot finish), and the
// test kills it (kill -9) once `file` exists.
void run_and_kill_once_written(const fs::path& dir, const std::string& args, const fs::path& file) {
  const std::string command = "exec '" + testing::minrnn_binary() + "' " + args;
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  ::fcntl(out[1], F_SETPIPE_SZ, 4096);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(file) && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::close(out[0]);
      FAIL() << "minrnn " << args << " ended (status " << status << ") before writing " << file;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  ASSERT_TRUE(fs::exists(file)) << "no " << file << " within 120 s";
}

TEST(Faults, CheckpointWriteOverTheSizeLimitKeepsTheLastCheckpointAndTheRunResumes) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn_limited(dir.path, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50")
          .exit_code,
      0);
  std::ofstream(dir.path / "c.yaml")
      << "dataset: d.hdf5\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
         "context_len: 5\nbatch_size: 4\nmax_steps: 200\nwarmup_steps: 1\neval_every: 0\n"
         "checkpoint_every: 20\nlog_every: 1\n";
  const fs::path run = dir.path / "run", ckpt = run / "checkpoint.pt";

  // 1. kill -9 after a checkpoint.
  run_and_kill_once_written(dir.path, "train c.yaml --run-dir run", ckpt);
  const rl::Agent before = rl::load_agent(ckpt.string(), torch::kCPU);
  ASSERT_GT(before.step, 0);
  ASSERT_LT(before.step, 200);
  const std::string saved = read_text(ckpt);

  // 2. Resumed under a size limit smaller than a checkpoint: the next checkpoint cannot be
  // written. metrics.csv (a few kB) and config.yaml stay under it.
  const LimitedResult limited =
      run_minrnn_limited(dir.path, "train c.yaml --run-dir run --quiet", saved.size() / 2);
  expect_clean_failure(limited, {"run/checkpoint.pt", "File too large", "unchanged"});
  EXPECT_EQ(read_text(ckpt), saved) << "the last good checkpoint changed";
  EXPECT_EQ(temp_files(dir.path), std::vector<std::string>{});
  EXPECT_EQ(rl::load_agent(ckpt.string(), torch::kCPU).step, before.step);
  EXPECT_FALSE(fs::exists(run / "done.json"));

  // 3. Without the limit the same command resumes from that checkpoint and finishes.
  const LimitedResult resumed = run_minrnn_limited(dir.path, "train c.yaml --run-dir run");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("from step " + std::to_string(before.step)), std::string::npos)
      << resumed.output;
  EXPECT_TRUE(fs::exists(run / "done.json"));
  EXPECT_EQ(rl::load_agent(ckpt.string(), torch::kCPU).step, 200);
  EXPECT_EQ(temp_files(dir.path), std::vector<std::string>{});
}

TEST(Faults, DatasetWriteOverTheSizeLimitKeepsThePreviousFile) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn_limited(dir.path, "data synth d.hdf5 --env hopper --steps 300 --episode-len 100")
          .exit_code,
      0);
  const std::string old_bytes = read_text(dir.path / "d.hdf5");

  const LimitedResult limited = run_minrnn_limited(
      dir.path, "data synth d.hdf5 --env hopper --steps 20000 --episode-len 100 --overwrite",
      2 * old_bytes.size());
  expect_clean_failure(limited, {"d.hdf5", "File too large", "unchanged"});
  EXPECT_EQ(read_text(dir.path / "d.hdf5"), old_bytes);
  EXPECT_EQ(temp_files(dir.path), std::vector<std::string>{});
  const LimitedResult inspect = run_minrnn_limited(dir.path, "data inspect d.hdf5 --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_EQ(nlohmann::json::parse(inspect.output)["steps"], 300);

  ASSERT_EQ(
      run_minrnn_limited(
          dir.path, "data synth d.hdf5 --env hopper --steps 20000 --episode-len 100 --overwrite")
          .exit_code,
      0);
  const LimitedResult again = run_minrnn_limited(dir.path, "data inspect d.hdf5 --json");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(nlohmann::json::parse(again.output)["steps"], 20000);
}

// A dataset whose folder cannot be made (a file in the way) names the file and why, and leaves
// nothing behind. A missing folder is made, as collect's --out's is.
TEST(Faults, DatasetWhoseFolderCannotBeMadeNamesTheFileAndTheReason) {
  TempDir dir;
  testing::write_text(dir.path / "no", "a file where a folder would be made\n");
  const LimitedResult r = run_minrnn_limited(
      dir.path, "data synth no/such/dir/e.hdf5 --env hopper --steps 300 --episode-len 100");
  expect_clean_failure(r,
                       {"cannot write no/such/dir/e.hdf5: its folder no is a file, not a folder"});
}

// A switch in the environment (MINRNN_SIDE_WORK, MINRNN_STACKED_PACK: 0 or 1) with another value
// is refused naming it, before any run dir is made — alone and as a pack.
TEST(Faults, ABadSwitchInTheEnvironmentIsRefusedBeforeAnyRunDir) {
  const TempDir dir;
  const std::string data = testing::write_hopper_dataset(dir.path, 300);
  testing::write_text(dir.path / "c.yaml", "dataset: " + data +
                                               "\nenv: hopper\nbackbone: mingru\nmax_steps: 5\n"
                                               "eval_every: 0\nembed_dim: 16\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"MINRNN_SIDE_WORK=yes", "--seed 0 --run-dir run0"},
      {"MINRNN_STACKED_PACK=2", "--seed 0,1 --run-dir run0 --run-dir run1"}};
  for (const auto& [env, args] : cases) {
    SCOPED_TRACE(env);
    const testing::CommandResult r =
        testing::run_command("cd '" + dir.path.string() + "' && " + env + " '" +
                             testing::minrnn_binary() + "' train c.yaml " + args + " --quiet");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(env + ": expected 1"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir.path / "run0"));
  }
}

}  // namespace
}  // namespace minrnn
