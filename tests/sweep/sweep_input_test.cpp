// A sweep file's entries name run directories: an entry that would put a run outside `out` or two
// runs in one directory, a negative seed, a key given twice, is refused naming the key and the file
// (an audit of train/sweep input, 2026-11-28); an unquoted placeholder's YAML error, and runs
// asking for a device this machine lacks.
#include <gtest/gtest.h>

#include <string>

#include "sweep/sweep.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

const std::string kOneBackboneOneSeed = "backbones: [mingru]\nseeds: [0]\n";

// The error names the file, the key and what was given.
void expect_file_refused(const std::string& yaml, const std::string& key,
                         const std::string& given) {
  const std::string err = testing::sweep_error_of(yaml);
  EXPECT_NE(err.find("my_sweep.yaml"), std::string::npos) << yaml << " -> " << err;
  EXPECT_NE(err.find("'" + key + "'"), std::string::npos) << yaml << " -> " << err;
  EXPECT_NE(err.find(given), std::string::npos) << yaml << " -> " << err;
}

// An unquoted placeholder inside a flow list is YAML's map syntax: the error says to quote it (a
// walk, 2026-11-30: yaml-cpp's "end of sequence flow not found" alone); elsewhere no such word.
TEST(SweepFile, AnUnquotedBraceInAListIsSaidToNeedQuotes) {
  const std::string err = testing::sweep_error_of("datasets: [d]\n" + kOneBackboneOneSeed +
                                                  "set: [dataset=data/{dataset}.hdf5]\n");
  EXPECT_NE(err.find("my_sweep.yaml: not valid YAML: "), std::string::npos) << err;
  EXPECT_NE(err.find("(a '{' inside [...] starts a YAML map: quote a value that holds one"),
            std::string::npos)
      << err;
  const std::string other = testing::sweep_error_of("datasets: [d\n" + kOneBackboneOneSeed);
  EXPECT_NE(other.find("not valid YAML"), std::string::npos) << other;
  EXPECT_EQ(other.find("quote"), std::string::npos) << other;
}

TEST(SweepFile, DatasetLabelsArePlainFolderNames) {
  // plots/ and slurm/ are the report's and a Slurm submission's folders in `out`.
  for (const std::string label : {"/abs/escaped", "../../evil", "a/b", ".", "..", "plots", "slurm"})
    expect_file_refused("datasets: ['" + label + "']\n" + kOneBackboneOneSeed, "datasets",
                        "'" + label + "'");
  expect_file_refused("datasets: ['']\n" + kOneBackboneOneSeed, "datasets", "got ''");
  EXPECT_EQ(testing::sweep_error_of("datasets: [hopper-medium, a.b..c]\n" + kOneBackboneOneSeed),
            "");
  // They name the report's files and its table's rows: a length those names can take, one line.
  expect_file_refused("datasets: ['" + std::string(101, 'x') + "']\n" + kOneBackboneOneSeed,
                      "datasets", "is 101 characters; a label names files of the report");
  EXPECT_EQ(testing::sweep_error_of("datasets: ['" + std::string(100, 'x') + "']\n" +
                                    kOneBackboneOneSeed),
            "");
  expect_file_refused("datasets: [\"a\\nb|c\"]\n" + kOneBackboneOneSeed, "datasets",
                      "a control character (a newline, a tab) at character 2");
}

TEST(SweepFile, AnEntryGivenTwiceIsRefused) {
  expect_file_refused("datasets: [a, b, a]\n" + kOneBackboneOneSeed, "datasets",
                      "'a' is given twice");
  expect_file_refused("datasets: [a]\nbackbones: [mingru, mingru]\nseeds: [0]\n", "backbones",
                      "'mingru' is given twice");
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nseeds: [0, 1, 0]\n", "seeds",
                      "0 is given twice");
  // A key given twice: yaml-cpp keeps both, and the last would silently win.
  expect_file_refused("datasets: [a]\n" + kOneBackboneOneSeed + "parallel: 2\nparallel: 3\n",
                      "parallel", "given twice (lines 4 and 5)");
  expect_file_refused("datasets: [a]\n" + kOneBackboneOneSeed + "slurm: {gpus: 1, gpus: 2}\n",
                      "gpus", "twice");
}

TEST(SweepFile, EachOfTheThreeListsIsRequired) {
  expect_file_refused(kOneBackboneOneSeed, "datasets", "missing");
  expect_file_refused("datasets: [a]\nseeds: [0]\n", "backbones", "missing");
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nparallel: 2\n", "seeds", "missing");
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nseeds:\n", "seeds",
                      "expected a non-empty list of integers");
}

TEST(SweepFile, SeedsAreWholeNumbersFromZero) {
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nseeds: [0, -1]\n", "seeds", "got -1");
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nseeds: [99999999999999999999]\n",
                      "seeds", "99999999999999999999");
  expect_file_refused("datasets: [a]\nbackbones: [mingru]\nseeds: [9007199254740993]\n", "seeds",
                      "expected seeds from 0 to 9007199254740992");
}

TEST(SweepFile, OutIsADirectoryAndCountsSayTheirRange) {
  expect_file_refused("datasets: [a]\n" + kOneBackboneOneSeed + "out: ''\n", "out", "got ''");
  expect_file_refused("datasets: [a]\n" + kOneBackboneOneSeed + "parallel: 1000000\n", "parallel",
                      "expected 1 to 4096, got 1000000");
  expect_file_refused("datasets: [a]\n" + kOneBackboneOneSeed + "pack: 1000000\n", "pack",
                      "1 to 4096");
}

// Runs to train on a device this machine lacks are refused before anything starts (a walk,
// 2026-11-30: device=cuda without a GPU planned fine, then every run failed alone); cuda:7 is on
// no machine the tests run on.
TEST(SweepPlan, ADeviceThisMachineCannotUseIsRefusedBeforeAnyRun) {
  testing::TempDir tmp;
  const auto d4rl = testing::provide_tiny_config_dataset(tmp.path);
  sweep::SweepSpec s = sweep::parse_sweep("datasets: [d]\nbackbones: [mingru]\nseeds: [0, 1]\n",
                                          (tmp.path / "s.yaml").string());
  s.config_template = testing::kTinyConfig;
  s.out = (tmp.path / "out").string();
  s.sets = {"device=cuda:7"};
  try {
    sweep::refuse_unusable_device(s, sweep::plan_sweep(s));
    FAIL() << "planned runs on cuda:7";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml: 2 run(s) to train ask for device cuda:7; "
                                         "nothing was started: "),
              std::string::npos)
        << e.what();
  }
  s.sets = {"device=cpu"};
  EXPECT_NO_THROW(sweep::refuse_unusable_device(s, sweep::plan_sweep(s)));
}

}  // namespace
}  // namespace minrnn
