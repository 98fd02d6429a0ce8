// `minrnn sweep --estimate` as a user runs it: after `minrnn bench pack` on the same machine, the
// CSV the bench wrote is what the estimate reads, and it starts nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/run_command.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::run_minrnn;

// Two seeds of a small agent (embed 16, 1 layer, B 4, K 5) for 50 steps each, on the CPU.
void write_sweep(const testing::TempDir& dir) {
  testing::write_text(dir.path / "agent.yaml",
                      "dataset: d.hdf5\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
                      "context_len: 5\nbatch_size: 4\nmax_steps: 50\nwarmup_steps: 1\n"
                      "eval_every: 0\ndevice: cpu\n");
  testing::write_text(dir.path / "s.yaml",
                      "datasets: [d]\nbackbones: [mingru]\nseeds: [0, 1]\nconfig: agent.yaml\n"
                      "out: out\n");
}

TEST(CliEstimate, ReadsWhatBenchPackWroteAndStartsNothing) {
  testing::TempDir dir;
  write_sweep(dir);
  const auto bench =
      run_minrnn(dir,
                 "bench pack --device cpu --backbones mingru --packs 1 --seconds 0.2 "
                 "--embed 16 --layers 1 --batch 4 --context 5");
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  const auto r = run_minrnn(dir, "sweep s.yaml --estimate --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["packs"], 2);  // one run a process on the CPU
  ASSERT_EQ(j["training"].size(), 1u);
  EXPECT_EQ(j["training"][0]["run_steps"], 100);
  EXPECT_EQ(j["training"][0]["measured_pack"], 1);
  EXPECT_EQ(j["train_lines_unmeasured"], 0);
  const double rate = j["training"][0]["run_steps_per_s"];
  EXPECT_GT(rate, 0);
  EXPECT_DOUBLE_EQ(j["train_seconds"].get<double>(), 100 / rate);
  EXPECT_EQ(j["rates"], nlohmann::json::array({"runs/bench/pack.csv"}));
  EXPECT_FALSE(fs::exists(dir.path / "out"));

  const auto text = run_minrnn(dir, "sweep s.yaml --estimate");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  testing::expect_output_naming(
      text, {"Estimate for s.yaml on cpu", "Training, the device's time",
             "minrnn bench eval --env hopper --embed 16 --layers 1 --context 5"});
}

// `bench pack --stacked`: a pack of two as one stacked model (rl/stacked_pack.h), its row named so
// (the estimate reads a stacked pack's rate from such rows).
TEST(CliEstimate, BenchPackTimesAStackedPack) {
  testing::TempDir dir;
  const auto bench = run_minrnn(dir,
                                "bench pack --device cpu --backbones mingru --packs 2 --stacked "
                                "--seconds 0.2 --embed 16 --layers 1 --batch 4 --context 5 "
                                "--no-append --csv stacked.csv");
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  const std::string csv = testing::read_text(dir.path / "stacked.csv");
  EXPECT_NE(csv.find(",mingru,stacked eager,2,4,5,16,1,"), std::string::npos) << csv;
  testing::expect_output_naming(bench, {"--stacked", "as one stacked model"});
}

// A finished sweep needs no rates to say that nothing is left (a docs walk, 2026-11-29: it asked
// for runs/bench/pack.csv).
TEST(CliEstimate, AFinishedSweepSaysNothingIsLeftWithoutRates) {
  testing::TempDir dir;
  write_sweep(dir);
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 50").exit_code, 0);
  const auto sweep = run_minrnn(dir, "sweep s.yaml --set max_steps=5 --set eval_episodes=1");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  const auto r = run_minrnn(dir, "sweep s.yaml --set max_steps=5 --set eval_episodes=1 --estimate");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  testing::expect_output_naming(r, {"0 of 2 runs left", "Nothing left to run"});
}

TEST(CliEstimate, ItsOptionsAreCheckedAndAMissingRatesFileNamed) {
  testing::TempDir dir;
  write_sweep(dir);
  testing::expect_failure_naming(run_minrnn(dir, "sweep s.yaml --estimate --rates nope.csv"),
                                 {"nope.csv: no such CSV file"});
  testing::expect_failure_naming(run_minrnn(dir, "sweep s.yaml --estimate"),
                                 {"runs/bench/pack.csv", "minrnn bench pack", "--rates"});
  const auto json_alone = run_minrnn(dir, "sweep s.yaml --json");
  EXPECT_EQ(json_alone.exit_code, 2) << json_alone.output;
  testing::expect_output_naming(json_alone, {"--json goes with --status or --estimate"});
  testing::expect_failure_naming(run_minrnn(dir, "sweep s.yaml --rates x.csv"), {"--estimate"});
  testing::expect_failure_naming(run_minrnn(dir, "sweep s.yaml --estimate --dry-run"),
                                 {"--dry-run"});
  const auto both = run_minrnn(dir, "sweep s.yaml --dry-run --status");  // one was dropped
  EXPECT_EQ(both.exit_code, 2) << both.output;
  testing::expect_output_naming(both, {"--status"});
  EXPECT_FALSE(fs::exists(dir.path / "out"));
}

}  // namespace
}  // namespace minrnn
