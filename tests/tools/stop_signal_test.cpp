// A clean stop, for real: a `minrnn` child process gets SIGTERM or SIGINT mid-run, finishes its
// step, writes its checkpoint and exits 75; running the same command again resumes there. Training
// resumed this way ends with exactly the weights of an uninterrupted run (CPU), and a sweep stopped
// by Ctrl-C takes its runs down the same way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
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

using testing::read_text;
// `minrnn ARGS` in `dir`, output to `log` (stdout to `out_fd` where one is given), one torch
// thread, in a process group of its own (so a test can Ctrl-C it as a terminal would: SIGINT to
// the whole group); `ignore_hangup`: as `nohup` starts it.
pid_t start_minrnn(const TempDir& dir, const std::vector<std::string>& args, const fs::path& log,
                   int out_fd = -1, bool ignore_hangup = false) {
  const std::string minrnn = testing::minrnn_binary();
  std::vector<char*> argv = {const_cast<char*>(minrnn.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::chdir(dir.path.c_str()) != 0) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(out_fd >= 0 ? out_fd : fd, 1);
    ::dup2(fd, 2);
    if (ignore_hangup) ::signal(SIGHUP, SIG_IGN);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execv(minrnn.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs to the end; its exit status.
int run_minrnn_logged(const TempDir& dir, const std::vector<std::string>& args,
                      const fs::path& log) {
  return wait_exit(start_minrnn(dir, args, log));
}

using testing::last_logged_step;
using testing::wait_for;

// The pid of a child process of `parent` (a sweep's `minrnn train`), or -1.
pid_t child_of(pid_t parent) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');  // the command's name may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

// d.hdf5: 600 steps of hopper data in episodes of 100, what write_config's runs train on.
void synth_data(const TempDir& dir, const fs::path& log) {
  ASSERT_EQ(run_minrnn_logged(dir,
                              {"data", "synth", "d.hdf5", "--env", "hopper", "--steps", "600",
                               "--episode-len", "100"},
                              log),
            0)
      << read_text(log);
}

// A tiny agent that logs every step and checkpoints only at its end: the only checkpoint a stop
// can resume from is the one the signal makes.
void write_config(const TempDir& dir, int max_steps) {
  std::ofstream(dir.path / "c.yaml")
      << "dataset: d.hdf5\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
         "context_len: 5\nbatch_size: 8\nmax_steps: "
      << max_steps
      << "\nwarmup_steps: 5\neval_every: 0\neval_episodes: 1\ncheckpoint_every: 100000\n"
         "log_every: 1\ntarget_return: 3600\ndropout: 0.1\n";
}

TEST(StopSignal, TrainStoppedBySigtermResumesToTheWeightsOfAnUninterruptedRun) {
  TempDir dir;
  const fs::path log = dir.path / "out.log";
  ASSERT_NO_FATAL_FAILURE(synth_data(dir, log));
  const int max_steps = 1000;
  write_config(dir, max_steps);
  const std::vector<std::string> train = {"train",     "c.yaml", "--seed", "1",
                                          "--run-dir", "a",      "--quiet"};
  const pid_t child = start_minrnn(dir, train, log);
  ASSERT_TRUE(wait_for([&] { return last_logged_step(dir.path / "a") >= 20; }, 120))
      << read_text(log);
  ::kill(child, SIGTERM);
  ASSERT_EQ(wait_exit(child), 75) << read_text(log);
  const std::string text = read_text(log);
  EXPECT_NE(text.find("stopped by SIGTERM at step "), std::string::npos) << text;
  const int64_t stopped_at = rl::load_agent((dir.path / "a").string()).step;
  EXPECT_GE(stopped_at, 20);
  ASSERT_LT(stopped_at, max_steps) << "finished before the signal: make the run longer";
  EXPECT_EQ(last_logged_step(dir.path / "a"),
            stopped_at);  // the checkpoint is of the last step done
  EXPECT_FALSE(fs::exists(dir.path / "a/done.json"));

  ASSERT_EQ(run_minrnn_logged(dir, train, log), 0) << read_text(log);
  EXPECT_NE(read_text(log).find("(resumed from step " + std::to_string(stopped_at) + ")"),
            std::string::npos)
      << read_text(log);
  ASSERT_EQ(
      run_minrnn_logged(dir, {"train", "c.yaml", "--seed", "1", "--run-dir", "b", "--quiet"}, log),
      0);
  testing::expect_same_weights(dir.path / "a", dir.path / "b");
}

// SAC training inside `minrnn collect`: Ctrl-C checkpoints it; the same command resumes and
// writes the dataset.
TEST(StopSignal, CollectStoppedByCtrlCResumesFromItsSacCheckpoint) {
  TempDir dir;
  const fs::path log = dir.path / "out.log";
  const std::vector<std::string> collect = {
      "collect",      "hopper", "medium-replay", "--train-steps", "1500",  "--start-steps", "300",
      "--eval-every", "100000", "--work-dir",    "work",          "--out", "m.hdf5"};
  const pid_t child = start_minrnn(dir, collect, log);
  // Its progress line says 1000 steps are done: well inside SAC's updates, before its end.
  ASSERT_TRUE(
      wait_for([&] { return read_text(log).find("1000/1500 steps") != std::string::npos; }, 240))
      << read_text(log);
  ::kill(-child, SIGINT);  // the terminal's Ctrl-C: the whole process group
  ASSERT_EQ(wait_exit(child), 75) << read_text(log);
  EXPECT_NE(read_text(log).find("stopped by SIGINT at SAC step"), std::string::npos)
      << read_text(log);
  EXPECT_TRUE(fs::exists(dir.path / "work/medium/sac.pt"));
  EXPECT_FALSE(fs::exists(dir.path / "work/medium/done.txt"));
  EXPECT_FALSE(fs::exists(dir.path / "m.hdf5"));

  ASSERT_EQ(run_minrnn_logged(dir, collect, log), 0) << read_text(log);
  EXPECT_NE(read_text(log).find("resuming from"), std::string::npos) << read_text(log);
  EXPECT_TRUE(fs::exists(dir.path / "m.hdf5"));
}

// Ctrl-C of a local sweep: the sweep and its training child both get SIGINT (one process group),
// the child checkpoints and exits 75, the sweep waits for it and exits 75 without counting a
// failure; SIGTERM to the sweep alone is passed on to the child the same way. The next sweep
// resumes and finishes.
TEST(StopSignal, SweepStoppedByCtrlCOrSigtermResumesItsRuns) {
  TempDir dir;
  const fs::path log = dir.path / "out.log";
  ASSERT_NO_FATAL_FAILURE(synth_data(dir, log));
  write_config(dir, 3000);
  std::ofstream(dir.path / "s.yaml") << "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\n"
                                        "config: c.yaml\nout: sw\neval_episodes: 1\n";
  const fs::path run = dir.path / "sw/d/mingru/seed0";
  int64_t last = 0;
  // SIGHUP to the group: the terminal closed (a walk, 2026-11-30: the sweep and its child died
  // of it, 129, every step since the last checkpoint lost).
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(signal == SIGTERM ? "SIGTERM to the sweep" : "SIGINT or SIGHUP to the group");
    const pid_t sweep = start_minrnn(dir, {"sweep", "s.yaml"}, log);
    ASSERT_TRUE(wait_for([&] { return last_logged_step(run) >= last + 20; }, 120))
        << read_text(log);
    ::kill(signal == SIGTERM ? sweep : -sweep, signal);
    ASSERT_EQ(wait_exit(sweep), 75) << read_text(log);
    EXPECT_NE(read_text(log).find("; 1 run(s) stopped after checkpointing. Run the same command"),
              std::string::npos)
        << read_text(log);
    EXPECT_FALSE(fs::exists(run / "failed.json"));
    const int64_t step = rl::load_agent(run.string()).step;
    EXPECT_GT(step, last);
    ASSERT_LT(step, 3000);
    last = step;
    EXPECT_NE(read_text(run / "train.log").find("stopped by SIG"), std::string::npos);
    ::unlink(log.c_str());
    ASSERT_EQ(run_minrnn_logged(dir, {"sweep", "s.yaml", "--status"}, log), 0);
    EXPECT_NE(read_text(log).find("stopped at step " + std::to_string(step) +
                                  " of 3000 (the sweep run again resumes it from its last "
                                  "checkpoint)"),
              std::string::npos)
        << read_text(log);
  }
  // A SIGTERM to the run alone (Slurm's, a user's kill): stopped, not failed, and the sweep, left
  // unfinished, exits 75 where it exited 0 (`sweep && report` went on with a cell missing).
  {
    const pid_t sweep = start_minrnn(dir, {"sweep", "s.yaml"}, log);
    ASSERT_TRUE(wait_for([&] { return last_logged_step(run) >= last + 20; }, 120))
        << read_text(log);
    const pid_t train = child_of(sweep);
    ASSERT_GT(train, 0);
    ::kill(train, SIGTERM);
    ASSERT_EQ(wait_exit(sweep), 75) << read_text(log);
    EXPECT_NE(read_text(log).find("1 run(s) stopped after checkpointing (a signal)"),
              std::string::npos)
        << read_text(log);
    EXPECT_FALSE(fs::exists(run / "failed.json"));
    last = rl::load_agent(run.string()).step;
  }
  // The next sweep resumes from the last checkpoint and finishes: trained, evaluated, not failed.
  ASSERT_EQ(run_minrnn_logged(dir, {"sweep", "s.yaml"}, log), 0) << read_text(log);
  EXPECT_TRUE(fs::exists(run / "eval.json"));
  EXPECT_NE(read_text(run / "train.log").find("(resumed from step " + std::to_string(last) + ")"),
            std::string::npos);
}

// `nohup minrnn train ...` ignores SIGHUP, and so does minrnn: a closed terminal ends nothing.
TEST(StopSignal, ANohupTrainIgnoresTheHangup) {
  TempDir dir;
  const fs::path log = dir.path / "out.log";
  ASSERT_NO_FATAL_FAILURE(synth_data(dir, log));
  write_config(dir, 300);
  const pid_t train = start_minrnn(dir, {"train", "c.yaml", "--run-dir", "a", "--quiet"}, log, -1,
                                   /*ignore_hangup=*/true);
  ASSERT_TRUE(wait_for([&] { return last_logged_step(dir.path / "a") >= 20; }, 120))
      << read_text(log);
  ::kill(-train, SIGHUP);
  ASSERT_EQ(wait_exit(train), 0) << read_text(log);
  EXPECT_TRUE(fs::exists(dir.path / "a/done.json"));
}

// A sweep whose stdout's reader is gone (`| head`, quitting `| less`, a Ctrl-C that ends `| tee`)
// stops as on Ctrl-C: exit 75, the word on stderr, the runs resumable (a walk, 2026-11-30: it died
// of SIGPIPE, 141, with no word).
TEST(StopSignal, ASweepWhoseOutputReaderLeftStopsCleanly) {
  TempDir dir;
  const fs::path log = dir.path / "out.log";
  ASSERT_NO_FATAL_FAILURE(synth_data(dir, log));
  write_config(dir, 60);
  std::ofstream(dir.path / "s.yaml") << "datasets: [d]\nbackbones: [mingru]\nseeds: [0, 1]\n"
                                        "config: c.yaml\nout: sw\neval_episodes: 1\n"
                                        "parallel: 1\npack: 1\n";
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);  // the sweep holds no read end of its own
  const pid_t sweep = start_minrnn(dir, {"sweep", "s.yaml"}, log, pipe_fds[1]);
  ::close(pipe_fds[1]);
  char first = 0;  // `| head -c 1`: one byte read, then gone
  ASSERT_EQ(::read(pipe_fds[0], &first, 1), 1);
  ::close(pipe_fds[0]);
  ASSERT_EQ(wait_exit(sweep), 75) << read_text(log);
  EXPECT_NE(read_text(log).find("minrnn sweep: stopped by SIGPIPE; "), std::string::npos)
      << read_text(log);
  ASSERT_EQ(run_minrnn_logged(dir, {"sweep", "s.yaml"}, log), 0) << read_text(log);
  EXPECT_TRUE(fs::exists(dir.path / "sw/d/mingru/seed1/eval.json"));
}

}  // namespace
}  // namespace minrnn
