// A run extended to a larger max_steps (`train --extend`): it ends as the run asked for the
// larger budget from the start would, its finished results kept, whatever kills it part-way.
#include <gtest/gtest.h>

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

// `f`'s run ends with the weights of a run trained with `sets` from the start in one go.
void expect_weights_of_one_uninterrupted_run(const Fixture& f, const std::vector<std::string>& sets,
                                             int64_t steps) {
  Fixture fresh;
  rl::train(testing::tiny_config(f.data, "mingru", sets), fresh.options());
  EXPECT_EQ(rl::load_agent(f.run.string()).step, steps);
  testing::expect_same_weights(f.run, fresh.run);
}

// --force replaces the whole history, the files --extend kept included.
void expect_force_removes(Fixture& f, const std::vector<std::string>& kept_files) {
  auto opt = f.options();
  opt.force = true;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=2"}), opt);
  for (const auto& name : kept_files) EXPECT_FALSE(fs::exists(f.run / name)) << name;
}

// The learning-rate schedule and every step's randomness ignore max_steps, so a run extended from
// 4 to 8 steps is the run that was asked for 8 from the start.
TEST(RunDir, AnExtendedRunEndsWithTheWeightsOfOneTrainedLongerFromTheStart) {
  Fixture f;
  const std::vector<std::string> every2 = {"checkpoint_every=2", "eval_every=2"};
  auto sets = every2;
  sets.push_back("max_steps=4");
  rl::train(testing::tiny_config(f.data, "mingru", sets), f.options());
  std::ofstream(f.run / "eval.json") << "{\"mean_normalized\": 4}\n";
  std::ofstream(f.run / "eval-episodes3.json") << "{\"mean_normalized\": 3}\n";
  std::ofstream(f.run / "eval-step2-episodes1.json") << "{\"mean_normalized\": 2}\n";
  const std::string done4 = testing::read_text(f.run / "done.json");

  sets.back() = "max_steps=8";
  const auto cfg8 = testing::tiny_config(f.data, "mingru", sets);
  auto opt = f.options();
  try {
    rl::train(cfg8, opt);
    FAIL() << "a finished run was trained further without --extend";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--extend"), std::string::npos) << e.what();
  }
  opt.extend = true;
  f.evaluated.clear();
  const auto extended = rl::train(cfg8, opt);
  EXPECT_TRUE(extended.finished);
  EXPECT_EQ(extended.resumed_from, 4);
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 6, 8}));
  EXPECT_NE(testing::read_text(f.run / "done.json").find("\"step\": 8"), std::string::npos);
  // What the 4-step run reported is kept under its step; eval.json no longer describes the run.
  EXPECT_EQ(testing::read_text(f.run / "done-step4.json"), done4);
  EXPECT_EQ(testing::read_text(f.run / "eval-step4.json"), "{\"mean_normalized\": 4}\n");
  EXPECT_FALSE(fs::exists(f.run / "eval.json"));
  // An ad-hoc evaluation of the finished checkpoint is named for its step too; one of an earlier
  // step's already is.
  EXPECT_EQ(testing::read_text(f.run / "eval-step4-episodes3.json"), "{\"mean_normalized\": 3}\n");
  EXPECT_FALSE(fs::exists(f.run / "eval-episodes3.json"));
  EXPECT_TRUE(fs::exists(f.run / "eval-step2-episodes1.json"));
  EXPECT_EQ(rl::load_agent((f.run / "checkpoint-step4.pt").string()).step, 4);

  expect_weights_of_one_uninterrupted_run(f, sets, 8);
  expect_force_removes(f, {"done-step4.json", "eval-step4.json", "checkpoint-step4.pt"});
}

// A budget off the eval and log cadence (5 with every 2): the finished run's rows at step 5 are not
// rows a run given 8 steps from the start writes, so the extended run's curves drop them.
TEST(RunDir, AnExtensionFromABudgetOffTheCadenceHasTheCurvesOfTheLongerRun) {
  Fixture f;
  std::vector<std::string> sets = {"checkpoint_every=1", "eval_every=2", "log_every=2",
                                   "max_steps=5"};
  rl::train(testing::tiny_config(f.data, "mingru", sets), f.options());
  ASSERT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 5}));
  sets.back() = "max_steps=8";
  auto opt = f.options();
  opt.extend = true;
  ASSERT_TRUE(rl::train(testing::tiny_config(f.data, "mingru", sets), opt).finished);
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 6, 8}));
  EXPECT_EQ(steps_of(f.run / "metrics.csv", true), (std::vector<int64_t>{2, 4, 6, 8}));

  Fixture fresh;
  rl::train(testing::tiny_config(fresh.data, "mingru", sets), fresh.options());
  EXPECT_EQ(steps_of(fresh.run / "evals.csv", true), steps_of(f.run / "evals.csv", true));
  EXPECT_EQ(steps_of(fresh.run / "metrics.csv", true), steps_of(f.run / "metrics.csv", true));
}

// keep_finished_results copies the checkpoint, moves eval.json, then done.json (which marks the
// run finished) last: a kill after any of its first steps leaves a run that --extend takes over
// again and ends as if nothing had happened.
TEST(RunDir, AKillInsideKeepingTheFinishedResultsIsRepairedByTheNextExtend) {
  for (int steps_done : {1, 2}) {  // 1: checkpoint copied; 2: eval.json moved as well
    SCOPED_TRACE("killed after step " + std::to_string(steps_done) + " of keeping");
    Fixture f;
    std::vector<std::string> sets = {"checkpoint_every=2", "eval_every=2", "max_steps=4"};
    rl::train(testing::tiny_config(f.data, "mingru", sets), f.options());
    std::ofstream(f.run / "eval.json") << "{\"mean_normalized\": 4}\n";
    const std::string done4 = testing::read_text(f.run / "done.json");
    fs::copy_file(f.run / "checkpoint.pt", f.run / "checkpoint-step4.pt");
    if (steps_done == 2) fs::rename(f.run / "eval.json", f.run / "eval-step4.json");

    sets.back() = "max_steps=8";
    auto opt = f.options();
    opt.extend = true;
    const auto extended = rl::train(testing::tiny_config(f.data, "mingru", sets), opt);
    EXPECT_TRUE(extended.finished);
    EXPECT_EQ(extended.resumed_from, 4);
    EXPECT_EQ(testing::read_text(f.run / "done-step4.json"), done4);
    EXPECT_EQ(testing::read_text(f.run / "eval-step4.json"), "{\"mean_normalized\": 4}\n");
    EXPECT_FALSE(fs::exists(f.run / "eval.json"));
    EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 6, 8}));
    expect_weights_of_one_uninterrupted_run(f, sets, 8);
  }
}

TEST(RunDir, ExtendGoesOnOnlyWhenMaxStepsAloneGrows) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=4"}), f.options());
  auto opt = f.options();
  opt.extend = true;
  auto refused = [&](std::vector<std::string> sets, const std::string& expected) {
    try {
      rl::train(testing::tiny_config(f.data, "mingru", sets), opt);
      ADD_FAILURE() << "extended with a config that is not the run's with a larger budget";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  // The key in the way is named (as for an unfinished run, below), not "pass --extend".
  refused({"max_steps=8", "lr=0.002"}, "lr: 0.001 -> 0.002");
  refused({"max_steps=8", "lr=0.002"}, "max_steps alone");
  refused({"max_steps=2"}, "max_steps: 4 -> 2");
  EXPECT_TRUE(fs::exists(f.run / "done.json"));  // nothing was moved aside by a refusal
  // Asking again for the budget it has (a requeued job) finds nothing to do.
  f.evaluated.clear();
  const auto again = rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=4"}), opt);
  EXPECT_TRUE(again.finished);
  EXPECT_EQ(again.step, 4);
  EXPECT_TRUE(f.evaluated.empty());
  EXPECT_FALSE(fs::exists(f.run / "done-step4.json"));
  EXPECT_EQ(rl::load_agent(f.run.string()).step, 4);
  opt.extend = false;
  refused({"max_steps=4"}, "--extend to train it further");
  opt.extend = true;

  Fixture g;  // an unfinished run: another key is named as any resume names it
  rl::train(testing::tiny_config(g.data, "mingru", {"max_steps=4"}), g.options(/*stop_after=*/2));
  auto gopt = g.options();
  gopt.extend = true;
  try {
    rl::train(testing::tiny_config(g.data, "mingru", {"max_steps=8", "lr=0.002"}), gopt);
    FAIL() << "extended with another lr";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("lr: 0.001 -> 0.002"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_steps alone"), std::string::npos) << e.what();
  }
  // Without --extend a larger budget is refused pointing to it, promising no kept results: the
  // unfinished run has none of its budget.
  try {
    rl::train(testing::tiny_config(g.data, "mingru", {"max_steps=8"}), g.options());
    FAIL() << "a larger budget taken without --extend";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("was started with max_steps 4; to go on from its checkpoint to 8 steps "
                        "pass --extend, or"),
              std::string::npos)
        << what;
  }
  EXPECT_TRUE(rl::train(testing::tiny_config(g.data, "mingru", {"max_steps=8"}), gopt).finished);
}

// A finished run whose checkpoint stayed on another machine (restored from a snapshot) trains
// again from step 0, which ends where extending it would have; what it reported is kept.
TEST(RunDir, ExtendingARunWithoutItsCheckpointTrainsItAgainAndKeepsItsResults) {
  Fixture f;
  std::vector<std::string> sets = {"checkpoint_every=2", "eval_every=2", "max_steps=4"};
  rl::train(testing::tiny_config(f.data, "mingru", sets), f.options());
  const std::string evals4 = testing::read_text(f.run / "evals.csv"),
                    metrics4 = testing::read_text(f.run / "metrics.csv");
  const std::string done4 = testing::read_text(f.run / "done.json");
  fs::remove(f.run / "checkpoint.pt");

  sets.back() = "max_steps=6";
  auto opt = f.options();
  opt.extend = true;
  f.evaluated.clear();
  const auto again = rl::train(testing::tiny_config(f.data, "mingru", sets), opt);
  EXPECT_TRUE(again.finished);
  EXPECT_EQ(again.resumed_from, 0);
  EXPECT_EQ(f.evaluated, (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(testing::read_text(f.run / "done-step4.json"), done4);
  EXPECT_EQ(testing::read_text(f.run / "evals-step4.csv"), evals4);
  EXPECT_EQ(testing::read_text(f.run / "metrics-step4.csv"), metrics4);
  EXPECT_FALSE(fs::exists(f.run / "checkpoint-step4.pt"));
  EXPECT_EQ(steps_of(f.run / "evals.csv", true), (std::vector<int64_t>{2, 4, 6}));

  expect_weights_of_one_uninterrupted_run(f, sets, 6);
  expect_force_removes(f, {"done-step4.json", "evals-step4.csv", "metrics-step4.csv"});
}

// --extend of a folder that is not there, beside a run of a close name, is a slip of the name
// (walk 47: a misspelt --run-dir trained a new run from step 0): refused, nothing made. A new
// name with no run near it trains from step 0 (a sweep extends runs that may not be there yet).
TEST(RunDir, ExtendingAMisspeltRunDirIsRefusedWithTheRunMeant) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=2"}), f.options());
  auto opt = f.options();
  opt.extend = true;
  const fs::path typo = f.tmp.path / "rum";
  opt.run_dir = typo.string();
  const auto cfg = testing::tiny_config(f.data, "mingru", {"max_steps=4"});
  EXPECT_EQ(testing::error_of([&] { rl::train(cfg, opt); }),
            typo.string() + ": --extend, but no run is here (did you mean '" + f.run.string() +
                "'?); without --extend a new run starts here");
  EXPECT_FALSE(fs::exists(typo));

  opt.run_dir = (f.tmp.path / "another-name").string();
  EXPECT_TRUE(rl::train(cfg, opt).finished);
}

}  // namespace
}  // namespace minrnn
