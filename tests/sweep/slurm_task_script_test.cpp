// What an array task's batch script does with its pack, run by bash with a stand-in minrnn: train
// when a run is not trained through (an extended one included), then evaluate each; a run the
// pack left short fails alone; a run another process holds is left to it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "io/dir_lock.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tests/sweep/slurm_fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::spec_in;
using testing::write_exe;

// A task trains when its run has no done.json, or when the run is to be extended (its done.json
// is the shorter budget's); otherwise it only evaluates.
TEST(SweepSlurmScript, AnExtendedRunTrainsDespiteItsDoneJson) {
  testing::TempDir tmp;
  const auto s = spec_in(tmp.path, "");
  auto runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 4u);
  runs[2].extend = true;
  const fs::path calls = tmp.path / "calls.txt", exe = tmp.path / "fake-minrnn";
  write_exe(exe, "echo \"$@\" >> '" + calls.string() + "'\n");
  const fs::path file = tmp.path / "x.sbatch";
  std::ofstream(file) << sweep::slurm_batch_script(s, runs, {{0}, {2}}, exe.string());
  for (int task : {0, 2}) {
    fs::create_directories(runs[size_t(task)].run_dir);
    // Run 0 trained through its 5 steps; run 2 through a shorter budget it is to extend.
    std::ofstream(fs::path(runs[size_t(task)].run_dir) / "done.json")
        << (task == 2 ? "{\"env_id\": \"Hopper-v4\", \"step\": 3}\n" : "{\"step\": 5}\n");
    fs::remove(calls);
    const std::string cmd = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " bash '" +
                            file.string() + "' >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << task;
    std::ifstream in(calls);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    if (task == 2) {
      EXPECT_EQ(first.rfind("train ", 0), 0u) << first;
      EXPECT_NE(first.find(" --extend"), std::string::npos) << first;
      EXPECT_EQ(second.rfind("eval ", 0), 0u) << second;
    } else {
      EXPECT_EQ(first.rfind("eval ", 0), 0u) << first;
      EXPECT_TRUE(second.empty()) << second;
    }
  }
}

// A task requeued after its evaluation ended (`scontrol requeue` of a finished task, a node's
// failure after the last write) keeps the result: a run whose eval.json is the sweep's (its
// episodes, at its budget, scored) is not evaluated again (walk 47: it was, and eval.json
// rewritten). One of other episodes, of a shorter budget or unscored (a NaN, written null) is.
TEST(SweepSlurmScript, ARunHoldingTheSweepsResultIsNotEvaluatedAgain) {
  testing::TempDir tmp;
  const auto s = spec_in(tmp.path, "");
  const auto runs = sweep::plan_sweep(s);
  const fs::path calls = tmp.path / "calls.txt", exe = tmp.path / "fake-minrnn";
  write_exe(exe, "echo \"$@\" >> '" + calls.string() + "'\n");
  const fs::path file = tmp.path / "x.sbatch";
  std::ofstream(file) << sweep::slurm_batch_script(s, runs, {{0}}, exe.string());
  const fs::path run = runs[0].run_dir;
  fs::create_directories(run);
  std::ofstream(run / "done.json") << "{\"step\": 5}\n";
  const std::string episodes = std::to_string(s.eval_episodes);
  const std::string other = std::to_string(s.eval_episodes + 1);
  for (const auto& [result, evaluates] :
       {std::pair{"{\n  \"episodes\": " + episodes +
                      ",\n  \"mean_normalized\": 51.5,\n"
                      "  \"train_step\": 5\n}\n",
                  false},
        std::pair{"{\"mean_normalized\": -2.5, \"episodes\": " + episodes + ", \"train_step\": 5}",
                  false},
        std::pair{"{\"mean_normalized\": 51.5, \"episodes\": " + other + ", \"train_step\": 5}",
                  true},
        std::pair{"{\"mean_normalized\": 51.5, \"episodes\": " + episodes + ", \"train_step\": 3}",
                  true},
        std::pair{"{\"mean_normalized\": null, \"episodes\": " + episodes + ", \"train_step\": 5}",
                  true}}) {
    std::ofstream(run / "eval.json") << result;
    fs::remove(calls);
    ASSERT_EQ(
        std::system(("SLURM_ARRAY_TASK_ID=0 bash '" + file.string() + "' >/dev/null 2>&1").c_str()),
        0);
    const std::string called = fs::exists(calls) ? read_text(calls) : "";
    EXPECT_EQ(called.rfind("eval ", 0) == 0, evaluates) << result << "\n" << called;
    EXPECT_EQ(called.find("train "), std::string::npos) << called;
  }
}

// `pack: 2`: the two seeds of each backbone are one array task (its first run's index), trained
// by one `minrnn train --seed 0 --run-dir A --seed 1 --run-dir B` and then evaluated one by one.
// A run the pack's training left short of its budget fails alone: it gets failed.json, the other
// is evaluated, and the task exits 1. So too where the pack extends runs that each hold the
// shorter budget's done.json (a walk, 2026-11-30: every run of such a pack was failed).
class SweepSlurmPack : public ::testing::TestWithParam<bool> {};

TEST_P(SweepSlurmPack, APackIsOneTaskAndARunThatFailsFailsAlone) {
  const bool extend = GetParam();
  testing::TempDir tmp;
  auto s = spec_in(tmp.path);
  s.pack = 2;
  auto runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 4u);
  for (auto& run : runs) {
    run.extend = extend;
    if (!extend) continue;
    fs::create_directories(run.run_dir);
    std::ofstream(fs::path(run.run_dir) / "done.json") << "{\"step\": 3}\n";
  }
  const auto packs = sweep::group_packs(s, runs, {0, 1, 2, 3});
  ASSERT_EQ(packs, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));  // the plan is seed-major
  // A stand-in minrnn: training finishes only the first --run-dir it is given (to its 5 steps),
  // then fails.
  const fs::path calls = tmp.path / "calls.txt", exe = tmp.path / "fake-minrnn";
  write_exe(exe,
            "echo \"$@\" >> '" + calls.string() +
                "'\n"
                "if [ \"$1\" = train ]; then\n"
                "  while [ \"$1\" != --run-dir ]; do shift; done\n"
                "  echo '{\"env_id\": \"Hopper-v4\", \"step\": 5}' > \"$2/done.json\"; exit 1\n"
                "fi\n");
  const fs::path file = tmp.path / "x.sbatch";
  const std::string script = sweep::slurm_batch_script(s, runs, packs, exe.string());
  std::ofstream(file) << script;
  EXPECT_NE(script.find("#SBATCH --array=0-1\n"), std::string::npos) << script;
  const std::string cmd = "SLURM_ARRAY_TASK_ID=1 bash '" + file.string() + "' >/dev/null 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);

  std::ifstream in(calls);
  std::string train, eval, more;
  std::getline(in, train);
  std::getline(in, eval);
  std::getline(in, more);
  EXPECT_NE(train.find("--seed 0 --run-dir " + fs::absolute(runs[1].run_dir).string() +
                       " --seed 1 --run-dir " + fs::absolute(runs[3].run_dir).string()),
            std::string::npos)
      << train;
  EXPECT_EQ(eval, "eval " + fs::absolute(runs[1].run_dir).string() +
                      " --episodes 10 --device cpu --replace");
  EXPECT_TRUE(more.empty()) << more;
  EXPECT_FALSE(fs::exists(fs::path(runs[1].run_dir) / "failed.json"));
  const auto failed = nlohmann::json::parse(read_text(fs::path(runs[3].run_dir) / "failed.json"));
  EXPECT_EQ(failed["phase"], "train");
  EXPECT_EQ(failed["exit_code"], 1);
  EXPECT_NE(read_text(fs::path(runs[3].run_dir) / "train.log").find(runs[1].run_dir),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(SweepSlurmScript, SweepSlurmPack, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Extended" : "New"; });

// A task whose `minrnn train` a run's lock refused (a user's own train holds it on the shared
// folder) leaves that run to its holder: no failed.json, no evaluation, exit 73 (io::kExitDirBusy).
TEST(SweepSlurmScript, ATrainRefusedByARunsLockIsLeftToItsHolder) {
  testing::TempDir tmp;
  auto s = spec_in(tmp.path);
  const auto runs = sweep::plan_sweep(s);
  const fs::path calls = tmp.path / "calls.txt", exe = tmp.path / "busy-minrnn";
  write_exe(exe, "echo \"$@\" >> '" + calls.string() + "'\nexit " +
                     std::to_string(io::kExitDirBusy) + "\n");
  const fs::path file = tmp.path / "x.sbatch";
  std::ofstream(file) << sweep::slurm_batch_script(s, runs, {{0}}, exe.string());
  const std::string cmd = "SLURM_ARRAY_TASK_ID=0 bash '" + file.string() + "' >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == io::kExitDirBusy) << status;
  EXPECT_EQ(testing::lines_of(read_text(calls)).size(), 1u) << read_text(calls);  // train alone
  EXPECT_FALSE(fs::exists(fs::path(runs[0].run_dir) / "failed.json"));
}

}  // namespace
}  // namespace minrnn
