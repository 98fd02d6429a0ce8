// A run's TensorBoard event files show what its metrics.csv and evals.csv hold: each row once, at
// its step, with its values — after kills, resumes and extensions too. The files are read here as
// TensorBoard's two readers do (rl/run_events.h); tests/python/tensorboard_events.py checks the
// same with TensorBoard itself.
#include "rl/run_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "io/atomic_file.h"
#include "rl/run_dir.h"
#include "rl/trainer.h"
#include "tests/io/event_files.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// tag -> its (step, value) points, in the order they were written.
using Curves = std::map<std::string, std::vector<std::pair<int64_t, float>>>;

// What the CSV rows say, the columns named as TensorBoard's tags.
void add_csv_curves(const fs::path& csv, const std::vector<std::string>& tags, Curves* curves) {
  for (const auto& line : io::read_complete_lines(csv.string())) {
    std::stringstream row(line);
    std::string field;
    std::getline(row, field, ',');
    if (field == "step") continue;
    const int64_t step = std::stoll(field);
    for (const auto& tag : tags) {
      std::getline(row, field, ',');
      (*curves)[tag].push_back({step, static_cast<float>(std::stod(field))});
    }
  }
}

Curves csv_view(const fs::path& run) {
  Curves curves;
  add_csv_curves(run / "metrics.csv",
                 {"train/loss", "train/lr", "train/grad_norm", "train/steps_per_s"}, &curves);
  add_csv_curves(run / "evals.csv",
                 {"eval/return_mean", "eval/return_std", "eval/normalized_return_mean",
                  "eval/normalized_return_std"},
                 &curves);
  return curves;
}

// As TensorBoard's Python reader (EventAccumulator) sees them: a SessionLog START drops the points
// read so far at steps >= its step.
Curves python_reader_view(const fs::path& run) {
  Curves curves;
  for (const auto& file : testing::event_files(run)) {
    for (const auto& event : testing::read_event_file(file)) {
      const auto redone = [&](const auto& point) { return point.first >= event.step; };
      if (event.session_start) {
        for (auto& [tag, points] : curves)
          points.erase(std::remove_if(points.begin(), points.end(), redone), points.end());
      }
      for (const auto& [tag, value] : event.scalars) curves[tag].push_back({event.step, value});
    }
  }
  return curves;
}

// As its fast loader (the Rust data server, `tensorboard`'s default) sees them: START is ignored,
// and each new point drops the tag's points at steps >= its own.
Curves fast_loader_view(const fs::path& run) {
  Curves curves;
  for (const auto& file : testing::event_files(run)) {
    for (const auto& event : testing::read_event_file(file)) {
      for (const auto& [tag, value] : event.scalars) {
        auto& points = curves[tag];
        while (!points.empty() && points.back().first >= event.step) points.pop_back();
        points.push_back({event.step, value});
      }
    }
  }
  return curves;
}

// Both readers show exactly the CSV rows.
void expect_the_csv_rows(const fs::path& run) {
  const Curves csv = csv_view(run);
  EXPECT_EQ(python_reader_view(run), csv);
  EXPECT_EQ(fast_loader_view(run), csv);
}

using Fixture = testing::TrainFixture;

TEST(TensorBoardRun, ATrainingWritesEveryCsvRowAsScalars) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=6", "eval_every=2"}), f.options());
  const auto files = testing::event_files(f.run);
  ASSERT_EQ(files.size(), 1u);
  const auto events = testing::read_event_file(files[0]);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_TRUE(events[1].session_start);
  const Curves csv = csv_view(f.run);
  EXPECT_EQ(csv.at("train/loss").size(), 6u);
  EXPECT_EQ(csv.at("eval/normalized_return_mean").size(), 3u);  // 2, 4, 6
  expect_the_csv_rows(f.run);
}

const std::vector<std::string> kEvery3 = {"max_steps=8", "checkpoint_every=3", "eval_every=2",
                                          "log_every=1"};

// What a kill -9 at step 6 leaves: rows and events up to step 6 (evaluations at 2 and 4), the
// checkpoint of step 3.
void train_and_kill_at_step_6(Fixture& f) {
  const auto cfg = testing::tiny_config(f.data, "mingru", kEvery3);
  rl::train(cfg, f.options(/*stop_after=*/3));
  fs::copy_file(f.run / "checkpoint.pt", f.tmp.path / "checkpoint3.pt");
  rl::train(cfg, f.options(/*stop_after=*/6));
  fs::copy_file(f.tmp.path / "checkpoint3.pt", f.run / "checkpoint.pt",
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(python_reader_view(f.run).at("train/loss").back().first, 6);
  ASSERT_EQ(python_reader_view(f.run).at("eval/return_mean").back().first, 4);
}

// The rows of 4..6 are dropped from the CSV files and done again, so TensorBoard must not show
// them twice (steps_per_s differs between the two).
TEST(TensorBoardRun, AResumedRunShowsEachStepOnce) {
  Fixture f;
  train_and_kill_at_step_6(f);
  const auto result = rl::train(testing::tiny_config(f.data, "mingru", kEvery3), f.options());
  ASSERT_EQ(result.resumed_from, 3);
  const auto files = testing::event_files(f.run);
  ASSERT_EQ(files.size(), 3u);
  // The START at the last evaluation kept (step 2), the run's hyper-parameters
  // (tests/rl/run_hparams_test.cpp), then the rows kept from there on again: metrics 2 and 3,
  // evaluation 2.
  const auto last = testing::read_event_file(files.back());
  ASSERT_GE(last.size(), 6u);
  EXPECT_TRUE(last[1].session_start);
  EXPECT_EQ(last[1].step, 2);
  ASSERT_EQ(last[2].plugin_records.size(), 1u);
  EXPECT_EQ(last[2].plugin_records[0].tag, "_hparams_/session_start_info");
  EXPECT_EQ(last[3].step, 2);
  EXPECT_EQ(last[4].step, 3);
  EXPECT_EQ(last[5].step, 2);
  EXPECT_EQ(last[5].scalars.at(0).first, "eval/return_mean");
  expect_the_csv_rows(f.run);
}

// Not only once the resumed run has redone them: the dropped points (the evaluation at 4 too) are
// gone from both readers' views as soon as the new file is opened.
TEST(TensorBoardRun, TheDroppedPointsGoAsSoonAsTheResumedRunStarts) {
  Fixture f;
  train_and_kill_at_step_6(f);
  rl::truncate_rows((f.run / "metrics.csv").string(), 3, /*header=*/true);  // as train() does
  rl::truncate_rows((f.run / "evals.csv").string(), 3, /*header=*/true);
  const rl::RunEvents resumed(f.run.string(), 3, rl::TrainConfig{});
  expect_the_csv_rows(f.run);
}

// The finished run logged and evaluated at step 5, off the cadence; the extension drops those rows
// from the CSV files (a run given 8 steps from the start has none), and TensorBoard with them.
TEST(TensorBoardRun, AnExtensionFromOffTheCadenceShowsTheCurvesOfTheLongerRun) {
  Fixture f;
  const std::vector<std::string> sets = {"checkpoint_every=2", "eval_every=2", "log_every=2"};
  auto five = sets, eight = sets;
  five.push_back("max_steps=5");
  eight.push_back("max_steps=8");
  rl::train(testing::tiny_config(f.data, "mingru", five), f.options());
  EXPECT_EQ(python_reader_view(f.run).at("train/loss").back().first, 5);
  auto opt = f.options();
  opt.extend = true;
  rl::train(testing::tiny_config(f.data, "mingru", eight), opt);
  expect_the_csv_rows(f.run);
  const Curves curves = python_reader_view(f.run);
  std::vector<int64_t> steps;
  for (const auto& point : curves.at("eval/return_mean")) steps.push_back(point.first);
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 4, 6, 8}));
}

TEST(TensorBoardRun, ForceRemovesTheOldRunsEventFiles) {
  Fixture f;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=4"}), f.options());
  auto opt = f.options();
  opt.force = true;
  rl::train(testing::tiny_config(f.data, "mingru", {"max_steps=2"}), opt);
  EXPECT_EQ(testing::event_files(f.run).size(), 1u);
  expect_the_csv_rows(f.run);
}

// The CSV files are the record: an events file that cannot be written costs a warning, once, and
// nothing else.
TEST(TensorBoardRun, AnEventsFileThatCannotBeWrittenIsReportedOnce) {
  testing::TempDir tmp;
  const fs::path missing = tmp.path / "missing";
  ::testing::internal::CaptureStderr();
  rl::RunEvents events(missing.string(), 0, rl::TrainConfig{});
  events.metrics_row("1,0.5,0.001,1,10,0.1\n");
  events.eval_at(1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: cannot open " + missing.string() + "/events.out.tfevents."),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("warning", err.find("warning") + 1), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(missing));
}

}  // namespace
}  // namespace minrnn
