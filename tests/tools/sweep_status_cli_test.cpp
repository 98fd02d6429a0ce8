// `minrnn sweep SWEEP.yaml --status` exits 1 when some run failed, as the sweep itself does, so
// that a script can tell, printing nothing more (an audit of the Slurm backend, 2026-11-28).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/paths.h"
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

}  // namespace
}  // namespace minrnn
