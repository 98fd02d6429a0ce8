// A sweep takes a run directory for one of its own only where it holds the sweep's config, its
// eval.json is the sweep's evaluation, and the data it would go on with is the data it trained on;
// otherwise the sweep refuses to start, naming the run, and --status shows it.
#include <gtest/gtest.h>

#include <fstream>

#include <unistd.h>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"
#include "io/dir_lock.h"
#include "rl/config.h"
#include "sweep/sweep.h"
#include "tests/datasets/fixtures.h"
#include "tests/rl/fixtures.h"
#include "tests/sweep/sweep_fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(SweepPlan, AFinishedRunWithTheSweepsConfigIsSkipped) {
  testing::TempDir tmp;
  testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  const auto runs = sweep::plan_sweep(testing::one_run_sweep(tmp.path / "out"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, sweep::RunState::kDone);
}

// --status of a sweep whose --extend trains its finished runs on names the command that does it:
// the same command line, --extend and all (a walk through the docs, 2026-11-29: it said to run
// the sweep again, which without --extend refuses those runs).
TEST(SweepStatus, ARunToExtendNamesTheCommandThatExtendsIt) {
  testing::TempDir tmp;
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  std::ofstream(run / "metrics.csv") << "step,loss\n5,0.5\n";
  auto s = testing::one_run_sweep(tmp.path / "out");
  s.sets = {"max_steps=8"};
  s.extend = true;
  s.command_options = " --set max_steps=8 --extend";
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(s, false);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("trained to step 5; `minrnn sweep s.yaml --set max_steps=8 --extend` "
                         "trains it on to 8 (no checkpoint: from step 0)"),
            std::string::npos)
      << printed;
}

TEST(SweepPlan, ARunTrainedWithAnotherConfigIsNeitherSkippedNorResumed) {
  testing::TempDir tmp;
  // The sweep's `set` said max_steps=1000 when this run was trained; now it says 5.
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=1000", "seed=3"});
  try {
    sweep::plan_sweep(testing::one_run_sweep(tmp.path / "out"));
    FAIL() << "a run of another config would be reported as the sweep's";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string()), std::string::npos) << what;
    EXPECT_NE(what.find("max_steps: 1000 -> 5"), std::string::npos) << what;
  }
  // --status shows it, beside the sweep's other runs, rather than refusing the whole sweep.
  const std::vector<sweep::RunStatus> status =
      sweep::sweep_status(testing::one_run_sweep(tmp.path / "out"), nullptr);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].state, "mismatched");
  EXPECT_EQ(status[0].failure, "max_steps: 1000 -> 5");
  ::testing::internal::CaptureStdout();  // counted among the runs that need the user (exit 1)
  EXPECT_EQ(sweep::print_sweep_status(testing::one_run_sweep(tmp.path / "out"), false), 1);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("1 mismatched"), std::string::npos);
  EXPECT_EQ(printed.find("--extend"), std::string::npos) << "a smaller max_steps cannot extend";
  // Every run another's: the likelier cause (a --set the sweep was started with) is said.
  EXPECT_NE(printed.find(
                "if the sweep was started with other --set or --out options, give the same here"),
            std::string::npos)
      << printed;
  // A run trained to fewer steps than the sweep now asks: --status says --extend trains it on.
  auto longer = testing::one_run_sweep(tmp.path / "out");
  longer.sets = {"max_steps=2000"};
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(longer, false);
  const std::string extends = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(extends.find("max_steps: 1000 -> 2000): move it away, or run the sweep with --extend"),
            std::string::npos);
  EXPECT_EQ(extends.find("give the same here"), std::string::npos) << extends;
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(longer, true);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("\"extends\": true"), std::string::npos);
  // The same for an unfinished run (its seed differs: trained by another sweep's seed list).
  fs::remove(run / "done.json");
  std::ofstream(run / "config.yaml") << rl::to_yaml(
      rl::load_config(testing::kTinyConfig, {"backbone=mingru", "max_steps=5", "seed=0"}));
  EXPECT_THROW(sweep::plan_sweep(testing::one_run_sweep(tmp.path / "out")), std::invalid_argument);
}

// A finished run of the sweep's config whose eval.json is no result of the sweep's — over another
// number of episodes than its eval_episodes (edited between a crash and the resume), or unreadable
// — is named by the sweep and shown by its --status, not taken as done with that score (or 0).
TEST(SweepPlan, AnEvaluationThatIsNotTheSweepsIsNamed) {
  testing::TempDir tmp;
  auto s = testing::one_run_sweep(tmp.path / "out");
  s.eval_episodes = 3;
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  testing::write_eval_json(run, 40, 3);
  EXPECT_EQ(sweep::plan_sweep(s)[0].state, sweep::RunState::kDone);
  // `state`: mismatched for another sweep's evaluation, failed for one that is no result at all (as
  // the report lists it).
  auto named = [&](const std::string& why, const std::string& state) {
    try {
      sweep::plan_sweep(s);
      ADD_FAILURE() << "an evaluation that is not the sweep's was taken as done";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    const std::vector<sweep::RunStatus> status = sweep::sweep_status(s, nullptr);
    EXPECT_EQ(status[0].state, state);
    EXPECT_NE(status[0].failure.find(why.substr(why.find("eval.json"))), std::string::npos)
        << status[0].failure;
    // The run is the sweep's, its result is not: --status says which to move.
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(sweep::print_sweep_status(s, false), 1);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(printed.find(state == "failed" ? "failed (eval.json: " : "its eval.json: "),
              std::string::npos)
        << printed;
    EXPECT_NE(printed.find("move it away and the sweep evaluates the run again"), std::string::npos)
        << printed;
  };
  testing::write_eval_json(run, 40, 1);
  named("seed3/eval.json: eval_episodes: 1 -> 3", "mismatched");
  // Evaluated on other episodes (`eval --seed 12345 --replace`; a walk, 2026-11-30: it went into
  // Table 3 unmarked).
  std::ofstream(run / "eval.json") << R"({"mean_normalized": 40, "episodes": 3, "seed": 12345})";
  named("seed3/eval.json: evaluation seed: 12345 -> 0", "mismatched");
  std::ofstream(run / "eval.json") << "{";
  named("seed3/eval.json: expected JSON with mean_normalized", "failed");
  std::ofstream(run / "eval.json") << R"({"mean_normalized": null, "episodes": 3})";
  named("seed3/eval.json: mean_normalized is null", "failed");
}

// A stopped run whose dataset was made again with other data, or whose checkpoint is cut short (a
// walk, 2026-11-30: `--dry-run` and `--status` said it resumed; the sweep then started it and
// every such run failed): the plan reads the dataset and compares it with the run's env.json, and
// the checkpoint's ends, as the run itself would at its start.
TEST(SweepPlan, ARunThatCannotGoOnIsNamedBeforeItStarts) {
  testing::TempDir tmp;
  const fs::path data = tmp.path / "data.hdf5";
  data::write_d4rl(data.string(), data::testing::make_data(11, 3, {30, 40}), {});
  auto s = testing::one_run_sweep(tmp.path / "out");
  s.sets.push_back("dataset=" + data.string());
  const fs::path run = tmp.path / "out/d/mingru/seed3";
  testing::write_run_config(
      run, {"backbone=mingru", "max_steps=5", "seed=3", "dataset=" + data.string()});
  const auto record = [&](const std::string& fingerprint) {
    std::ofstream(run / "env.json")
        << R"({"dataset_file": ")" << data.string()
        << R"(", "dataset_steps": 70, "dataset_fingerprint": ")" << fingerprint << "\"}\n";
  };
  // Trained on this very data: it resumes.
  record(data::load_dataset(data.string(), data::ReadOptions{}.only_what_training_reads())
             .fingerprint);
  ASSERT_EQ(sweep::plan_sweep(s)[0].mismatch, "");
  record("0123456789abcdef");  // trained on other data
  try {
    sweep::plan_sweep(s);
    FAIL() << "a run that would go on on other data was planned to resume";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("these runs cannot go on from their run dirs"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  " + (run / "env.json").string() + ": this run trained on"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("\"0123456789abcdef\""), std::string::npos) << what;
    EXPECT_NE(what.find("other data; put that data back, or move the run's folder " + run.string() +
                        " away"),
              std::string::npos)
        << what;
  }
  // --status reads no dataset (run dirs alone): the sweep's start says it.
  EXPECT_NE(sweep::sweep_status(s, nullptr)[0].state, "mismatched");
  // A checkpoint cut short (a copy stopped early): named before the data, which then is not read,
  // and by --status too.
  std::ofstream(run / "checkpoint.pt") << "PK\x03\x04 and no end";
  const std::string cut_short =
      (run / "checkpoint.pt").string() +
      ": cut short (its zip's end record is missing: a copy stopped early, a full disk?); move it "
      "away and the run trains again from step 0";
  try {
    sweep::plan_sweep(s);
    FAIL() << "a run whose checkpoint is cut short was planned to resume";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(cut_short), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("other data"), std::string::npos) << e.what();
  }
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::print_sweep_status(s, false), 1);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("cannot go on: " + cut_short), std::string::npos) << printed;
  EXPECT_NE(printed.find(": 1 runs: 1 cannot go on\n"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("mismatched"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("give the same here"), std::string::npos) << printed;
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(s, true);
  const std::string json = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(json.find("\"state\": \"cannot_go_on\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cannot_go_on\": 1"), std::string::npos) << json;  // the counts
  // Trained, its evaluation still to run: that loads the checkpoint too (its data it reads not).
  std::ofstream(run / "done.json") << "{}\n";
  EXPECT_THROW(sweep::plan_sweep(s), std::invalid_argument);
  testing::write_stand_in_checkpoint(run);
  EXPECT_EQ(sweep::plan_sweep(s)[0].state, sweep::RunState::kTrained);
}

// A run a live process trains now is training, even while its checkpoint looks cut short (one
// being written) — not "cannot go on", which would count towards --status's exit 1.
TEST(SweepStatus, ARunALiveProcessHoldsIsTrainingWhateverItsCheckpointLooksLike) {
  testing::TempDir tmp;
  const auto s = testing::one_run_sweep(tmp.path / "out");
  const fs::path run = tmp.path / "out/d/mingru/seed3";
  testing::write_run_config(run, {"backbone=mingru", "max_steps=5", "seed=3"});
  std::ofstream(run / "checkpoint.pt") << "PK\x03\x04 and no end yet";
  std::ofstream(run / "metrics.csv")
      << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n2,1,1,1,1,2\n";
  ASSERT_EQ(sweep::sweep_status(s, nullptr)[0].state, "cannot_go_on");
  const io::DirLock held(run.string(), "this test");  // this process stands in for the trainer
  const sweep::RunStatus status = sweep::sweep_status(s, nullptr)[0];
  EXPECT_EQ(status.state, "training");
  EXPECT_EQ(status.failure, "");
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::print_sweep_status(s, false), 0);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("training step 2 of 5 (pid " + std::to_string(::getpid()) + ")"),
            std::string::npos)
      << printed;
}

}  // namespace
}  // namespace minrnn
