// `minrnn train` and `minrnn sweep` options as an audit of train/sweep input (2026-11-28) gave
// them: each bad value refused by the option's name before any run directory exists, and a pack
// that holds a finished run trains the others (a finished run alone is done, not refused).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "eval/compare.h"
#include "rl/run_start.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::expect_failure_naming;
using testing::run_minrnn;
using testing::TempDir;
using testing::write_text;
namespace fs = std::filesystem;

using testing::kFourStepConfig;

// A negative seed was read as "none given" (the config's seed 0); one past int64 as CLI11's
// conversion error.
TEST(CliInput, TrainRefusesASeedThatIsNoWholeNumberFromZero) {
  TempDir dir;
  write_text(dir.path / "c.yaml", kFourStepConfig);
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed -1 --run-dir n1"),
                        {"--seed", "expected an integer from 0 to 9007199254740992, got '-1'"});
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 0,-1 --run-dir a --run-dir b"),
                        {"--seed", "got '-1'"});
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 99999999999999999999 --run-dir n1"),
                        {"--seed", "got '99999999999999999999'"});
  // Past 2^53 the evaluations' seeds (seed × 1000) would leave int64.
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 9007199254740993 --run-dir n1"),
                        {"--seed", "got '9007199254740993'"});
  expect_failure_naming(run_minrnn(dir, "train c.yaml --run-dir n1 --set seed=9007199254740993"),
                        {"seed", "from 0 to 9007199254740992"});
  EXPECT_FALSE(fs::exists(dir.path / "n1"));
  EXPECT_FALSE(fs::exists(dir.path / "a"));
}

// Two runs of a pack in one directory: refused up front, not by the second's lock ("another
// process", which was this one).
TEST(CliInput, TrainRefusesTwoRunsInOneDirectory) {
  TempDir dir;
  write_text(dir.path / "c.yaml", kFourStepConfig);
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 0,1 --run-dir z --run-dir ./z/"),
                        {"--run-dir", "runs 1 and 2 would both train in"});
  expect_failure_naming(run_minrnn(dir, "train c.yaml --seed 0,0"),
                        {"--seed", "runs/c-s0", "seed 0 given twice"});
  expect_failure_naming(run_minrnn(dir, "train c.yaml --run-dir ''"),
                        {"--run-dir", "expected a directory, got ''"});
  EXPECT_FALSE(fs::exists(dir.path / "z"));
  EXPECT_FALSE(fs::exists(dir.path / "runs"));
}

// The audit's first finding: a pack whose first run was finished failed with "Accessing empty
// ModuleHolder" and left the second half-created.
TEST(CliInput, APackWithAFinishedRunTrainsTheOthers) {
  TempDir dir;
  write_text(dir.path / "c.yaml", kFourStepConfig);
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 50").exit_code, 0);
  ASSERT_EQ(run_minrnn(dir, "train c.yaml --seed 0 --run-dir a0 --quiet").exit_code, 0);
  const auto r = run_minrnn(dir, "train c.yaml --seed 0,1 --run-dir a0 --run-dir a1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  testing::expect_output_naming(r, {"a0 is already trained to max_steps 4", "a1: step 4"});
  EXPECT_TRUE(fs::exists(dir.path / "a1/done.json"));
  // And alone, as a pack of one (a walk through the commands, 2026-11-29: it failed, exit 1).
  const auto again = run_minrnn(dir, "train c.yaml --seed 0 --run-dir a0");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  testing::expect_output_naming(again, {"a0: step 4", "nothing left to train", "--extend"});
  // With --extend given, the hint does not ask for it (a docs walk, 2026-11-29).
  const auto extended = run_minrnn(dir, "train c.yaml --seed 0 --run-dir a0 --extend");
  ASSERT_EQ(extended.exit_code, 0) << extended.output;
  testing::expect_output_naming(extended, {"nothing left to train: raise max_steps to train it"});
  EXPECT_EQ(extended.output.find("pass --extend"), std::string::npos) << extended.output;
  // A pack of a relative and an absolute run dir is watched where both are (an audit of
  // TensorBoard, 2026-11-29: it printed `--logdir .`).
  const std::string absolute = (dir.path / "r" / "p3").string();
  const auto mixed =
      run_minrnn(dir, "train c.yaml --seed 2,3 --run-dir r/p2 --run-dir " + absolute);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.output;
  testing::expect_output_naming(
      mixed, {"watch it: tensorboard --logdir " + (dir.path / "r").string() + "\n"});
}

// The command line's counts are held to the file's limits, and --out '' is no default.
TEST(CliInput, SweepOptionsAreCheckedAsTheFileIs) {
  TempDir dir;
  write_text(dir.path / "s.yaml", "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\n");
  expect_failure_naming(run_minrnn(dir, "sweep s.yaml --parallel 1000000 --dry-run"),
                        {"--parallel", "expected an integer from 1 to 4096, got '1000000'"});
  expect_failure_naming(run_minrnn(dir, "sweep s.yaml --pack 1000000 --dry-run"),
                        {"--pack", "from 1 to 4096"});
  expect_failure_naming(run_minrnn(dir, "sweep s.yaml --out '' --dry-run"),
                        {"--out", "expected a directory, got ''"});
  // A key the sweep sets per run: a usage error (exit 2) naming the list that sets it.
  const testing::CommandResult own =
      run_minrnn(dir, "sweep s.yaml --set backbone=minlstm --dry-run");
  expect_failure_naming(own, {"sweep: --set backbone=minlstm: the sweep's `backbones` sets each "
                              "run's backbone"});
  EXPECT_EQ(own.exit_code, 2);
  // A key of the file's `set:` no config has: the sweep file and its key named, as the file is
  // read (a walk through the commands, 2026-11-29: "--set embed_dimm" alone, as if typed).
  write_text(dir.path / "c.yaml", kFourStepConfig);
  write_text(dir.path / "t.yaml",
             "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: c.yaml\n"
             "set: [embed_dimm=8]\n");
  expect_failure_naming(run_minrnn(dir, "sweep t.yaml --dry-run"),
                        {"t.yaml: key 'set': 'embed_dimm=8': unknown key (did you mean "
                         "'embed_dim'?)"});
  // A training config given as a sweep file is said to be one.
  expect_failure_naming(run_minrnn(dir, "sweep c.yaml --dry-run"),
                        {"c.yaml: a training config's keys (dataset, env, backbone",
                         "train it with `minrnn train c.yaml`"});
  // An `out` that cannot be made: named with the sweep file, before the TensorBoard line.
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 50").exit_code, 0);
  write_text(dir.path / "u.yaml",
             "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: c.yaml\n");
  const auto unmade = run_minrnn(dir, "sweep u.yaml --out c.yaml/runs");
  expect_failure_naming(unmade, {"u.yaml: out c.yaml/runs: cannot make c.yaml/runs",
                                 "c.yaml is a file, not a folder"});
  EXPECT_EQ(unmade.output.find("tensorboard"), std::string::npos) << unmade.output;
  // The command line's --set in place of the file's entry of its key: each run's `minrnn train`
  // gets it once (a review, 2026-11-29: it got both, refused them, and every run failed).
  write_text(dir.path / "v.yaml",
             "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: c.yaml\n"
             "set: [max_steps=2]\neval_episodes: 1\n");
  const auto overridden = run_minrnn(dir, "sweep v.yaml --set max_steps=3 --out vo");
  ASSERT_EQ(overridden.exit_code, 0) << overridden.output;
  EXPECT_NE(testing::read_text(dir.path / "vo/d/mingru/seed0/config.yaml").find("max_steps: 3\n"),
            std::string::npos);
  // A value the config refuses by range: the command line's a usage error (exit 2, as one of the
  // wrong type is), the file's the file's (exit 1); the key said once (a walk, 2026-11-30: exit 1,
  // "--set max_steps: key 'max_steps'").
  for (const char* command :
       {"sweep v.yaml --set max_steps=0 --dry-run", "train c.yaml --set max_steps=0"}) {
    const testing::CommandResult range = run_minrnn(dir, command);
    expect_failure_naming(range, {"--set: key 'max_steps': expected >= 1, got 0"});
    EXPECT_EQ(range.exit_code, 2) << command;
  }
  write_text(dir.path / "w.yaml",
             "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\nconfig: c.yaml\n"
             "set: [max_steps=0]\n");
  const testing::CommandResult in_file = run_minrnn(dir, "sweep w.yaml --dry-run");
  // The file's entry named as its `set` entry (a review, 2026-11-30: "--set: key 'max_steps'").
  expect_failure_naming(in_file, {"w.yaml: dataset d, backbone mingru",
                                  "key 'set': 'max_steps=0': expected >= 1, got 0"});
  EXPECT_EQ(in_file.output.find("--set:"), std::string::npos) << in_file.output;
  EXPECT_EQ(in_file.exit_code, 1);
  // A backbone of the sweep's list that the config's n_heads does not fit: the cell's backbone
  // named, neither `set` nor --set.
  write_text(dir.path / "t.yaml", "defaults: c.yaml\nbackbone: transformer\nn_heads: 4\n");
  write_text(dir.path / "x.yaml",
             "datasets: [d]\nbackbones: [transformer, mingru]\nseeds: [0]\nconfig: t.yaml\n");
  const testing::CommandResult backbone = run_minrnn(dir, "sweep x.yaml --dry-run");
  expect_failure_naming(
      backbone, {"x.yaml: dataset d, backbone mingru", "backbone mingru leaves n_heads wrong (",
                 "t.yaml: expected 1 unless backbone is transformer"});
  EXPECT_EQ(backbone.output.find("key 'set'"), std::string::npos) << backbone.output;
  EXPECT_EQ(backbone.exit_code, 1);
}

// Options before the positional argument (found by a walk through the commands, 2026-11-29):
// `train --seed 0 c.yaml` read "c.yaml" as a second seed, `train --run-dir x c.yaml` and `sweep
// --set k=v s.yaml` said "config is required". Every refusal of the command line is one
// "minrnn: error:" line naming the command, exit status 2, a misspelt option's likely meaning.
TEST(CliInput, OptionsTakeOneValueEachAndRefusalsNameTheCommand) {
  TempDir dir;
  write_text(dir.path / "c.yaml", kFourStepConfig);
  write_text(dir.path / "s.yaml", "datasets: [d]\nbackbones: [mingru]\nseeds: [0]\n");
  // Read as the config it is: the run gets as far as its data (not made here).
  expect_failure_naming(run_minrnn(dir, "train --seed 1 --run-dir r --set max_steps=2 c.yaml"),
                        {"c.yaml: config key dataset: d.hdf5: no such file",
                         "(a relative path is read from the folder minrnn runs in, "});
  const testing::CommandResult sweep = run_minrnn(dir, "sweep --set max_steps=2 s.yaml --dry-run");
  EXPECT_EQ(sweep.output.find("is required"), std::string::npos) << sweep.output;
  // A sweep's --set of a cell's own value is read filled in, as its runs' are.
  const testing::CommandResult cell =
      run_minrnn(dir, "sweep s.yaml --set 'dataset=data/{dataset}.hdf5' --dry-run");
  EXPECT_EQ(cell.output.find("--set"), std::string::npos) << cell.output;
  for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"train", "minrnn: error: train: config is required (minrnn train --help)"},
           {"eval r --episods 3",
            "eval: --episods is no option (did you mean '--episodes'?) (minrnn eval --help)"},
           {"train c.yaml --seed x", "train: --seed: expected an integer"},
           // A --set is read before a config (a sweep's with the sweep file's cells): a key set
           // twice (as a config file's key given twice), no key=value, an unknown key, a value
           // not of its key's type.
           {"train c.yaml --set lr=1e-3 --set lr=1e-4",
            "train: --set lr: given twice ('lr=1e-3', 'lr=1e-4')"},
           {"train nofile.yaml --set lr", "train: --set lr: expected key=value"},
           {"sweep s.yaml --set lrr=1", "sweep: --set lrr=1: unknown key (did you mean 'lr'?)"},
           {"train c.yaml --set lr=abc", "train: --set lr=abc: expected a number, got 'abc'"},
           {"train c.yaml --seed 1 --set seed=2",
            "train: --set seed=2: the seed is --seed's to set; give it once"},
           {"train c.yaml --seed 0,1 --run-dir x",
            "train: --run-dir: given once for 2 seed(s); give one per --seed"},
           {"data synth s.hdf5 --steps 100",
            "data synth: --episode-len 1000 is more than --steps 100: no episode of the file "
            "would end"},
           {"data synth '' --steps 10 --episode-len 5", "expected a file name, got ''"},
           // Out of range: clamped to one seed (a walk, 2026-11-30: -1 and 2^64 made one file).
           {"data synth s.hdf5 --steps 10 --episode-len 5 --seed -1", "--seed: expected"},
           {"collect hopper random --steps 10 --seed 18446744073709551616", "--seed: expected"},
           {"data inspect d.hdf5 --env hoper",
            "--env: unknown environment 'hoper' (did you mean "
            "'hopper'?)"},
           {"data synth s.hdf5 --env hopper-v5",
            "--env: expected hopper, halfcheetah or walker2d (no version), got 'hopper-v5'"},
           // A device no machine has (a walk, 2026-11-30: exit 1, read only with the run).
           {"eval some-run --device gpu", "--device: expected auto, cpu, cuda or cuda:N"},
           // An option where a value was due (a walk, 2026-11-30: "sw_cli was not expected").
           {"sweep s.yaml --set --out sw --dry-run",
            "not expected: sw; --set took the option --out as its value"}}) {
    const testing::CommandResult refused = run_minrnn(dir, args);
    EXPECT_EQ(refused.exit_code, 2) << args << ": " << refused.output;
    testing::expect_output_naming(refused, {named});
  }
}

// A mistyped file or command is refused naming what was most likely meant, and nothing is made.
TEST(Cli, ATypoIsOfferedWhatItMostLikelyMeant) {
  TempDir dir;
  write_text(dir.path / "tiny.yaml", kFourStepConfig);
  fs::create_directories(dir.path / "sweep");
  expect_failure_naming(run_minrnn(dir, "report swep"),
                        {"swep: no such sweep directory (did you mean 'sweep'?)"});
  expect_failure_naming(run_minrnn(dir, "train tiny.yml --seed 0"),
                        {"tiny.yml: no such config file (did you mean 'tiny.yaml'?)"});
  expect_failure_naming(run_minrnn(dir, "sweep tiny.yml"), {"tiny.yml: no such sweep file"});
  expect_failure_naming(run_minrnn(dir, "trian tiny.yaml --seed 0"),
                        {"unknown command 'minrnn trian' (did you mean 'train'?)", "known: "});
  expect_failure_naming(run_minrnn(dir, "bench trian"),
                        {"unknown command 'minrnn bench trian' (did you mean 'train'?)"});
  expect_failure_naming(run_minrnn(dir, "data"),
                        {"'minrnn data' needs a command: inspect, synth, download"});
  expect_failure_naming(run_minrnn(dir, "collect hopper mediun --out d.hdf5"),
                        {"unknown quality 'mediun' (did you mean 'medium'?)"});
  expect_failure_naming(run_minrnn(dir, "data synth d.hdf5 --env hoper"),
                        {"unknown environment 'hoper' (did you mean 'hopper'?)"});
  // Not a typo, but a file every reader would refuse (no episode ends in it): not written.
  expect_failure_naming(run_minrnn(dir, "data synth d.hdf5 --steps 100 --episode-len 1000"),
                        {"--episode-len 1000 is more than --steps 100"});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 2);
}

// compare --csv replaces only an earlier comparison's CSV, and is checked before the sweeps are
// read (a walk, 2026-11-29: it replaced a run's eval.json; '' wrote nothing, exit 0).
TEST(CliInput, CompareWritesItsCsvOnlyOverAComparisonsCsv) {
  TempDir dir;
  write_text(dir.path / "eval.json", "{\"mean_normalized\": 50}\n");
  for (const auto& [csv, said] : std::vector<std::pair<std::string, std::string>>{
           {"eval.json",
            "--csv eval.json: it holds something other than a comparison's CSV (its first line: "
            "'{\"mean_normalized\": 50}')"},
           {"''", "--csv: expected a file name, got ''"}}) {
    const testing::CommandResult r = run_minrnn(dir, "compare a b --csv " + csv);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    testing::expect_output_naming(r, {said});
  }
  EXPECT_EQ(testing::read_text(dir.path / "eval.json"), "{\"mean_normalized\": 50}\n");
  // A comparison's CSV of today, and one of an older minrnn (before verdict and settings_apart):
  // the sweeps are read next (here there are none).
  write_text(dir.path / "old.csv",
             "dataset,backbone,from_step,to_step,evaluations,n_a,mean_a,std_a,n_b,mean_b,std_b,"
             "difference,standard_error,within_noise\n");
  write_text(dir.path / "new.csv", eval::comparison_csv({}));
  EXPECT_EQ(eval::comparison_csv({}).rfind("dataset,backbone,from_step,to_step,", 0), 0u);
  for (const char* csv : {"old.csv", "new.csv"}) {
    const testing::CommandResult r = run_minrnn(dir, std::string("compare a b --csv ") + csv);
    testing::expect_failure_naming(r, {"a: no such sweep directory"});
    EXPECT_EQ(r.output.find("--csv"), std::string::npos) << r.output;
  }
}

// Data that cannot fit in memory is refused before it is made: `data synth` failed with a bare
// std::bad_alloc, `collect` would have sampled for days (a walk, 2026-11-29). The largest --steps
// of HalfCheetah, twice for medium-expert, are ~1 TB and ~2 TB.
TEST(CliInput, DataPastTheMachinesMemoryIsRefusedBeforeItIsMade) {
  if (rl::machine_memory_bytes() > 1e12) GTEST_SKIP() << "a machine of more than 1 TB";
  TempDir dir;
  for (const auto& [command, said] : std::vector<std::pair<std::string, std::string>>{
           {"data synth s.hdf5 --env halfcheetah --steps 2147483647",
            "--steps: 2147483647 transitions to write need at least "},
           {"collect halfcheetah medium-expert --steps 1100000000 --out s.hdf5",
            "--steps: 2200000000 transitions to write need at least "}}) {
    const testing::CommandResult r = run_minrnn(dir, command);
    testing::expect_failure_naming(r, {said, "more than this machine's"});
    EXPECT_FALSE(fs::exists(dir.path / "s.hdf5")) << command;
  }
}

// A folder the command makes is a DIR in the help, not CLI11's TEXT:DIR of one that must exist
// (a walk, 2026-11-29).
TEST(CliInput, HelpShowsFoldersThatMayBeNewAsDir) {
  TempDir dir;
  for (const auto& [command, option] :
       std::vector<std::pair<std::string, std::string>>{{"train --help", "--run-dir DIR"},
                                                        {"eval --help", "--video DIR"},
                                                        {"sweep --help", "--out DIR"}}) {
    const testing::CommandResult help = run_minrnn(dir, command);
    EXPECT_NE(help.output.find(option), std::string::npos) << help.output;
    EXPECT_EQ(help.output.find(":DIR"), std::string::npos) << help.output;
  }
}

// A collection in which no episode ended is refused, not written with a mean return of nothing (a
// walk through the commands, 2026-11-29: "0 finished episodes, mean return 0.0 (normalized 0.6)",
// exit 0, and a file no reader takes).
TEST(CliInput, ACollectionWithNoFinishedEpisodeWritesNothing) {
  TempDir dir;
  const auto r = run_minrnn(dir, "collect hopper random --steps 1 --out r.hdf5");
  expect_failure_naming(r, {"--steps 1: no episode ended in the 1 steps collected",
                            "nothing written to r.hdf5. Raise --steps"});
  EXPECT_FALSE(fs::exists(dir.path / "r.hdf5"));
}

}  // namespace
}  // namespace minrnn
