// The `minrnn` binary as a user runs it: each test starts it in a fresh directory and checks its
// exit status, what it prints and the files it leaves. The libraries behind it have their own
// suites; these check the wiring users touch (options, exit codes, messages, output files). The
// benches' are tests/tools/cli_bench_test.cpp.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/dir_lock.h"
#include "ops/device.h"
#include "tests/paths.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

using CliResult = testing::CommandResult;

// Runs `BUILD/PROGRAM ARGS` with `dir` as the working directory, one torch thread.
CliResult run_program(const TempDir& dir, const std::string& program, const std::string& args) {
  return testing::run_program(dir, minrnn::testing::binary_dir(), program, args);
}

using testing::expect_failure_naming;
using testing::lines_of;
using testing::read_text;
using testing::run_minrnn;
using testing::write_text;

// A tiny hopper agent's config: trains in a few seconds on a synthesized dataset.
const char* kTinyConfig =
    "dataset: d.hdf5\nenv: hopper\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\n"
    "context_len: 5\nbatch_size: 4\nmax_steps: 6\nwarmup_steps: 1\neval_every: 0\n"
    "eval_episodes: 2\ncheckpoint_every: 2\nlog_every: 1\ntarget_return: 3600\n";

TEST(Cli, TrainRefusesAnUnknownKeyAndCreatesNoRun) {
  TempDir dir;
  write_text(dir.path / "c.yaml", std::string(kTinyConfig) + "lerning_rate: 0.1\n");
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 0 --run-dir run"),
                        {"c.yaml", "lerning_rate", "unknown key"});
  EXPECT_FALSE(fs::exists(dir.path / "run"));
}

// A pack names one config for all its seeds or one per seed; any other count is refused before
// a run exists.
TEST(Cli, TrainRefusesConfigsThatDoNotPairWithItsSeeds) {
  TempDir dir;
  write_text(dir.path / "c.yaml", kTinyConfig);
  expect_failure_naming(
      run_minrnn(dir, "train c.yaml c.yaml c.yaml --seed 0 --seed 1 --run-dir a --run-dir b"),
      {"config: given 3 files for 2 seed(s)", "one per --seed"});
  EXPECT_FALSE(fs::exists(dir.path / "a"));
  EXPECT_FALSE(fs::exists(dir.path / "b"));
}

// Configs without --seed: one run each, at its config's seed, in its default run dir, one pack.
TEST(Cli, TrainWithSeveralConfigsAndNoSeedTrainsEachAtItsOwnSeed) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 50").exit_code, 0);
  write_text(dir.path / "g.yaml", std::string(kTinyConfig) + "seed: 3\n");
  std::string minlstm = kTinyConfig;
  minlstm.replace(minlstm.find("backbone: mingru"), 16, "backbone: minlstm");
  write_text(dir.path / "l.yaml", minlstm + "seed: 4\n");
  const CliResult r = run_minrnn(dir, "train g.yaml l.yaml --set max_steps=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("runs/g-s3: step 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("runs/l-s4: step 2"), std::string::npos) << r.output;
  // A pack shows progress too, each run's line labelled with its run dir; what its runs say
  // alike (the device chosen) is said once.
  EXPECT_NE(r.output.find("runs/g-s3: step 1/2  loss"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("runs/l-s4: step 2/2  loss"), std::string::npos) << r.output;
  const size_t device = r.output.find("device: auto");
  ASSERT_NE(device, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("device: auto", device + 1), std::string::npos) << r.output;
  // Where TensorBoard shows the pack: the folder both runs sit in.
  EXPECT_NE(r.output.find("watch it: tensorboard --logdir runs\n"), std::string::npos) << r.output;
  EXPECT_NE(read_text(dir.path / "runs/l-s4/config.yaml").find("backbone: minlstm"),
            std::string::npos);
}

// User checks 2 and 3: train, rerun (a finished run is kept, not retrained: done), evaluate.
TEST(Cli, TrainThenEvalPrintsTheNormalizedReturn) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code, 0);
  write_text(dir.path / "c.yaml", kTinyConfig);
  const CliResult train = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  ASSERT_TRUE(fs::exists(dir.path / "run" / "done.json")) << train.output;
  EXPECT_EQ(lines_of(read_text(dir.path / "run" / "metrics.csv")).size(), 1u + 6u);  // header

  const std::string checkpoint = read_text(dir.path / "run" / "checkpoint.pt");
  const CliResult again = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("nothing left to train"), std::string::npos) << again.output;
  EXPECT_EQ(read_text(dir.path / "run" / "checkpoint.pt"), checkpoint);

  const CliResult eval = run_minrnn(dir, "eval run --episodes 2 --replace");
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_NE(eval.output.find("normalized"), std::string::npos) << eval.output;
  const auto j = nlohmann::json::parse(read_text(dir.path / "run" / "eval.json"));
  EXPECT_EQ(j["episodes"], 2);

  // eval.json is what Table 3 reads: trying other settings writes beside it, never over it.
  const std::string result = read_text(dir.path / "run" / "eval.json");
  const CliResult adhoc = run_minrnn(dir, "eval run --episodes 1 --seed 7");
  ASSERT_EQ(adhoc.exit_code, 0) << adhoc.output;
  EXPECT_NE(adhoc.output.find("eval-episodes1-seed7.json"), std::string::npos) << adhoc.output;
  EXPECT_EQ(
      nlohmann::json::parse(read_text(dir.path / "run" / "eval-episodes1-seed7.json"))["episodes"],
      1);
  // A plain eval (10 episodes) keeps a result made with other settings (a sweep's --episodes 2).
  const CliResult plain = run_minrnn(dir, "eval run");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("run/eval.json, the run's result, was made with other settings: "
                              "kept (--replace replaces it)"),
            std::string::npos)
      << plain.output;
  EXPECT_EQ(nlohmann::json::parse(read_text(dir.path / "run" / "eval-episodes10.json"))["episodes"],
            10);
  // --out writes where it is told, replacing an evaluation's JSON but nothing else.
  ASSERT_EQ(run_minrnn(dir, "eval run --episodes 1 --out elsewhere.json").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path / "elsewhere.json"));
  ASSERT_EQ(run_minrnn(dir, "eval run --episodes 1 --out elsewhere.json").exit_code, 0);
  expect_failure_naming(run_minrnn(dir, "eval run --episodes 1 --out run/checkpoint.pt"),
                        {"--out run/checkpoint.pt", "not an evaluation's JSON: not replaced"});
  EXPECT_EQ(read_text(dir.path / "run" / "checkpoint.pt"), checkpoint);
  expect_failure_naming(run_minrnn(dir, "eval run --episodes 1 --out run/eval.json"),
                        {"--out run/eval.json", "is a run's result"});
  expect_failure_naming(run_minrnn(dir, "eval run --replace --out x.json"), {"--out", "--replace"});
  EXPECT_EQ(read_text(dir.path / "run" / "eval.json"), result);
  // Out of range, a seed or a target return is refused, not clamped or read as "the default".
  expect_failure_naming(run_minrnn(dir, "eval run --seed 99999999999999999999"),
                        {"--seed", "expected an integer from 0 to "});
  expect_failure_naming(run_minrnn(dir, "eval run --target-return nan"),
                        {"--target-return", "got 'nan'"});
  expect_failure_naming(run_minrnn(dir, "eval run --target-return 1e308"),
                        {"--target-return", "within float's range"});

  // --force starts over: no evaluation of the old model is left to be reported as the new one's.
  const CliResult force = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet --force");
  ASSERT_EQ(force.exit_code, 0) << force.output;
  EXPECT_FALSE(fs::exists(dir.path / "run" / "eval.json"));
  EXPECT_FALSE(fs::exists(dir.path / "run" / "eval-episodes1-seed7.json"));
  EXPECT_TRUE(fs::exists(dir.path / "run" / "done.json"));
}

// RUN/eval.json, the number Table 3 reports, comes only from the finished run's own checkpoint:
// another checkpoint file (the ones --extend keeps) and a run still training get names of their
// own.
TEST(Cli, OnlyAFinishedRunsOwnCheckpointWritesItsResult) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code, 0);
  write_text(dir.path / "c.yaml", kTinyConfig);
  ASSERT_EQ(run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet").exit_code, 0);
  fs::copy_file(dir.path / "run" / "checkpoint.pt", dir.path / "run" / "checkpoint-step4.pt");

  CliResult r = run_minrnn(dir, "eval run/checkpoint-step4.pt --episodes 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.path / "run" / "eval-checkpoint-step4-episodes1.json")) << r.output;
  expect_failure_naming(run_minrnn(dir, "eval run/checkpoint-step4.pt --episodes 1 --replace"),
                        {"--replace", "checkpoint-step4.pt"});
  EXPECT_FALSE(fs::exists(dir.path / "run" / "eval.json"));

  fs::rename(dir.path / "run" / "done.json", dir.path / "run" / "done-aside.json");  // training
  r = run_minrnn(dir, "eval run --episodes 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.path / "run" / "eval-step6-episodes1.json")) << r.output;
  expect_failure_naming(run_minrnn(dir, "eval run --episodes 1 --replace"), {"--replace", "run"});
  EXPECT_FALSE(fs::exists(dir.path / "run" / "eval.json"));

  // A done.json of another step: the run was extended past this checkpoint (or is being).
  write_text(dir.path / "run" / "done.json", "{\"step\": 12}");
  expect_failure_naming(run_minrnn(dir, "eval run --episodes 1 --replace"), {"--replace", "run"});
  EXPECT_FALSE(fs::exists(dir.path / "run" / "eval.json"));

  fs::rename(dir.path / "run" / "done-aside.json", dir.path / "run" / "done.json");
  ASSERT_EQ(run_minrnn(dir, "eval run/checkpoint.pt --episodes 1 --replace").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path / "run" / "eval.json"));
}

// A train that cannot load its data changes nothing: --force with a typo keeps the old run whole,
// and a first try with a missing dataset leaves nothing that refuses the corrected command.
TEST(Cli, ATrainThatCannotLoadItsDataTakesNothingOver) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code, 0);
  write_text(dir.path / "c.yaml", kTinyConfig);
  ASSERT_EQ(run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet").exit_code, 0);
  const std::string checkpoint = read_text(dir.path / "run" / "checkpoint.pt");
  const std::string config = read_text(dir.path / "run" / "config.yaml");

  expect_failure_naming(
      run_minrnn(dir,
                 "train c.yaml --seed 0 --run-dir run --quiet --force --set dataset=typo.hdf5"),
      {"typo.hdf5"});
  EXPECT_EQ(read_text(dir.path / "run" / "checkpoint.pt"), checkpoint);
  EXPECT_EQ(read_text(dir.path / "run" / "config.yaml"), config);
  for (const char* kept : {"metrics.csv", "done.json", "env.json"})
    EXPECT_TRUE(fs::exists(dir.path / "run" / kept)) << kept;

  expect_failure_naming(
      run_minrnn(dir, "train c.yaml --seed 0 --run-dir fresh --quiet --set dataset=missing.hdf5"),
      {"missing.hdf5"});
  EXPECT_FALSE(fs::exists(dir.path / "fresh"));
  const CliResult corrected = run_minrnn(dir, "train c.yaml --seed 0 --run-dir fresh --quiet");
  ASSERT_EQ(corrected.exit_code, 0) << corrected.output;
  EXPECT_TRUE(fs::exists(dir.path / "fresh" / "done.json"));
}

// A run dir another process holds: train refuses it with its own exit status (a sweep counts the
// run busy by it, not failed, even once the holder has ended) and the holder's pid.
TEST(Cli, TrainOnARunDirAnotherProcessHoldsExitsWithTheBusyStatus) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code, 0);
  write_text(dir.path / "c.yaml", kTinyConfig);
  const io::DirLock held((dir.path / "run").string(), "this test");
  const CliResult refused = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet");
  EXPECT_EQ(refused.exit_code, io::kExitDirBusy) << refused.output;
  EXPECT_NE(refused.output.find("in use by another process (pid " + std::to_string(::getpid())),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(dir.path / "run" / "config.yaml"));
}

// examples/policy_loop.cpp is the README's "use a trained policy from C++": a user's loop around
// rl::Policy, one episode at a time, returns what `minrnn eval` reports for the same episodes,
// which it steps as one batch (to the printed digits: the packed engine's products give a row the
// same bits in any batch), and both engines agree.
TEST(Cli, PolicyExampleReturnsWhatEvalReports) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 400 --episode-len 50").exit_code, 0);
  write_text(dir.path / "c.yaml", kTinyConfig);
  ASSERT_EQ(run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet").exit_code, 0);
  const CliResult fast = run_minrnn(dir, "eval run --episodes 3 --seed 3 --out fast.json");
  ASSERT_EQ(fast.exit_code, 0) << fast.output;
  const CliResult torch =
      run_minrnn(dir, "eval run --episodes 1 --seed 3 --engine torch --out torch.json");
  ASSERT_EQ(torch.exit_code, 0) << torch.output;
  const auto jf = nlohmann::json::parse(read_text(dir.path / "fast.json"));
  const auto jt = nlohmann::json::parse(read_text(dir.path / "torch.json"));
  EXPECT_EQ(jf["engine"], "packed");
  EXPECT_EQ(jt["engine"], "torch");
  EXPECT_EQ(jf["lengths"][0], jt["lengths"][0]);
  EXPECT_NEAR(jf["returns"][0].get<double>(), jt["returns"][0].get<double>(), 1e-3);

  const CliResult example = run_program(dir, "examples/policy_loop", "run --episodes 3 --seed 3");
  ASSERT_EQ(example.exit_code, 0) << example.output;
  for (int e = 0; e < 3; ++e) {
    double ret = NAN;
    int steps = 0;
    const std::string label = "episode " + std::to_string(e) + ": return ";
    const auto at = example.output.find(label);
    ASSERT_NE(at, std::string::npos) << example.output;
    ASSERT_EQ(
        std::sscanf(example.output.c_str() + at + label.size(), "%lf over %d steps", &ret, &steps),
        2)
        << example.output;
    EXPECT_NEAR(ret, jf["returns"][e].get<double>(), 1e-6) << label << example.output;
    EXPECT_EQ(steps, jf["lengths"][e].get<int>()) << label << example.output;
  }
  EXPECT_NE(example.output.find("act() median"), std::string::npos) << example.output;

  const CliResult missing = run_program(dir, "examples/policy_loop", "nowhere");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("nowhere"), std::string::npos) << missing.output;
  // Options it cannot use are refused by name before anything runs (0 episodes had no median;
  // 3000000000 wrapped to none and crashed, 4294967297 ran one, a 20-digit seed was clamped: a
  // walk, 2026-11-30). The ranges are `minrnn eval`'s.
  for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"run --episodes 0", "--episodes: expected a whole number from 1 to 1000000, got '0'"},
           {"run --episodes x", "--episodes: expected a whole number from 1 to 1000000, got 'x'"},
           {"run --episodes 3000000000", "got '3000000000'"},
           {"run --episodes 4294967297", "got '4294967297'"},
           {"run --episodes +2", "got '+2'"},
           {"run --seed 99999999999999999999",
            "--seed: expected a whole number from 0 to 9007199254741992000"},
           {"run --seed 9999999999999999999", "got '9999999999999999999'"},  // past int64 too
           {"run --seed", "--seed: no value given"},
           {"run --seed 1 --seed 2", "--seed: given twice"},
           {"--episodes 2 run", "RUN_DIR comes first, then options"},
           {"run --speed 2", "unknown option '--speed'"}}) {
    const CliResult refused = run_program(dir, "examples/policy_loop", args);
    EXPECT_EQ(refused.exit_code, 2) << args << ": " << refused.output;
    EXPECT_NE(refused.output.find(named), std::string::npos) << args << ": " << refused.output;
  }
  for (const char* help : {"--help", "run --help"}) {  // it called --help a missing run
    const CliResult usage = run_program(dir, "examples/policy_loop", help);
    EXPECT_EQ(usage.exit_code, 0) << help << ": " << usage.output;
    EXPECT_NE(usage.output.find("usage:"), std::string::npos) << help << ": " << usage.output;
  }
}

TEST(Cli, EvalOfADirectoryWithoutARunSaysSo) {
  TempDir dir;
  fs::create_directories(dir.path / "empty");
  expect_failure_naming(run_minrnn(dir, "eval empty"),
                        {"empty: a folder without a checkpoint.pt (no run, or one that has not "
                         "saved a checkpoint yet)"});
  // A folder named like the file is that folder, not a path doubled (empty/checkpoint.pt/...).
  fs::create_directories(dir.path / "run" / "checkpoint.pt");
  const CliResult folder = run_minrnn(dir, "eval run/checkpoint.pt");
  expect_failure_naming(folder, {"run/checkpoint.pt: a folder, not a checkpoint file"});
  EXPECT_EQ(folder.output.find("checkpoint.pt/checkpoint.pt"), std::string::npos) << folder.output;
  expect_failure_naming(run_minrnn(dir, "eval emtpy"),
                        {"emtpy: no such run directory", "(did you mean 'empty'?)"});
}

TEST(Cli, ANonPositiveCountIsRefusedByName) {
  TempDir dir;
  expect_failure_naming(run_minrnn(dir, "eval run --episodes 0"),
                        {"--episodes", "expected an integer from 1 to 1000000, got '0'"});
  expect_failure_naming(run_minrnn(dir, "bench scan --batch -3 --no-append"),
                        {"--batch", "got '-3'"});
  // A count is an integer, and says so (it said "a finite number > 0" and took 1.5 that far).
  expect_failure_naming(run_minrnn(dir, "bench eval --episodes 1.5 --no-append"),
                        {"--episodes", "expected an integer from 1 to 2147483647, got '1.5'"});
  // inf would time forever, nan compares false with every limit.
  expect_failure_naming(run_minrnn(dir, "bench train --seconds inf --no-append"),
                        {"--seconds", "expected a finite number > 0, got 'inf'"});
  expect_failure_naming(run_minrnn(dir, "bench figure1 --quick --max-seconds nan --no-append"),
                        {"--max-seconds", "got 'nan'"});
  expect_failure_naming(run_minrnn(dir, "bench train --expansion nan --no-append"),
                        {"--expansion", "got 'nan'"});
  // A backbone is checked before anything is timed, and a typo offered the name it meant.
  expect_failure_naming(run_minrnn(dir, "bench train --backbones mingru,mingur --no-append"),
                        {"--backbones", "unknown backbone 'mingur' (did you mean 'mingru'?)"});
  // The pack's limits are probes of CUDA graphs: on the CPU there is nothing to measure.
  expect_failure_naming(run_minrnn(dir, "bench pack-limits --device cpu --no-append"),
                        {"--device cpu", "CUDA graphs"});
  EXPECT_TRUE(fs::is_empty(dir.path));
}

// Every command that computes refuses `cuda` where no CUDA device is usable before it creates
// anything, in one sentence; `auto` falls back to the CPU and says so.
TEST(Cli, AskingForAGpuWhereNoneIsUsableIsRefusedBeforeAnythingIsCreated) {
  if (core::cuda_unavailable_reason().empty()) GTEST_SKIP() << "CUDA is usable here";
  TempDir dir;
  write_text(dir.path / "c.yaml", kTinyConfig);
  fs::create_directories(dir.path / "out");  // an --out's or --csv's folder must be there
  for (const std::string& args :
       {std::string("train c.yaml --seed 0 --run-dir run --set device=cuda"),
        std::string("eval run --device cuda"),
        std::string("collect hopper medium --device cuda --out out/d.hdf5 --work-dir work"),
        std::string("bench scan --quick --lengths 16 --device cuda --no-append --csv out/scan.csv"),
        std::string("bench train --devices cuda --seconds 1 --no-append --csv out/train.csv")}) {
    const CliResult r = run_minrnn(dir, args);
    expect_failure_naming(r, {"cuda was asked for, but", "cpu (or auto) to run on the CPU."});
    EXPECT_EQ(lines_of(r.output).size(), 1u) << args << ": " << r.output;
  }
  // pack-limits has no CPU to fall back to: it says so instead.
  const CliResult limits =
      run_minrnn(dir, "bench pack-limits --seconds 1 --no-append --csv out/limits.csv");
  expect_failure_naming(limits, {"bench pack-limits measures a GPU (--device cuda;", "), but "});
  EXPECT_EQ(lines_of(limits.output).size(), 1u) << limits.output;
  EXPECT_EQ(limits.output.find("--device cpu"), std::string::npos) << limits.output;
  for (const char* created : {"run", "work", "data", "runs"}) {
    EXPECT_FALSE(fs::exists(dir.path / created)) << created;
  }
  EXPECT_TRUE(fs::is_empty(dir.path / "out"));
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 50").exit_code, 0);
  const CliResult train =
      run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet --set max_steps=1");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("device: auto -> cpu ("), std::string::npos) << train.output;
  EXPECT_NE(read_text(dir.path / "run" / "config.yaml").find("device: cpu\n"), std::string::npos);
}
}  // namespace
}  // namespace minrnn
