// A Slurm sweep's batch script killed outright (SIGKILL: an OOM kill, a node agent, `kill -9`)
// takes its `minrnn train` down with it: minrnn gets SIGTERM from the kernel, checkpoints and exits
// 75, rather than training on outside its job (an audit of the Slurm backend, 2026-11-28). The
// script runs here under bash, as a Slurm task would, without a cluster.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "io/dir_lock.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tests/rl/fixtures.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::read_text;

TEST(SlurmTask, ItsMinrnnDiesWithTheBatchScript) {
  testing::TempDir dir;
  ASSERT_EQ(testing::run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 600 --episode-len 100")
                .exit_code,
            0);
  std::ofstream(dir.path / "c.yaml")
      << "dataset: " << (dir.path / "d.hdf5").string()
      << "\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\ncontext_len: 5\n"
         "batch_size: 8\nmax_steps: 100000\nwarmup_steps: 5\neval_every: 0\neval_episodes: 1\n"
         "checkpoint_every: 100000\nlog_every: 1\ntarget_return: 3600\ndropout: 0.1\n";
  sweep::SweepSpec s = sweep::parse_sweep(
      "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: " + (dir.path / "c.yaml").string() +
          "\nout: " + (dir.path / "sw").string() + "\neval_episodes: 1\n",
      (dir.path / "s.yaml").string());
  const auto runs = sweep::plan_sweep(s);
  const fs::path script = dir.path / "sweep.sbatch", run = runs[0].run_dir;
  std::ofstream(script) << sweep::slurm_batch_script(s, runs, {{0}}, testing::minrnn_binary());

  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // minrnn, orphaned, becomes this test's child to reap
  const pid_t bash = ::fork();
  if (bash == 0) {
    ::setenv("SLURM_ARRAY_TASK_ID", "0", 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execl("/bin/bash", "bash", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  long trainer = -1;
  ASSERT_TRUE(testing::wait_for(
      [&] {
        trainer = io::lock_holder(run.string());
        return trainer > 0 && testing::last_logged_step(run) >= 3;
      },
      120))
      << read_text(run / "train.log");
  ::kill(bash, SIGKILL);
  ::waitpid(bash, nullptr, 0);
  int status = 0;
  bool exited = testing::wait_for(
      [&] { return ::waitpid(pid_t(trainer), &status, WNOHANG) == pid_t(trainer); }, 60);
  if (!exited) {  // still training outside its job: stop it for the next test
    ::kill(pid_t(trainer), SIGKILL);
    ::waitpid(pid_t(trainer), &status, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_TRUE(exited) << "minrnn train went on after its batch script was killed";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 75) << status;
  EXPECT_TRUE(fs::exists(run / "checkpoint.pt"));
}

}  // namespace
}  // namespace minrnn
