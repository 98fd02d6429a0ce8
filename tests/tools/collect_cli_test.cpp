// `minrnn collect` as a user runs it: its --out checked before any training or sampling, and a
// SAC work dir reused only for the same training. The other commands' wiring is cli_test.cpp's.
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::expect_failure_naming;
using testing::read_text;
using testing::run_minrnn;
using testing::TempDir;
using testing::write_text;
using CliResult = testing::CommandResult;
namespace fs = std::filesystem;

// Collect's --out is checked before any training or sampling: a file named for another env (read,
// and refused, as that env's data) or another quality, a folder for a D4RL file, a folder nothing
// can be written in, a Minari --out holding something else; SAC's options only where SAC trains.
TEST(Cli, CollectChecksItsOutBeforeAnyWork) {
  TempDir dir;
  const std::string sac =
      "collect walker2d medium --train-steps 300 --start-steps 200 --eval-every 300 ";
  fs::create_directories(dir.path / "folder.hdf5");
  write_text(dir.path / "afile", "mine\n");
  for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
           {"--out hopper_mislabeled-v2.hdf5",
            "--out hopper_mislabeled-v2.hdf5 names hopper but this collects Walker2d-v4: name the "
            "file for walker2d"},
           {"--out folder.hdf5 --force", "--out folder.hdf5 is a folder"},
           {"--out /proc/w.hdf5", "--out /proc/w.hdf5: cannot write it: its folder /proc "},
           // A path through a file (a raw "filesystem error" before), '' (the default was written).
           {"--out afile/w.hdf5",
            "--out afile/w.hdf5: cannot write it: its folder afile is a file, not a folder"},
           {"--out ''",
            "--out: expected a file name (or with --format minari a directory), got ''"},
           {"--out w.hdf5 --work-dir ''", "--work-dir: expected a directory, got ''"},
           // A folder is said to be one, not "exists; pass --force" (which then said it).
           {"--out folder.hdf5", "--out folder.hdf5 is a folder"},
           // Another quality's name: random data as hopper-medium-v2 would train as that dataset.
           {"--out walker2d_medium_replay-v2.hdf5",
            "is the name of walker2d-medium-replay-v2, but this collects medium in Walker2d-v4: "
            "name it walker2d_medium-v2.hdf5"},
           // Another version's: v4 data read as v5's (a walk, 2026-11-29); a name no reader reads.
           {"--out walker2d_medium-v5.hdf5",
            "is the name of walker2d-medium-v5, but this collects medium in Walker2d-v4: name it "
            "walker2d_medium-v2.hdf5"},
           {"--out walker.txt",
            "--out walker.txt: a D4RL-layout dataset is an HDF5 file; give it an .hdf5 name (e.g. "
            "walker2d_medium-v2.hdf5)"}}) {
    expect_failure_naming(run_minrnn(dir, sac + options), {said});
  }
  // A Minari --out holding something else was refused only after training and sampling.
  fs::create_directories(dir.path / "notes");
  write_text(dir.path / "notes" / "mine.txt", "keep");
  expect_failure_naming(run_minrnn(dir, sac + "--format minari --out notes --force"),
                        {"notes: exists and is not a Minari dataset"});
  for (const auto& e : fs::directory_iterator(dir.path))  // no SAC work dir (data/work/...)
    EXPECT_TRUE(e.path().filename() == "folder.hdf5" || e.path().filename() == "notes" ||
                e.path().filename() == "afile")
        << e.path() << " left behind";
  // random trains no SAC: --train-steps below the default --start-steps is no fault of it.
  const CliResult random =
      run_minrnn(dir, "collect hopper random --steps 50 --train-steps 100 --out r.hdf5");
  EXPECT_EQ(random.exit_code, 0) << random.output;
  EXPECT_EQ(random.output.find("device: "), std::string::npos) << random.output;  // it uses none
  expect_failure_naming(run_minrnn(dir, "collect hopper random --device cuda --out r2.hdf5"),
                        {"--device cuda: a random collection trains no SAC and uses no device"});
  expect_failure_naming(run_minrnn(dir, "collect hopper medium --train-steps 100 --out m.hdf5"),
                        {"--start-steps (5000, its default) must not exceed --train-steps (100)"});
}

// An --out's folders are made, as the default's data/ is: the demo's `--out data/...` runs in a
// fresh checkout (a walk, 2026-11-30, asked for eval's refusal of a missing folder: it broke it).
TEST(Cli, CollectMakesTheFoldersOfItsOut) {
  TempDir dir;
  const CliResult r = run_minrnn(dir, "collect hopper random --steps 50 --out fresh/sub/x.hdf5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.path / "fresh" / "sub" / "x.hdf5"));
}

// A value the command line may not have is a usage error (exit 2) naming the option, as --steps 0;
// nothing is collected.
TEST(Cli, CollectOptionValuesOutOfRangeAreUsageErrors) {
  TempDir dir;
  const std::string collect = "collect hopper random --steps 50 --out r.hdf5 ";
  for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
           {"--format parquet", "--format: expected d4rl or minari, got 'parquet'"},
           {"--format minari --ref-min-score 100 --ref-max-score 10",
            "--ref-max-score (10.000000) must exceed --ref-min-score (100.000000)"},
           {"--device gpu", "--device: expected auto, cpu, cuda or cuda:N, got 'gpu'"},
           {"--device cpu", "--device cpu: a random collection trains no SAC"},
           {"--dataset-id a/b-v0", "--dataset-id is for --format minari"}}) {
    const CliResult r = run_minrnn(dir, collect + options);
    EXPECT_EQ(r.exit_code, 2) << options << ": " << r.output;
    expect_failure_naming(r, {said, "(minrnn collect --help)"});
  }
  EXPECT_FALSE(fs::exists(dir.path / "r.hdf5"));
}

// SAC's medium/, run.txt and lock went into a training run's folder given as --work-dir (a walk,
// 2026-11-30), as they would into a sweep's: a usage error naming the run, before anything is
// made.
TEST(Cli, CollectRefusesATrainingRunsFolderAsItsWorkDir) {
  TempDir dir;
  const std::string sac =
      "collect hopper medium --train-steps 300 --start-steps 200 --eval-every 300 --out m.hdf5 ";
  fs::create_directories(dir.path / "runs" / "a");
  write_text(dir.path / "runs" / "a" / "config.yaml", "backbone: mingru\n");
  const fs::path seed0 = dir.path / "sw" / "hopper-medium" / "mingru" / "seed0";
  fs::create_directories(seed0);
  write_text(seed0 / "done.json", "{}\n");
  for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
           {"--work-dir runs/a", "--work-dir runs/a holds a training run: SAC's checkpoints"},
           {"--work-dir sw",
            "--work-dir sw holds a sweep (its run sw/hopper-medium/mingru/seed0)"}}) {
    const CliResult r = run_minrnn(dir, sac + options);
    EXPECT_EQ(r.exit_code, 2) << options << ": " << r.output;
    expect_failure_naming(r, {said, "(minrnn collect --help)"});
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path / "runs" / "a"), {}), 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path / "sw"), {}), 1);
  EXPECT_FALSE(fs::exists(dir.path / "m.hdf5"));
}

// A --target the random policy reaches "reached the medium target" at SAC's first evaluation, and
// random data was written as medium (a walk, 2026-11-30: --target -1000): a usage error saying
// why, before anything is made. A random collection takes no target: it trains no SAC, so one
// given was ignored as if the data had been made to it (a review).
TEST(Cli, CollectRefusesATargetTheRandomPolicyReaches) {
  TempDir dir;
  const std::string sac =
      "collect hopper medium --train-steps 300 --start-steps 200 --eval-every 300 --out m.hdf5 ";
  for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
           {"--target -1000",
            "--target -1000: the random policy scores 0 already (D4RL's random return for "
            "Hopper-v4, -20.2723), so SAC's random warm-up would reach it"},
           {"--target 0", "--target 0: the random policy scores 0 already"}}) {
    const CliResult r = run_minrnn(dir, sac + options);
    EXPECT_EQ(r.exit_code, 2) << options << ": " << r.output;
    expect_failure_naming(r, {said, "give a target above 0", "(minrnn collect --help)"});
  }
  const CliResult random = run_minrnn(dir, "collect hopper random --target 50 --out r.hdf5");
  EXPECT_EQ(random.exit_code, 2) << random.output;
  expect_failure_naming(random, {"--target is where SAC's training stops",
                                 "a random collection "
                                 "trains no SAC: leave --target out",
                                 "(minrnn collect --help)"});
  EXPECT_FALSE(fs::exists(dir.path / "data"));  // no work dir made
  EXPECT_FALSE(fs::exists(dir.path / "m.hdf5"));
  EXPECT_FALSE(fs::exists(dir.path / "r.hdf5"));
}

// The summary counts its episodes in words that fit the count: "1 finished episode".
TEST(Cli, CollectSummarySaysOneEpisodeInTheSingular) {
  TempDir dir;  // halfcheetah never falls: 1000 random steps are one episode, ended by the limit
  const CliResult one = run_minrnn(dir, "collect halfcheetah random --steps 1000 --out c.hdf5");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  testing::expect_output_naming(one,
                                {"1000 steps of HalfCheetah-v4 (random), 1 finished episode,"});
  const CliResult two = run_minrnn(dir, "collect halfcheetah random --steps 2000 --out d.hdf5");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  testing::expect_output_naming(two, {", 2 finished episodes,"});
}

// A SAC work dir is reused only by a command asking for the same training: a finished toy run
// must never become the medium policy of a bigger collection.
TEST(Cli, CollectReusesAWorkDirOnlyForTheSameTraining) {
  TempDir dir;
  const std::string sac = "--start-steps 200 --eval-every 300 --work-dir work";
  const CliResult first =
      run_minrnn(dir, "collect hopper medium-replay --train-steps 300 " + sac + " --out a.hdf5");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string recipe = read_text(dir.path / "work" / "run.txt");
  EXPECT_NE(recipe.find("train_steps 300\n"), std::string::npos) << recipe;

  expect_failure_naming(
      run_minrnn(dir, "collect hopper medium-replay --train-steps 400 " + sac + " --out b.hdf5"),
      {"--work-dir work", "--train-steps 300", "asks for 400"});
  expect_failure_naming(
      run_minrnn(dir, "collect walker2d medium-replay --train-steps 300 " + sac + " --out b.hdf5"),
      {"ENV hopper", "asks for walker2d"});
  EXPECT_FALSE(fs::exists(dir.path / "b.hdf5"));
  EXPECT_EQ(read_text(dir.path / "work" / "run.txt"), recipe);

  const CliResult same = run_minrnn(
      dir, "collect hopper medium --steps 50 --train-steps 300 " + sac + " --out b.hdf5");
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("trained already (300 steps)"), std::string::npos) << same.output;

  // A work dir from before run.txt held the recipe ("ENV seed S") is checked for env and seed.
  write_text(dir.path / "work" / "run.txt", "hopper seed 0");
  EXPECT_EQ(
      run_minrnn(dir, "collect hopper medium --steps 50 --train-steps 300 " + sac + " --out c.hdf5")
          .exit_code,
      0);
  expect_failure_naming(run_minrnn(dir, "collect hopper medium --steps 50 --seed 1 " + sac +
                                            " --train-steps 300 --out d.hdf5"),
                        {"hopper seed 0", "use another --work-dir"});
}

}  // namespace
}  // namespace minrnn
