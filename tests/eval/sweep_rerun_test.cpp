// A sweep rerun never takes a run directory for one of its own unless it holds the sweep's config,
// and both phases of a run go to the config's device.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "eval/sweep.h"
#include "rl/config.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

const std::string kTiny = std::string(MINRNN_SOURCE_DIR) + "/configs/tiny-hopper-mingru.yaml";

eval::SweepSpec one_run_sweep(const fs::path& out) {
  eval::SweepSpec s =
      eval::parse_sweep("datasets: [d]\nbackbones: [mingru]\nseeds: [3]\n", "s.yaml");
  s.config_template = kTiny;
  s.sets = {"max_steps=5"};
  s.out = out.string();
  return s;
}

// A finished run dir as `minrnn train` + `minrnn eval` leave it, trained with these overrides.
fs::path finished_run(const fs::path& out, const std::vector<std::string>& sets) {
  const fs::path run = out / "d/mingru/seed3";
  fs::create_directories(run);
  std::ofstream(run / "config.yaml") << rl::to_yaml(rl::load_config(kTiny, sets));
  for (const char* f : {"done.json", "eval.json"}) std::ofstream(run / f) << "{}\n";
  return run;
}

TEST(SweepPlan, AFinishedRunWithTheSweepsConfigIsSkipped) {
  testing::TempDir tmp;
  finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  const auto runs = eval::plan_sweep(one_run_sweep(tmp.path / "out"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, eval::RunState::kDone);
}

TEST(SweepPlan, ARunTrainedWithAnotherConfigIsNeitherSkippedNorResumed) {
  testing::TempDir tmp;
  // The sweep's `set` said max_steps=1000 when this run was trained; now it says 5.
  const fs::path run =
      finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=1000", "seed=3"});
  try {
    eval::plan_sweep(one_run_sweep(tmp.path / "out"));
    FAIL() << "a run of another config would be reported as the sweep's";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string()), std::string::npos) << what;
    EXPECT_NE(what.find("max_steps: 1000 -> 5"), std::string::npos) << what;
  }
  // The same for an unfinished run (its seed differs: trained by another sweep's seed list).
  fs::remove(run / "done.json");
  std::ofstream(run / "config.yaml")
      << rl::to_yaml(rl::load_config(kTiny, {"backbone=mingru", "max_steps=5", "seed=0"}));
  EXPECT_THROW(eval::plan_sweep(one_run_sweep(tmp.path / "out")), std::invalid_argument);
}

// A stand-in for the minrnn binary that records each command line and succeeds.
fs::path recording_exe(const fs::path& dir) {
  const fs::path exe = dir / "fake-minrnn";
  std::ofstream(exe) << "#!/bin/sh\necho \"$@\" >> " << (dir / "calls.txt").string() << "\n";
  fs::permissions(exe, fs::perms::owner_all);
  return exe;
}

TEST(SweepRun, EvaluationRunsOnTheConfigsDeviceAndWritesTheRunsResult) {
  testing::TempDir tmp;
  eval::SweepSpec s = one_run_sweep(tmp.path / "out");
  s.sets.push_back("device=cuda");
  eval::SweepOptions opt;
  opt.exe = recording_exe(tmp.path).string();
  ::testing::internal::CaptureStdout();
  const int failed = eval::run_sweep(s, opt);
  ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(failed, 0);
  std::ifstream in(tmp.path / "calls.txt");
  std::string train, evaluate;
  std::getline(in, train);
  std::getline(in, evaluate);
  EXPECT_NE(train.find("--set device=cuda"), std::string::npos) << train;
  EXPECT_EQ(evaluate.rfind("eval ", 0), 0u) << evaluate;
  EXPECT_NE(evaluate.find("--device cuda"), std::string::npos) << evaluate;
  EXPECT_NE(evaluate.find("--replace"), std::string::npos) << evaluate;
}

}  // namespace
}  // namespace minrnn
