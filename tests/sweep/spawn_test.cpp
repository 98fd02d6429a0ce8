// The processes a sweep starts: a run with its log and thread counts, and a command read for its
// output (sbatch, squeue), each started without the child allocating between fork and exec.
#include "sweep/spawn.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "io/isolated.h"
#include "tests/scoped_env.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

// A run's process: its command line first in its log, then its output; its thread counts those
// the sweep gave it, whatever this process's environment says.
TEST(Spawn, ARunLogsItsCommandAndGetsItsThreadCounts) {
  testing::TempDir tmp;
  const std::string log = (tmp.path / "run.log").string();
  int status = 0;
  {
    const testing::ScopedEnv threads("OMP_NUM_THREADS", "7");
    const testing::ScopedEnv kept("MINRNN_SPAWN_TEST", "kept");  // the rest of the environment too
    const pid_t pid = sweep::spawn(
        "/bin/sh",
        {"-c", "echo $OMP_NUM_THREADS $MKL_NUM_THREADS $MINRNN_SPAWN_TEST; echo err >&2"}, log, 3);
    status = io::wait_for_child(pid);
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(testing::read_text(log),
            "$ minrnn -c echo $OMP_NUM_THREADS $MKL_NUM_THREADS $MINRNN_SPAWN_TEST; echo err >&2\n"
            "3 3 kept\nerr\n");
  // A program that cannot be run says so in its log, exit 127.
  const std::string missing = (tmp.path / "no-minrnn").string();
  const int failed = io::wait_for_child(sweep::spawn(missing, {"train"}, log, 1));
  EXPECT_EQ(WEXITSTATUS(failed), 127);
  EXPECT_NE(
      testing::read_text(log).find("$ minrnn train\n" + missing + ": cannot run it (errno 2)\n"),
      std::string::npos)
      << testing::read_text(log);
}

TEST(Spawn, ACommandThatCannotRunSaysSo) {
  const sweep::CommandOutput r =
      sweep::run_command({"/nonexistent/sbatch", "--parsable"}, std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.err, "/nonexistent/sbatch: not found (errno 2)\n");
  const sweep::CommandOutput echo =
      sweep::run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(10));
  EXPECT_EQ(echo.exit_code, 3);
  EXPECT_EQ(echo.out, "out\n");
  EXPECT_EQ(echo.err, "err\n");
}

}  // namespace
}  // namespace minrnn
