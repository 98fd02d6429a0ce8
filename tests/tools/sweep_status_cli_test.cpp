// `minrnn sweep SWEEP.yaml --status` exits 1 when some run failed, as the sweep itself does, so
// that a script can tell, printing nothing more (an audit of the Slurm backend, 2026-11-28).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/paths.h"
#include "tests/rl/fixtures.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(CliSweepStatus, ExitsOneWithFailedRuns) {
  testing::TempDir dir;
  std::ofstream(dir.path / "s.yaml")
      << "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: " << testing::source_dir()
      << "/configs/tiny-hopper-mingru.yaml\nout: sw\n";
  const testing::CommandResult pending = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_EQ(pending.exit_code, 0) << pending.output;
  fs::create_directories(dir.path / "sw/d/mingru/seed0");
  std::ofstream(dir.path / "sw/d/mingru/seed0/failed.json")
      << "{\"phase\": \"train\", \"exit_code\": 1}\n";
  const testing::CommandResult failed = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("1 runs: 1 failed"), std::string::npos) << failed.output;
  // Nothing on stderr beside the JSON: a script may read both.
  const testing::CommandResult json = testing::run_minrnn(dir, "sweep s.yaml --status --json");
  EXPECT_EQ(json.exit_code, 1) << json.output;
  EXPECT_TRUE(nlohmann::json::accept(json.output)) << json.output;
}

// A sweep keeps the --set options it was started with: its later --status (and resume) without
// them find its runs its own, not every one "mismatched" (a walk, 2026-11-29: it had to repeat
// them). A key given again replaces its own; a damaged record is refused by name.
TEST(CliSweepStatus, ASweepKeepsTheSetOptionsItWasStartedWith) {
  testing::TempDir dir;
  const std::string data = testing::write_hopper_dataset(dir.path, 300);
  std::ofstream(dir.path / "s.yaml")
      << "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\neval_episodes: 1\nconfig: "
      << testing::source_dir() << "/configs/tiny-hopper-mingru.yaml\nout: sw\n";
  const std::string sets = "--set dataset=" + data + " --set max_steps=2";
  const testing::CommandResult ran = testing::run_minrnn(dir, "sweep s.yaml " + sets);
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const testing::CommandResult status = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("1 runs: 1 done"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("with the --set options it was started with (sw/sweep_sets.json): " +
                               sets),
            std::string::npos)
      << status.output;
  const testing::CommandResult json = testing::run_minrnn(dir, "sweep s.yaml --status --json");
  ASSERT_TRUE(nlohmann::json::accept(json.output)) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output)["command_sets"],
            nlohmann::json({"dataset=" + data, "max_steps=2"}));
  // A resume without them trains nothing again (it would refuse every run as another config's).
  const testing::CommandResult resumed = testing::run_minrnn(dir, "sweep s.yaml");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("1/1 done"), std::string::npos) << resumed.output;
  // A key given again replaces its own alone: the run trained to 2 steps is another config's.
  const testing::CommandResult other =
      testing::run_minrnn(dir, "sweep s.yaml --status --set max_steps=3");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find("(sw/sweep_sets.json): --set dataset=" + data + "\n"),
            std::string::npos)
      << other.output;
  EXPECT_NE(other.output.find("max_steps: 2 -> 3"), std::string::npos) << other.output;
  // Another sweep file sharing the out dir does not take them (two files, one `out`).
  fs::copy_file(dir.path / "s.yaml", dir.path / "t.yaml");
  const testing::CommandResult other_file = testing::run_minrnn(dir, "sweep t.yaml --status");
  EXPECT_NE(other_file.output.find("sw/sweep_sets.json holds the --set options of s.yaml, not of "
                                   "t.yaml: not used"),
            std::string::npos)
      << other_file.output;
  EXPECT_NE(other_file.output.find("1 mismatched"), std::string::npos) << other_file.output;
  // The file's own `set` of a key a kept --set replaces, edited since: the user says which value
  // (a walk, 2026-11-30: the recorded value won without a word of the file's).
  std::ofstream(dir.path / "s.yaml", std::ios::app) << "set: [max_steps=4]\n";
  const testing::CommandResult edited = testing::run_minrnn(dir, "sweep s.yaml");
  EXPECT_EQ(edited.exit_code, 2) << edited.output;
  const std::string changed =
      "the file's set max_steps=4 (none when started) under --set "
      "max_steps=2";
  EXPECT_NE(edited.output.find(changed), std::string::npos) << edited.output;
  // Where the command only looks (a review, 2026-11-30: --status refused a live sweep's monitor),
  // a note, and the sweep as it runs.
  const testing::CommandResult looked = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_EQ(looked.exit_code, 0) << looked.output;
  EXPECT_NE(looked.output.find("note: "), std::string::npos) << looked.output;
  EXPECT_NE(looked.output.find(changed), std::string::npos) << looked.output;
  EXPECT_NE(looked.output.find("1 runs: 1 done"), std::string::npos) << looked.output;
  const testing::CommandResult said =
      testing::run_minrnn(dir, "sweep s.yaml --dry-run --set max_steps=2");
  EXPECT_EQ(said.exit_code, 0) << said.output;
  // The file now says what the kept option says: nothing to choose.
  {
    std::string text = testing::read_text(dir.path / "s.yaml");
    text.replace(text.find("max_steps=4"), 11, "max_steps=2");
    std::ofstream(dir.path / "s.yaml") << text;
  }
  const testing::CommandResult agreed = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_EQ(agreed.output.find("has changed a key"), std::string::npos) << agreed.output;
  std::ofstream(dir.path / "sw/sweep_sets.json") << "{\"sets\": [\"max_steps\"]}\n";
  const testing::CommandResult damaged = testing::run_minrnn(dir, "sweep s.yaml --status");
  EXPECT_NE(damaged.exit_code, 0);
  EXPECT_NE(damaged.output.find("sw/sweep_sets.json: not a sweep's record of its --set options"),
            std::string::npos)
      << damaged.output;
}

}  // namespace
}  // namespace minrnn
