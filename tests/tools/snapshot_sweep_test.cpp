// scripts/snapshot-sweep.sh: a snapshot mirrors each run's text results, an extended run's kept
// *-step<N> files included, and never shows a run finished that is not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/paths.h"
#include "tests/run_command.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

const std::string kScript = minrnn::testing::source_dir() + "/scripts/snapshot-sweep.sh";

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

testing::CommandResult snapshot(const std::string& args) {
  return testing::run_command("bash '" + kScript + "' " + args);
}

TEST(SnapshotSweep, AnExtendedRunLeavesTheSnapshotUnfinishedWithItsEarlierResultsKept) {
  testing::TempDir tmp;
  const fs::path sweep = tmp.path / "sweep", snap = tmp.path / "snap";
  const fs::path run = sweep / "hopper-medium/mingru/seed0";
  write(run / "config.yaml", "max_steps: 10000\n");
  write(run / "metrics.csv", "step,loss\n10000,0.04\n");
  write(run / "done.json", "{\"step\": 10000}\n");
  write(run / "eval.json", "{\"mean_normalized\": 48.1}\n");
  write(run / "checkpoint.pt", "large");
  const std::string args = "'" + sweep.string() + "' '" + snap.string() + "'";
  auto r = snapshot(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path shot = snap / "hopper-medium/mingru/seed0";
  EXPECT_TRUE(fs::exists(shot / "done.json"));
  EXPECT_TRUE(fs::exists(shot / "eval.json"));
  EXPECT_FALSE(fs::exists(shot / "checkpoint.pt"));

  // `train --extend` moved the results aside and trains on.
  fs::rename(run / "done.json", run / "done-step10000.json");
  fs::rename(run / "eval.json", run / "eval-step10000.json");
  write(run / "config.yaml", "max_steps: 20000\n");
  write(run / "metrics.csv", "step,loss\n10000,0.04\n12000,0.03\n");
  r = snapshot(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(shot / "done.json")) << "the snapshot would show an unfinished run done";
  EXPECT_FALSE(fs::exists(shot / "eval.json"));
  EXPECT_TRUE(fs::exists(shot / "done-step10000.json"));
  EXPECT_TRUE(fs::exists(shot / "eval-step10000.json"));
  std::ifstream in(shot / "config.yaml");
  std::stringstream config;
  config << in.rdbuf();
  EXPECT_EQ(config.str(), "max_steps: 20000\n");

  // Restoring it elsewhere brings back no finished run, only what it kept of its shorter budget:
  // the sweep there trains it from the start, and a later snapshot still holds those results.
  r = snapshot("--restore '" + snap.string() + "' '" + (tmp.path / "elsewhere").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path there = tmp.path / "elsewhere/hopper-medium/mingru/seed0";
  EXPECT_TRUE(fs::exists(there / "done-step10000.json"));
  EXPECT_TRUE(fs::exists(there / "eval-step10000.json"));
  for (const char* name : {"done.json", "eval.json", "config.yaml", "metrics.csv"})
    EXPECT_FALSE(fs::exists(there / name)) << name;

  // A run trained again without its checkpoint (restored elsewhere) kept its curves as well.
  fs::rename(run / "metrics.csv", run / "metrics-step10000.csv");
  write(run / "evals-step10000.csv", "10000,1000,10,48,1\n");
  write(run / "metrics.csv", "step,loss\n100,0.5\n");
  r = snapshot(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(shot / "metrics-step10000.csv"));
  EXPECT_TRUE(fs::exists(shot / "evals-step10000.csv"));
}

// The --set options the sweep was started with go with its snapshot, and back with a restore
// (where the sweep there keeps its own): without them its --status finds every run mismatched.
TEST(SnapshotSweep, TheSweepsSetOptionsGoWithItsSnapshot) {
  testing::TempDir tmp;
  const fs::path sweep = tmp.path / "sweep", snap = tmp.path / "snap";
  write(sweep / "hopper-medium/mingru/seed0/config.yaml", "max_steps: 100\n");
  const std::string sets = "{\"sweep_file\": \"s.yaml\", \"sets\": [\"device=cuda\"]}\n";
  write(sweep / "sweep_sets.json", sets);
  ASSERT_EQ(snapshot("'" + sweep.string() + "' '" + snap.string() + "'").exit_code, 0);
  EXPECT_EQ(testing::read_text(snap / "sweep_sets.json"), sets);
  const fs::path there = tmp.path / "elsewhere";
  write(there / "sweep_sets.json", "theirs\n");
  ASSERT_EQ(snapshot("--restore '" + snap.string() + "' '" + there.string() + "'").exit_code, 0);
  EXPECT_EQ(testing::read_text(there / "sweep_sets.json"), "theirs\n");
  fs::remove(there / "sweep_sets.json");
  ASSERT_EQ(snapshot("--restore '" + snap.string() + "' '" + there.string() + "'").exit_code, 0);
  EXPECT_EQ(testing::read_text(there / "sweep_sets.json"), sets);
}

}  // namespace
}  // namespace minrnn
