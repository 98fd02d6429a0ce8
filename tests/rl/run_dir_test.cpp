// What a run directory holds after kills, resumes and --force: every file the report reads says
// what one run did, once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "rl/run_dir.h"
#include "rl/trainer.h"
#include "tests/rl/fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

using Fixture = testing::TrainFixture;
using testing::steps_of;

// metrics.csv's last row, by its header's names: a torn last line is no row, an older file's
// missing column reads 0, a file without header has ProgressLog's columns.
TEST(RunDir, TheLastMetricsRowIsReadByItsHeader) {
  testing::TempDir dir;
  const std::string csv = (dir.path / "metrics.csv").string();
  EXPECT_FALSE(rl::last_metrics_row(csv));  // no file
  testing::write_text(csv, "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n");
  EXPECT_FALSE(rl::last_metrics_row(csv));  // a header alone
  testing::write_text(csv,
                      "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n10,0.5,1e-4,2,30,4\n"
                      "20,0.25,2e-4,1.5,40,6.5\n30,0.1");
  auto row = rl::last_metrics_row(csv);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->step, 20);
  EXPECT_DOUBLE_EQ(row->loss, 0.25);
  EXPECT_DOUBLE_EQ(row->lr, 2e-4);
  EXPECT_DOUBLE_EQ(row->steps_per_s, 40);
  EXPECT_DOUBLE_EQ(row->elapsed_s, 6.5);
  testing::write_text(csv, "step,loss,steps_per_s\n7,0.75,12\n");  // before lr and elapsed_s
  row = rl::last_metrics_row(csv);
  ASSERT_TRUE(row);
  EXPECT_DOUBLE_EQ(row->steps_per_s, 12);
  EXPECT_DOUBLE_EQ(row->elapsed_s, 0);
  testing::write_text(csv, "5,0.5,1e-4,2,30,4\n");
  ASSERT_TRUE(rl::last_metrics_row(csv));
  EXPECT_DOUBLE_EQ(rl::last_metrics_row(csv)->elapsed_s, 4);
}

TEST(RunDir, AKillAfterTheFinalCheckpointIsFinishedOnRerun) {
  Fixture f;
  const auto cfg =
      testing::tiny_config(f.data, "mingru", {"max_steps=4", "checkpoint_every=2", "eval_every=2"});
  const auto killed = rl::train(cfg, f.options(/*stop_after=*/4));
  EXPECT_FALSE(killed.finished);
  EXPECT_FALSE(fs::exists(f.run / "done.json"));
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{2}));  // the kill came before the final one

  const auto rerun = rl::train(cfg, f.options());
  EXPECT_TRUE(rerun.finished);
  EXPECT_EQ(rerun.resumed_from, 4);
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4}));
  ASSERT_TRUE(fs::exists(f.run / "done.json"));
  EXPECT_NE(testing::read_text(f.run / "done.json").find("\"step\": 4"), std::string::npos);
  EXPECT_EQ(testing::read_text(f.run / "done.json").find("\"last_loss\": 0}"), std::string::npos)
      << "the last loss comes from metrics.csv: " << testing::read_text(f.run / "done.json");
}

TEST(RunDir, AnEvaluationKilledBeforeItsRowIsRedoneOnResume) {
  Fixture f;
  const auto cfg =
      testing::tiny_config(f.data, "mingru", {"max_steps=6", "checkpoint_every=2", "eval_every=2"});
  rl::train(cfg, f.options(/*stop_after=*/2));  // killed between checkpoint 2 and its evaluation
  EXPECT_TRUE(f.evaluated.empty());
  rl::train(cfg, f.options());
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 6}));
}

TEST(RunDir, ResumeDropsRowsWrittenAfterTheCheckpoint) {
  Fixture f;
  const auto cfg = testing::tiny_config(
      f.data, "mingru", {"max_steps=6", "checkpoint_every=3", "eval_every=1", "log_every=1"});
  rl::train(cfg, f.options(/*stop_after=*/3));
  // What a process killed at step 5 leaves: rows past the checkpoint, the last one torn.
  std::ofstream(f.run / "evals.csv", std::ios::app) << "4,1,0,1,0\n5,1,0,1,0\n6,1";
  std::ofstream(f.run / "metrics.csv", std::ios::app) << "4,0.5,0,0,1,1\n5,0.4";
  f.evaluated.clear();
  const auto result = rl::train(cfg, f.options());
  EXPECT_EQ(result.resumed_from, 3);
  // 3 too: the kill came between checkpoint 3 and its evaluation.
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(steps_of(f.run / "metrics.csv", true), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(RunDir, ForceRemovesEveryOutputOfTheOldRun) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=4", "eval_every=2"}), f.options());
  for (const char* name : {"eval.json", "eval-episodes3.json"})
    std::ofstream(f.run / name) << "{\"mean_normalized\": 1}\n";
  std::ofstream(f.run / "notes.txt") << "mine\n";

  // Retrained with another config and no evaluation: nothing of the old run may remain.
  auto cfg = testing::tiny_config(f.data, "mingru", {"max_steps=2"});
  auto opt = f.options();
  try {
    rl::train(cfg, opt);
    FAIL() << "a finished run was replaced without --force";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  opt.force = true;
  opt.evaluate = nullptr;
  rl::train(cfg, opt);
  EXPECT_FALSE(fs::exists(f.run / "evals.csv"));
  EXPECT_FALSE(fs::exists(f.run / "eval.json"));
  EXPECT_FALSE(fs::exists(f.run / "eval-episodes3.json"));
  EXPECT_EQ(steps_of(f.run / "metrics.csv", true), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(testing::read_text(f.run / "notes.txt"), "mine\n");  // not an output of ours
  EXPECT_EQ(rl::load_agent(f.run.string()).step, 2);
}

TEST(RunDir, AnotherConfigIsRefusedNamingTheKeys) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=4"}), f.options(/*stop_after=*/2));
  try {
    rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=8", "lr=0.002"}), f.options());
    FAIL() << "resumed with another config";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("max_steps: 4 -> 8"), std::string::npos) << what;
    EXPECT_NE(what.find("lr: 0.001 -> 0.002"), std::string::npos) << what;
  }
}

// The message `train(cfg, opt)` is refused with ("" where it trains).
std::string refusal_of(const rl::TrainConfig& cfg, const rl::TrainOptions& opt) {
  try {
    rl::train(cfg, opt);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A run whose config.yaml is gone (deleted by hand) is of a config nobody can tell: resumed under
// another lr it trained on without a word, extended it said it was done (a walk, 2026-11-29). And
// a config.yaml saying another config than its checkpoint holds is refused naming the keys, not in
// LibTorch's words, before anything in the run dir changes.
TEST(RunDir, ARunWhoseConfigYamlIsGoneOrNotItsCheckpointsIsRefused) {
  Fixture f;
  const std::vector<std::string> sets = {"max_steps=4", "checkpoint_every=2"};
  const rl::TrainConfig cfg = testing::tiny_config(f.data, "mingru", sets);
  ASSERT_FALSE(rl::train(cfg, f.options(/*stop_after=*/2)).finished);
  const std::string config = testing::read_text(f.run / "config.yaml");
  fs::remove(f.run / "config.yaml");
  rl::TrainOptions extend = f.options();
  extend.extend = true;
  for (const auto& [sets_now, opt] :
       std::vector<std::pair<std::vector<std::string>, rl::TrainOptions>>{
           {{"max_steps=4", "checkpoint_every=2", "lr=0.05"}, f.options()},
           {{"max_steps=8", "checkpoint_every=2"}, extend}}) {
    const std::string what = refusal_of(testing::tiny_config(f.data, "mingru", sets_now), opt);
    EXPECT_NE(what.find(f.run.string() +
                        " holds a run (no config.yaml beside its checkpoint.pt): what it was "
                        "trained with is unknown"),
              std::string::npos)
        << what;
  }
  EXPECT_FALSE(fs::exists(f.run / "config.yaml"));
  // Edited to another embed_dim, and asked with it: the checkpoint says what it holds.
  const rl::TrainConfig wider =
      testing::tiny_config(f.data, "mingru", {"max_steps=4", "checkpoint_every=2", "embed_dim=24"});
  testing::write_text(f.run / "config.yaml", rl::to_yaml(wider));
  const std::string env = testing::read_text(f.run / "env.json");
  const std::string what = refusal_of(wider, f.options());
  EXPECT_NE(what.find((f.run / "checkpoint.pt").string() + " was trained with another config ("),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("embed_dim: 16 -> 24"), std::string::npos) << what;
  EXPECT_EQ(testing::read_text(f.run / "config.yaml"), rl::to_yaml(wider));
  EXPECT_EQ(testing::read_text(f.run / "env.json"), env);
  // Asked as the checkpoint was trained, config.yaml edited: the refusal says to put it back
  // (walk 47: its one advice was --force, which throws the training away).
  const std::string edited = refusal_of(cfg, f.options());
  EXPECT_NE(edited.find(f.run.string() +
                        "/config.yaml differs from this config (embed_dim: 24 -> 16); but its "
                        "checkpoint.pt was trained with this config: config.yaml was edited? Put "
                        "back its values and the run resumes; use another --run-dir or --force"),
            std::string::npos)
      << edited;
  // Put back, the run resumes.
  testing::write_text(f.run / "config.yaml", config);
  EXPECT_TRUE(rl::train(cfg, f.options()).finished);
  // An extension of the finished run under the edited config: refused before its results move
  // aside and config.yaml takes the larger budget.
  testing::write_text(f.run / "config.yaml", rl::to_yaml(wider));
  testing::write_text(f.run / "eval.json", "{\"mean_normalized\": 1}\n");
  const std::string further = refusal_of(
      testing::tiny_config(f.data, "mingru", {"max_steps=8", "checkpoint_every=2", "embed_dim=24"}),
      extend);
  EXPECT_NE(further.find("embed_dim: 16 -> 24"), std::string::npos) << further;
  EXPECT_TRUE(fs::exists(f.run / "done.json"));
  EXPECT_TRUE(fs::exists(f.run / "eval.json"));
  EXPECT_FALSE(fs::exists(f.run / "done-step4.json"));
  EXPECT_EQ(testing::read_text(f.run / "config.yaml"), rl::to_yaml(wider));
}

// A metrics.csv whose first line is neither a run's header nor a row is refused by a resume, not
// kept with the new rows going on under it.
TEST(RunDir, AResumeRefusesAMetricsCsvWhoseHeaderIsNotARunsOne) {
  Fixture f;
  const rl::TrainConfig cfg =
      testing::tiny_config(f.data, "mingru", {"max_steps=4", "checkpoint_every=2"});
  ASSERT_FALSE(rl::train(cfg, f.options(/*stop_after=*/2)).finished);
  testing::write_text(f.run / "metrics.csv", std::string("garbage,\0\1\n1,0.5\n", 17));
  const std::string what = refusal_of(cfg, f.options());
  EXPECT_NE(what.find("metrics.csv: its first line is neither the header a run writes"),
            std::string::npos)
      << what;
  fs::remove(f.run / "metrics.csv");  // moved away: the run goes on, its curve from step 2
  EXPECT_TRUE(rl::train(cfg, f.options()).finished);
  EXPECT_EQ(steps_of(f.run / "metrics.csv", true), (std::vector<int64_t>{3, 4}));
}

// A folder that holds no run but files of a run's names (a user's eval.json, evaluations of a bare
// checkpoint) is not a run to replace: --force removed every eval*.json there.
TEST(RunDir, AFolderOfRunFileNamesButNoRunIsNotTakenOver) {
  Fixture f;
  fs::create_directories(f.run);
  testing::write_text(f.run / "eval.json", "{\"my\": \"data\"}\n");
  testing::write_text(f.run / "eval-mine-episodes1.json", "{}\n");
  rl::TrainOptions force = f.options();
  force.force = true;
  for (const rl::TrainOptions& opt : {f.options(), force}) {
    const std::string what =
        refusal_of(testing::tiny_config(f.data, "mingru", {"max_steps=2"}), opt);
    EXPECT_NE(what.find(" holds eval"), std::string::npos) << what;
    EXPECT_NE(what.find("but no run (no config.yaml, checkpoint.pt or done.json)"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(testing::read_text(f.run / "eval.json"), "{\"my\": \"data\"}\n");
  EXPECT_TRUE(fs::exists(f.run / "eval-mine-episodes1.json"));
  EXPECT_FALSE(fs::exists(f.run / "config.yaml"));
}

// A resume reads the data the run trained on, or is refused naming both: the same `dataset` text
// can read other data (a relative path from another working directory, a file changed since;
// an audit, 2026-11-29: such a resume trained on and normalized by the other data, silently).
TEST(RunDir, AResumeOnOtherDataIsRefused) {
  Fixture f;
  const rl::TrainConfig cfg =
      testing::tiny_config(f.data, "mingru", {"max_steps=4", "checkpoint_every=2"});
  EXPECT_FALSE(rl::train(cfg, f.options(/*stop_after=*/2)).finished);
  ASSERT_EQ(rl::load_agent(f.run.string()).step, 2);
  const nlohmann::json env = nlohmann::json::parse(testing::read_text(f.run / "env.json"));
  EXPECT_EQ(env["dataset_steps"], 300);
  EXPECT_EQ(env["dataset_collected_by_minrnn"], false);  // no metadata/env_spec: D4RL's layout
  EXPECT_EQ(env["dataset_made_by"], "");
  EXPECT_EQ(env["dataset_fingerprint"].get<std::string>().size(), 16u);
  const std::string checkpoint = testing::read_text(f.run / "checkpoint.pt");
  fs::remove(f.data);
  ASSERT_EQ(testing::write_hopper_dataset(f.tmp.path, 280), f.data);  // the file, changed
  try {
    rl::train(cfg, f.options());
    FAIL() << "resumed on other data";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("env.json: this run trained on"), std::string::npos) << what;
    EXPECT_NE(what.find("(300 steps"), std::string::npos) << what;
    EXPECT_NE(what.find("(280 steps"), std::string::npos) << what;
    EXPECT_NE(what.find("--force"), std::string::npos) << what;
  }
  EXPECT_EQ(testing::read_text(f.run / "checkpoint.pt"), checkpoint);  // the run, untouched
  rl::TrainOptions force = f.options();
  force.force = true;
  EXPECT_TRUE(rl::train(cfg, force).finished);
}

// A damaged env.json is said to be one, not read as "no record" with the data check skipped.
TEST(RunDir, AResumeRefusesAnEnvJsonThatDoesNotRead) {
  Fixture f;
  const rl::TrainConfig cfg =
      testing::tiny_config(f.data, "mingru", {"max_steps=4", "checkpoint_every=2"});
  EXPECT_FALSE(rl::train(cfg, f.options(/*stop_after=*/2)).finished);
  std::ofstream(f.run / "env.json") << "{";
  try {
    rl::train(cfg, f.options());
    FAIL() << "resumed past a damaged env.json";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("env.json: not a JSON object (a damaged file?)"), std::string::npos)
        << what;
  }
  fs::remove(f.run / "env.json");  // as a run from before env.json: resumed, and written anew
  EXPECT_TRUE(rl::train(cfg, f.options()).finished);
  EXPECT_TRUE(nlohmann::json::parse(testing::read_text(f.run / "env.json")).is_object());
}

}  // namespace
}  // namespace minrnn
