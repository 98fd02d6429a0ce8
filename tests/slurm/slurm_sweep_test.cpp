// `minrnn sweep --backend slurm` against a real Slurm: scripts/slurm-local.sh starts a single-node
// cluster (slurmctld, slurmd, munged) for this process, the tests submit sweeps to it through the
// minrnn binary, and the cluster is stopped again by its pids at the end, whatever the tests did.
// Without root or without the packages the tests skip, saying why; under CI they fail instead. A
// watchdog child stops the cluster should this process die before its TearDown.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rl/trainer.h"
#include "tests/paths.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

using Result = testing::CommandResult;

Result shell(const std::string& command) {
  return testing::run_command(command);
}

using minrnn::testing::read_text;

// squeue and sacct are asked a few times a second at most.
bool wait_for(const std::function<bool()>& done, double seconds) {
  return testing::wait_for(done, seconds, 250);
}

// The cluster, shared by every test of this process.
std::string g_cluster_dir;
std::string g_skip_reason;

class SlurmCluster : public ::testing::Environment {
 public:
  void SetUp() override {
    g_cluster_dir =
        (fs::temp_directory_path() / ("minrnn-slurm-test-" + std::to_string(::getpid()))).string();
    const Result r = shell("bash '" + minrnn::testing::source_dir() +
                           "/scripts/slurm-local.sh' start '" + g_cluster_dir + "'");
    if (r.exit_code == 77) {
      g_skip_reason = r.output;
    } else if (r.exit_code != 0) {
      g_skip_reason = "FAILED: scripts/slurm-local.sh start exited " + std::to_string(r.exit_code) +
                      ":\n" + r.output;
    } else {
      started_ = true;
      ::setenv("SLURM_CONF", (g_cluster_dir + "/slurm.conf").c_str(), 1);
      start_watchdog();
    }
  }
  void TearDown() override {
    if (!started_) return;
    const Result r = shell(stop_command());
    std::printf("%s", r.output.c_str());
    if (watchdog_ > 0) {  // the daemons are stopped: release it without a second stop
      if (::write(watchdog_pipe_, "q", 1) < 0) {
      }
      ::close(watchdog_pipe_);
      ::waitpid(watchdog_, nullptr, 0);
    }
    TempDir::remove_tree(g_cluster_dir);
  }

 private:
  std::string stop_command() const {
    return "bash '" + minrnn::testing::source_dir() + "/scripts/slurm-local.sh' stop '" +
           g_cluster_dir + "'";
  }
  // TearDown does not run when this process is killed (a ctest timeout) or crashes: a child that
  // waits on a pipe only this process writes stops the daemons then, when the pipe closes
  // unwritten.
  void start_watchdog() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;  // minrnn children must not hold it open
    // Built before the fork: no allocation after it.
    const std::string command = stop_command() + " >/dev/null 2>&1; rm -rf '" + g_cluster_dir + "'";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[1]);
      char c = 0;
      ssize_t n;
      while ((n = ::read(fds[0], &c, 1)) < 0 && errno == EINTR) {
      }
      if (n == 1) ::_exit(0);  // released by TearDown
      ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[0]);
    if (pid < 0) {
      ::close(fds[1]);
      return;
    }
    watchdog_ = pid;
    watchdog_pipe_ = fds[1];
  }

  bool started_ = false;
  pid_t watchdog_ = -1;
  int watchdog_pipe_ = -1;
};

// Skips (or, under CI, fails) when there is no cluster.
#define REQUIRE_CLUSTER()                                                        \
  do {                                                                           \
    if (!g_skip_reason.empty()) {                                                \
      if (g_skip_reason.rfind("FAILED", 0) == 0 || std::getenv("CI") != nullptr) \
        FAIL() << "no Slurm cluster: " << g_skip_reason;                         \
      GTEST_SKIP() << "no Slurm cluster: " << g_skip_reason;                     \
    }                                                                            \
  } while (0)

using testing::run_minrnn;

nlohmann::json status_of(const TempDir& dir) {
  const Result r = run_minrnn(dir, "sweep s.yaml --status --json 2>/dev/null");
  try {
    return nlohmann::json::parse(r.output);
  } catch (const std::exception&) {
    return nlohmann::json();
  }
}

int count_state(const nlohmann::json& status, const std::string& state) {
  if (!status.is_object()) return -1;
  return status["counts"].value(state, 0);
}

std::string job_of(const TempDir& dir) {
  return nlohmann::json::parse(read_text(dir.path / "sw/slurm/job.json"))["job_id"];
}

// A synthesized hopper dataset, a broken one (not HDF5: its runs fail in training; a missing one
// would make the sweep refuse to start), and a sweep file over the tiny config.
void write_sweep(const TempDir& dir, const std::string& runs, const std::string& sets) {
  ASSERT_EQ(
      run_minrnn(dir, "data synth hop.hdf5 --env hopper --steps 600 --episode-len 100").exit_code,
      0);
  std::ofstream(dir.path / "broken.hdf5") << "not an HDF5 file\n";
  std::ofstream(dir.path / "s.yaml")
      << runs << "config: " << minrnn::testing::source_dir() << "/configs/tiny-hopper-mingru.yaml\n"
      << "set: [" << sets << "]\nout: sw\neval_episodes: 1\n"
      << "slurm: {time: \"10:00\", cpus_per_task: 1, array_throttle: 2, signal_before: 30}\n";
}

// Four runs and four broken ones go through sbatch, the two seeds of each dataset × backbone in
// one task (`pack: 2`); a second submission while the array is queued is refused by job id; the
// broken runs fail, each with its log named, and are the only ones submitted again; `minrnn
// report` makes the table of the sweep directory.
TEST(SlurmSweep, ATinySweepRunsThroughSbatchAndReports) {
  REQUIRE_CLUSTER();
  TempDir dir;
  write_sweep(dir,
              "datasets: [hop, broken]\nbackbones: [mingru, minlstm]\nseeds: [0, 1]\npack: 2\n",
              "\"dataset={dataset}.hdf5\", max_steps=40, embed_dim=16, log_every=10");
  Result submit = run_minrnn(dir, "sweep s.yaml --backend slurm");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  EXPECT_NE(submit.output.find("submitted Slurm job"), std::string::npos) << submit.output;
  const std::string job = job_of(dir);
  EXPECT_TRUE(fs::exists(dir.path / "sw/slurm/sweep.sbatch"));

  // Its tasks not started yet are held, so that the array is still queued when it is submitted
  // again (on a loaded machine the whole array once ran before the second submission looked).
  shell("scontrol hold " + job);
  const Result again = run_minrnn(dir, "sweep s.yaml --backend slurm");
  shell("scontrol release " + job);
  EXPECT_NE(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("Slurm job " + job), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("already submitted"), std::string::npos) << again.output;

  nlohmann::json status;
  ASSERT_TRUE(wait_for(
      [&] {
        status = status_of(dir);
        return count_state(status, "done") == 4 && count_state(status, "failed") == 4;
      },
      300))
      << status.dump(2) << "\n"
      << shell("squeue").output;
  for (const auto& r : status["runs"]) {
    if (r["dataset"] == "broken") {
      EXPECT_EQ(r["failure"], "train exit 1") << r.dump();
      // Seed 0's log holds the pack's training; seed 1's names it.
      const std::string log = read_text(dir.path / r["log"].get<std::string>());
      EXPECT_NE(log.find(r["seed"] == 0 ? "broken.hdf5" : "seed0/train.log"), std::string::npos)
          << log;
    }
  }
  const Result table = run_minrnn(dir, "report sw");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::string md = read_text(dir.path / "sw/table3.md");
  EXPECT_NE(md.find("mingru"), std::string::npos) << md;
  EXPECT_NE(md.find("minlstm"), std::string::npos) << md;

  // Only the failed runs are submitted again: runs 2, 3, 6 and 7 of the (seed-major) plan, in
  // the packs of tasks 2 and 3.
  wait_for([&] { return shell("squeue -h -j " + job).output.empty(); }, 60);
  submit = run_minrnn(dir, "sweep s.yaml --backend slurm");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  EXPECT_NE(submit.output.find("--array=2-3%2"), std::string::npos) << submit.output;
  shell("scancel " + job_of(dir));
}

// A space, a quote and a '%' in `out` (an audit of the Slurm backend, 2026-11-28): sbatch takes the
// quoted #SBATCH lines, the task runs, and its log is where the script says, '%' and all.
TEST(SlurmSweep, AnOutWithASpaceAQuoteAndAPercentRuns) {
  REQUIRE_CLUSTER();
  TempDir dir;
  write_sweep(dir, "datasets: [hop]\nbackbones: [mingru]\nseeds: [0]\n",
              "\"dataset={dataset}.hdf5\", max_steps=10, embed_dim=16, log_every=10");
  const Result submit = run_minrnn(dir, "sweep s.yaml --backend slurm --out \"s w'%x\"");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  const fs::path out = dir.path / "s w'%x";
  const std::string job = nlohmann::json::parse(read_text(out / "slurm/job.json"))["job_id"];
  ASSERT_TRUE(wait_for([&] { return fs::exists(out / "hop/mingru/seed0/eval.json"); }, 300))
      << shell("squeue").output << read_text(out / "hop/mingru/seed0/train.log");
  EXPECT_TRUE(fs::exists(out / "slurm/logs" / (job + "_0.out")))
      << shell("ls -R '" + out.string() + "'").output;
}

// `--extend` through Slurm: a finished sweep given a larger max_steps trains on from each run's
// checkpoint in a new array, keeps what the shorter budget reported under its step, and is
// evaluated again at the new budget.
TEST(SlurmSweep, ExtendTrainsAFinishedSweepFurtherThroughSbatch) {
  REQUIRE_CLUSTER();
  TempDir dir;
  write_sweep(dir, "datasets: [hop]\nbackbones: [mingru]\nseeds: [0]\n",
              "\"dataset={dataset}.hdf5\", max_steps=20, embed_dim=16, log_every=10");
  ASSERT_EQ(run_minrnn(dir, "sweep s.yaml --backend slurm").exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return count_state(status_of(dir), "done") == 1; }, 300))
      << status_of(dir).dump(2) << shell("squeue").output;
  const fs::path run = dir.path / "sw/hop/mingru/seed0";
  wait_for([&] { return shell("squeue -h -j " + job_of(dir)).output.empty(); }, 60);

  const Result refused = run_minrnn(dir, "sweep s.yaml --backend slurm --set max_steps=40");
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("--extend"), std::string::npos) << refused.output;
  const Result extend = run_minrnn(dir, "sweep s.yaml --backend slurm --set max_steps=40 --extend");
  ASSERT_EQ(extend.exit_code, 0) << extend.output;
  ASSERT_TRUE(wait_for(
      [&] {
        const auto st =
            run_minrnn(dir, "sweep s.yaml --set max_steps=40 --status --json 2>/dev/null");
        try {
          return nlohmann::json::parse(st.output)["counts"].value("done", 0) == 1;
        } catch (const std::exception&) {
          return false;
        }
      },
      300))
      << read_text(run / "train.log") << shell("squeue").output;
  EXPECT_NE(read_text(run / "done.json").find("\"step\": 40"), std::string::npos);
  EXPECT_TRUE(fs::exists(run / "done-step20.json"));
  EXPECT_TRUE(fs::exists(run / "eval-step20.json"));
  EXPECT_TRUE(fs::exists(run / "checkpoint-step20.pt"));
  EXPECT_EQ(nlohmann::json::parse(read_text(run / "eval.json"))["train_step"], 40);
  shell("scancel " + job_of(dir));
}

// The step --status gives the sweep's one run (0 before it has one).
int64_t status_step(const TempDir& dir) {
  const nlohmann::json s = status_of(dir);
  return s.is_object() ? s["runs"][0]["step"].get<int64_t>() : 0;
}

// How many times the run's train.log says SIGTERM stopped it.
int sigterm_stops(const fs::path& run) {
  const std::string log = read_text(run / "train.log");
  int n = 0;
  for (size_t at = log.find("stopped by SIGTERM"); at != std::string::npos;
       at = log.find("stopped by SIGTERM", at + 1))
    ++n;
  return n;
}

// Once the run is 20 steps past `*stopped_at`, stops its task `how` (a Slurm command given the
// task's id) and sees it checkpoint (its `stops`-th SIGTERM), requeued and held back (the status
// says so), then started again; `*stopped_at` becomes the step it stopped at.
void stop_and_restart(const TempDir& dir, const std::string& task, const fs::path& run,
                      const std::string& how, int stops, int64_t max_steps, int64_t* stopped_at) {
  SCOPED_TRACE(how);
  ASSERT_TRUE(wait_for([&] { return status_step(dir) >= *stopped_at + 20; }, 180))
      << read_text(run / "train.log");
  const Result r = shell(how + task);
  ASSERT_EQ(r.exit_code, 0) << r.output << shell("squeue").output << status_of(dir).dump(2)
                            << read_text(run / "train.log");
  ASSERT_TRUE(wait_for([&] { return sigterm_stops(run) == stops; }, 60))
      << read_text(run / "train.log");
  *stopped_at = rl::load_agent(run.string()).step;
  ASSERT_LT(*stopped_at, max_steps) << "finished before the stop: make the run longer";
  // Requeued (by Slurm, or by the batch script itself), held back a while (BeginTime): the status
  // says so; then let it start now.
  ASSERT_TRUE(wait_for(
      [&] {
        const auto s = status_of(dir);
        return s.is_object() && s["runs"][0]["state"] == "stopped" &&
               s["runs"][0].value("slurm", "").find("PENDING") == 0;
      },
      60))
      << status_of(dir).dump(2);
  // Started again: seen running, or already past its stop (a fast machine can train the rest of
  // the run between two polls, and a finished task is no longer listed as RUNNING).
  ASSERT_TRUE(wait_for(
      [&] {
        shell("scontrol update JobId=" + task + " StartTime=now");
        const auto s = status_of(dir);
        return s.is_object() && (s["runs"][0].value("slurm", "").find("RUNNING") == 0 ||
                                 status_step(dir) > *stopped_at);
      },
      120))
      << shell("squeue").output << status_of(dir).dump(2);
}

// `run` ends with the weights of the same run trained here without an interruption.
void expect_weights_of_an_uninterrupted_run(const TempDir& dir, const fs::path& run,
                                            const std::string& sets) {
  const Result plain = run_minrnn(dir, "train " + minrnn::testing::source_dir() +
                                           "/configs/tiny-hopper-mingru.yaml --seed 0 "
                                           "--run-dir plain --quiet --set backbone=mingru " +
                                           sets);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const rl::Agent a = rl::load_agent(run.string()),
                  b = rl::load_agent((dir.path / "plain").string());
  EXPECT_EQ(a.step, b.step);
  auto pb = b.model->named_parameters();
  for (const auto& p : a.model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
}

// `scontrol requeue` of a training task (what preemption does): SIGTERM reaches minrnn train,
// which checkpoints and exits 75; the requeued task resumes from that checkpoint. Then the warning
// `--signal=B:USR1@N` gives before a time limit (sent by hand here): the batch script stops minrnn
// the same way and requeues its own task. The run finishes with the weights of an uninterrupted
// run, and is evaluated. (One test: each stop goes on from the last, in one Slurm job.)
TEST(SlurmSweep, APreemptedTaskResumesFromItsCheckpoint) {
  REQUIRE_CLUSTER();
  TempDir dir;
  const int max_steps = 12000;  // long enough that a resumed run cannot finish before the next stop
  write_sweep(dir, "datasets: [hop]\nbackbones: [mingru]\nseeds: [0]\n",
              "dataset=hop.hdf5, max_steps=" + std::to_string(max_steps) +
                  ", embed_dim=16, batch_size=8, log_every=1, checkpoint_every=100000");
  const Result submit = run_minrnn(dir, "sweep s.yaml --backend slurm");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  const std::string task = job_of(dir) + "_0";
  const fs::path run = dir.path / "sw/hop/mingru/seed0";
  int64_t stopped_at = 0;
  std::vector<int64_t> resumed_from;
  for (const char* how : {"scontrol requeue ", "scancel --batch --signal=USR1 "}) {
    ASSERT_NO_FATAL_FAILURE(stop_and_restart(dir, task, run, how, int(resumed_from.size()) + 1,
                                             max_steps, &stopped_at));
    resumed_from.push_back(stopped_at);
  }
  ASSERT_TRUE(wait_for([&] { return status_of(dir)["counts"].value("done", 0) == 1; }, 600))
      << read_text(run / "train.log") << shell("squeue").output;
  const std::string log = read_text(run / "train.log");
  for (const int64_t from : resumed_from)
    EXPECT_NE(log.find("(resumed from step " + std::to_string(from) + ")"), std::string::npos)
        << log;
  EXPECT_NE(log.find("restart 2"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(run / "eval.json"));
  expect_weights_of_an_uninterrupted_run(
      dir, run,
      "--set dataset=hop.hdf5 --set max_steps=" + std::to_string(max_steps) +
          " --set embed_dim=16 --set batch_size=8 --set log_every=1 "
          "--set checkpoint_every=100000");
}

}  // namespace
}  // namespace minrnn

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new minrnn::SlurmCluster);
  return RUN_ALL_TESTS();
}
