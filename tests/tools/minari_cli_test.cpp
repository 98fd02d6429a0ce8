// Minari datasets through the `minrnn` binary: collect one in Gymnasium v5 (--format minari),
// inspect it, train on it, evaluate: the run must be evaluated in the env the dataset names, with
// the dataset's reference scores. Bad metadata is refused by name, before any training.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/paths.h"
#include "tests/run_command.h"
#include "tests/scoped_env.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

using Result = testing::CommandResult;

using testing::expect_failure_naming;
using testing::read_text;
using testing::run_minrnn;
using testing::write_text;

const char* kTinyMinariConfig =
    "dataset: m\nbackbone: mingru\nn_layers: 1\nembed_dim: 16\ncontext_len: 5\nbatch_size: 4\n"
    "max_steps: 4\nwarmup_steps: 1\neval_every: 0\neval_episodes: 2\ncheckpoint_every: 2\n"
    "log_every: 1\ntarget_return: 3600\n";

// A small Hopper-v5 dataset in Minari layout at <dir>/m, with reference scores of its own.
void collect_minari(const TempDir& dir) {
  const Result r = run_minrnn(dir,
                              "collect hopper-v5 random --steps 400 --format minari "
                              "--dataset-id test/hopper/random-v0 --out m "
                              "--ref-min-score -10 --ref-max-score 90");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(dir.path / "m" / "data" / "main_data.hdf5")) << r.output;
  ASSERT_TRUE(fs::exists(dir.path / "m" / "data" / "metadata.json")) << r.output;
  // The summary counts the steps written (finished episodes), as metadata.json does.
  const auto meta = nlohmann::json::parse(read_text(dir.path / "m" / "data" / "metadata.json"));
  EXPECT_NE(r.output.find("wrote m: " + std::to_string(meta["total_steps"].get<int64_t>()) +
                          " steps of Hopper-v5"),
            std::string::npos)
      << r.output;
}

TEST(MinariCli, CollectInspectTrainEvalInTheDatasetsEnv) {
  TempDir dir;
  collect_minari(dir);
  const auto meta = nlohmann::json::parse(read_text(dir.path / "m" / "data" / "metadata.json"));
  EXPECT_EQ(meta["dataset_id"], "test/hopper/random-v0");
  EXPECT_NE(meta["env_spec"].get<std::string>().find("\"id\": \"Hopper-v5\""), std::string::npos);
  EXPECT_EQ(meta["ref_min_score"], -10.0);

  const Result inspect = run_minrnn(dir, "data inspect m --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  const auto j = nlohmann::json::parse(inspect.output);
  EXPECT_EQ(j["format"], "minari");
  EXPECT_EQ(j["collected_here"], true);  // its description says `minrnn collect` (walk 46)
  EXPECT_EQ(j["env_id"], "Hopper-v5");
  EXPECT_EQ(j["env_version"], 5);
  EXPECT_EQ(j["env_source"], "metadata.json eval_env_spec");
  EXPECT_EQ(j["normalized_return"]["ref_min"], -10.0);
  EXPECT_EQ(j["normalized_return"]["ref_max"], 90.0);
  const Result text = run_minrnn(dir, "data inspect m");
  EXPECT_NE(text.output.find("Hopper-v5 (Gymnasium v5 semantics"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("ref_min_score -10, ref_max_score 90"), std::string::npos)
      << text.output;

  write_text(dir.path / "c.yaml", kTinyMinariConfig);
  const Result train = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto env = nlohmann::json::parse(read_text(dir.path / "run" / "env.json"));
  EXPECT_EQ(env["env"], "hopper-v5");
  EXPECT_EQ(env["env_id"], "Hopper-v5");
  EXPECT_EQ(env["env_version"], 5);
  EXPECT_EQ(env["ref_min_score"], -10.0);
  EXPECT_EQ(env["dataset_collected_by_minrnn"], true);
  EXPECT_EQ(env["dataset_made_by"], "minrnn collect");
  EXPECT_NE(read_text(dir.path / "run" / "done.json").find("\"env_id\": \"Hopper-v5\""),
            std::string::npos);

  const Result eval = run_minrnn(dir, "eval run --episodes 2 --replace");
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_NE(eval.output.find("Hopper-v5"), std::string::npos) << eval.output;
  const auto e = nlohmann::json::parse(read_text(dir.path / "run" / "eval.json"));
  EXPECT_EQ(e["env_id"], "Hopper-v5");
  EXPECT_EQ(e["env_version"], 5);
  EXPECT_EQ(e["ref_min_score"], -10.0);
  EXPECT_EQ(e["ref_max_score"], 90.0);
  EXPECT_EQ(e["ref_source"], "metadata.json ref_min_score/ref_max_score");
  for (size_t i = 0; i < e["returns"].size(); ++i) {
    const double ret = e["returns"][i];
    EXPECT_NEAR(e["normalized_scores"][i].get<double>(), 100.0 * (ret + 10.0) / 100.0, 1e-9);
  }
}

// Rewrites one key of <dir>/m/data/metadata.json.
void set_metadata(const TempDir& dir, const std::string& key, const nlohmann::json& value) {
  const fs::path path = dir.path / "m" / "data" / "metadata.json";
  auto meta = nlohmann::json::parse(read_text(path));
  meta[key] = value;
  write_text(path, meta.dump());
}

// `--out DIR/` (a trailing slash, as shell completion writes it) is the directory DIR.
TEST(MinariCli, CollectIntoADirectoryGivenWithATrailingSlash) {
  TempDir dir;
  for (const char* force : {"", " --force"}) {
    const Result r = run_minrnn(dir, std::string("collect hopper-v5 random --steps 300 --format "
                                                 "minari --dataset-id test/hopper/random-v0 "
                                                 "--out m/") +
                                         force);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(fs::exists(dir.path / "m" / "data" / "main_data.hdf5")) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path / "m.tmp"));
  EXPECT_FALSE(fs::exists(dir.path / "m.old"));
}

// An --out under the Minari datasets root is the id minari.load_dataset finds it by (it recorded
// minrnn/hopper/random-v0 wherever it went: a walk, 2026-11-29); an --dataset-id naming another
// place there is refused before anything is collected; elsewhere the default id is a label.
TEST(MinariCli, AnOutUnderTheDatasetsRootIsTheDatasetsId) {
  TempDir dir;
  const testing::ScopedEnv root("MINARI_DATASETS_PATH", (dir.path / "root").string());
  const std::string collect = "collect hopper-v5 random --steps 300 --format minari ";
  fs::create_directories(dir.path / "root" / "mine");  // an --out's folder must be there
  const Result r = run_minrnn(dir, collect + "--out root/mine/hop-v0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto id = [&](const std::string& at) {
    return nlohmann::json::parse(read_text(dir.path / at / "data" / "metadata.json"))["dataset_id"];
  };
  EXPECT_EQ(id("root/mine/hop-v0"), "mine/hop-v0");
  expect_failure_naming(run_minrnn(dir, collect + "--out root/mine/hop-v1 --dataset-id a/b-v0"),
                        {"--out root/mine/hop-v1 is where Minari looks for 'mine/hop-v1', but "
                         "--dataset-id is 'a/b-v0'"});
  EXPECT_FALSE(fs::exists(dir.path / "root/mine/hop-v1"));
  ASSERT_EQ(run_minrnn(dir, collect + "--out elsewhere").exit_code, 0);
  EXPECT_EQ(id("elsewhere"), "minrnn/hopper-v5/random-v0");
}

// --force replaces a Minari dataset, never a folder of other files named by a slip of --out.
TEST(MinariCli, ForceReplacesOnlyADataset) {
  TempDir dir;
  fs::create_directories(dir.path / "notes");
  write_text(dir.path / "notes" / "thesis.tex", "mine\n");
  expect_failure_naming(
      run_minrnn(dir, "collect hopper-v5 random --steps 300 --format minari --out notes --force"),
      {"notes: exists and is not a Minari dataset (no data/main_data.hdf5): not replaced"});
  EXPECT_EQ(read_text(dir.path / "notes" / "thesis.tex"), "mine\n");
  // A dataset's folder holding a user's files too is refused naming them, not emptied (a walk,
  // 2026-12-01: NOTES.md and plots/ were deleted); one of the dataset's own files alone is
  // replaced.
  const std::string collect = "collect hopper-v5 random --steps 300 --format minari --out m ";
  ASSERT_EQ(run_minrnn(dir, collect).exit_code, 0);
  ASSERT_EQ(run_minrnn(dir, collect + "--force").exit_code, 0);
  const std::string data = read_text(dir.path / "m" / "data" / "main_data.hdf5");
  write_text(dir.path / "m" / "NOTES.md", "my analysis\n");
  fs::create_directories(dir.path / "m" / "plots");
  write_text(dir.path / "m" / "plots" / "p.svg", "x\n");
  expect_failure_naming(run_minrnn(dir, collect + "--force --seed 1"),
                        {"m: a Minari dataset with other files in it (NOTES.md, plots), which "
                         "replacing it would delete: not replaced"});
  EXPECT_EQ(read_text(dir.path / "m" / "NOTES.md"), "my analysis\n");
  EXPECT_EQ(read_text(dir.path / "m" / "plots" / "p.svg"), "x\n");
  EXPECT_EQ(read_text(dir.path / "m" / "data" / "main_data.hdf5"), data);
}

// The reference scores are checked before anything is collected, by the options' names: not a
// number past float's range, nor NaN read as "not given", nor a pair that cannot scale.
TEST(MinariCli, ReferenceScoresAreCheckedBeforeCollecting) {
  TempDir dir;
  const std::string collect = "collect hopper-v5 random --steps 300 --out m ";
  expect_failure_naming(
      run_minrnn(dir, collect + "--format minari --ref-min-score 0 --ref-max-score inf"),
      {"--ref-max-score", "got 'inf'"});
  expect_failure_naming(run_minrnn(dir, collect + "--format minari --ref-min-score nan"),
                        {"--ref-min-score", "got 'nan'"});
  expect_failure_naming(
      run_minrnn(dir, collect + "--format minari --ref-min-score 10 --ref-max-score 10"),
      {"--ref-max-score (10.000000) must exceed --ref-min-score (10.000000)"});
  expect_failure_naming(run_minrnn(dir, collect + "--ref-min-score 0 --ref-max-score 100"),
                        {"are for --format minari"});
  expect_failure_naming(run_minrnn(dir, "collect hopper medium --target nan --out d.hdf5"),
                        {"--target", "got 'nan'"});
  EXPECT_FALSE(fs::exists(dir.path / "m"));
  EXPECT_FALSE(fs::exists(dir.path / "data"));
}

TEST(MinariCli, BadMetadataIsRefusedByNameBeforeAnyTraining) {
  TempDir dir;
  collect_minari(dir);
  const std::string spec =
      nlohmann::json::parse(read_text(dir.path / "m" / "data" / "metadata.json"))["env_spec"];
  write_text(dir.path / "c.yaml", kTinyMinariConfig);
  struct Case {
    std::string key;
    nlohmann::json value;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {"eval_env_spec",
       std::regex_replace(spec, std::regex("Hopper-v5"), "Ant-v5"),
       {"eval_env_spec.id = \"Ant-v5\"", "unknown environment",
        // D4RL's ids by their pattern, not 18 names (a walk, 2026-11-30: ~900 characters)
        "D4RL ids: <env>-<quality>-v2, quality one of random, medium, medium-replay"}},
      {"eval_env_spec",
       std::regex_replace(spec, std::regex("Hopper-v5"), "Hopper-v9"),
       {"eval_env_spec.id = \"Hopper-v9\"", "not v9"}},
      {"eval_env_spec",
       std::regex_replace(spec, std::regex("\"kwargs\": \\{\\}"),
                          "\"kwargs\": {\"xml_file\": \"/tmp/mine.xml\"}"),
       {"eval_env_spec.kwargs.xml_file = \"/tmp/mine.xml\"", "custom model"}},
      {"eval_env_spec",
       std::regex_replace(spec, std::regex("\"kwargs\": \\{\\}"),
                          "\"kwargs\": {\"exclude_current_positions_from_observation\": false}"),
       {"dims 11/3", "Hopper-v5 has 12/3"}},
      {"action_space",
       R"({"type": "Box", "dtype": "float32", "shape": [3], "low": [-2.0, -2.0, -2.0], "high": [2.0, 2.0, 2.0]})",
       {"action_space.low = [-2, -2, -2]", "[-1, 1]"}},
      {"observation_space",
       R"({"type": "Dict", "subspaces": {"observation": {"type": "Box", "dtype": "float64", "shape": [11], "low": -Infinity, "high": Infinity}}})",
       {"observation_space = {\"type\": \"Dict\"", "Box observation and action spaces only"}},
      {"observation_space",
       R"({"type": "Box", "dtype": "float64", "shape": [12], "low": -Infinity, "high": Infinity})",
       {"observation_space.shape = [12]", "11 columns"}},
  };
  const std::string good = read_text(dir.path / "m" / "data" / "metadata.json");
  for (const auto& c : cases) {
    write_text(dir.path / "m" / "data" / "metadata.json", good);
    set_metadata(dir, c.key, c.value);
    expect_failure_naming(run_minrnn(dir, "data inspect m"), c.named);
    const Result train = run_minrnn(dir, "train c.yaml --seed 0 --run-dir run --quiet --force");
    expect_failure_naming(train, c.named);
    EXPECT_FALSE(fs::exists(dir.path / "run" / "checkpoint.pt")) << c.key;
    EXPECT_FALSE(fs::exists(dir.path / "run" / "metrics.csv")) << c.key;
  }
  // The env_spec alone (no eval_env_spec) decides when there is no eval_env_spec.
  write_text(dir.path / "m" / "data" / "metadata.json", good);
  {
    auto meta = nlohmann::json::parse(good);
    meta.erase("eval_env_spec");
    meta["env_spec"] = std::regex_replace(spec, std::regex("Hopper-v5"), "Hopper-v4");
    write_text(dir.path / "m" / "data" / "metadata.json", meta.dump());
  }
  const Result v4 = run_minrnn(dir, "data inspect m --json");
  ASSERT_EQ(v4.exit_code, 0) << v4.output;
  EXPECT_EQ(nlohmann::json::parse(v4.output)["env_id"], "Hopper-v4");
  EXPECT_EQ(nlohmann::json::parse(v4.output)["env_source"], "metadata.json env_spec");
}

// D4RL's layout has no field for the env; a file `minrnn collect` writes keeps its Gymnasium spec
// in metadata/env_spec, so a v5 collection is not evaluated as v4.
TEST(MinariCli, D4rlLayoutCollectionsRecordTheirEnv) {
  TempDir dir;
  const Result r = run_minrnn(dir, "collect walker2d-v5 random --steps 300 --out w.hdf5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Result inspect = run_minrnn(dir, "data inspect w.hdf5 --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  const auto j = nlohmann::json::parse(inspect.output);
  EXPECT_EQ(j["format"], "d4rl");
  EXPECT_EQ(j["env_id"], "Walker2d-v5");
  EXPECT_EQ(j["env_source"], "the file's metadata/env_spec");
  EXPECT_NE(j["metadata"]["env_spec"].get<std::string>().find("walker2d_v5:Walker2dEnv"),
            std::string::npos);
}

}  // namespace
}  // namespace minrnn
