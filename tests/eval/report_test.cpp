// The Table-3 report from hand-made eval.json files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eval/csv.h"
#include "eval/published.h"
#include "eval/report.h"
#include "tests/eval/report_fixtures.h"
#include "tests/rl/fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

using minrnn::testing::make_run;
using minrnn::testing::read_text;

TEST(Report, MeanStdOverSeedsAndAverageRow) {
  testing::TempDir tmp;
  make_run(tmp.path, "hopper-medium", "mingru", 0, 60, true);
  make_run(tmp.path, "hopper-medium", "mingru", 1, 80, true);
  make_run(tmp.path, "halfcheetah-medium", "mingru", 0, 40);
  make_run(tmp.path, "halfcheetah-medium", "transformer", 0, 41);
  make_run(tmp.path, "halfcheetah-medium", "transformer", 1, 43);
  make_run(tmp.path, "halfcheetah-medium", "transformer", 2, 45);
  const auto t = eval::make_table(eval::collect_scores(tmp.path.string()));
  // Paper order: halfcheetah before hopper; mingru before transformer.
  ASSERT_EQ(t.datasets, (std::vector<std::string>{"halfcheetah-medium", "hopper-medium"}));
  ASSERT_EQ(t.backbones, (std::vector<std::string>{"mingru", "transformer"}));
  const auto& hop = t.cells.at({"hopper-medium", "mingru"});
  EXPECT_DOUBLE_EQ(hop.mean, 70);
  EXPECT_DOUBLE_EQ(hop.std, 10);  // population std of {60, 80}
  EXPECT_EQ(hop.n, 2);
  const auto& dt = t.cells.at({"halfcheetah-medium", "transformer"});
  EXPECT_DOUBLE_EQ(dt.mean, 43);
  EXPECT_NEAR(dt.std, std::sqrt(8.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(t.average.at("mingru").mean, 55);  // (40 + 70) / 2
  EXPECT_EQ(t.average.at("transformer").n, 1);        // only one of the two datasets

  const auto files = eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | 70.0 ± 10.0 (n=2) | – |"), std::string::npos) << md;
  EXPECT_NE(md.find("| **Average** | **55.0** | **43.0** (1 of 2) |"), std::string::npos) << md;
  EXPECT_NE(md.find("last checkpoint"), std::string::npos);
  const std::string csv = read_text(tmp.path / "table3.csv");
  EXPECT_NE(csv.find("hopper-medium,mingru,70.000,10.000,2,0,,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("Average,mingru,55.000,,,,2,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("Average,transformer,43.000,,,,1,\n"), std::string::npos) << csv;
  EXPECT_TRUE(fs::exists(tmp.path / "plots/hopper-medium-mingru-loss.svg"));
  EXPECT_TRUE(fs::exists(tmp.path / "plots/hopper-medium-mingru-score.svg"));
  EXPECT_FALSE(fs::exists(tmp.path / "plots/halfcheetah-medium-mingru-loss.svg"));  // no csv
}

// A sweep's dataset labels are its own names: a '|' stays in its Markdown cell and a comma or
// quote in its CSV field.
TEST(Report, DatasetLabelsStayInTheirCells) {
  testing::TempDir tmp;
  make_run(tmp.path, "hop|per", "mingru", 0, 60, true);
  make_run(tmp.path, "a,\"b\"", "mingru", 0, 40);
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hop\\|per | 60.0 (n=1) |"), std::string::npos) << md;
  const io::CsvTable csv = io::read_csv_table(tmp.path / "table3.csv");
  ASSERT_EQ(csv.rows.size(), 3u);
  std::vector<std::string> labels;
  for (const auto& row : csv.rows) labels.push_back(row[0]);
  EXPECT_EQ(labels, (std::vector<std::string>{"a,\"b\"", "hop|per", "Average"}));
}

// evals.csv is ours, but a hand may have been in it: a cell that is no number ("abc", "", "3.0x")
// or a score that is no score (nan) is named — file, line, column — where it read as 0 or 3.
TEST(Report, AnEvaluationsFileEditedByHandIsNamedNotReadAsZero) {
  testing::TempDir tmp;
  make_run(tmp.path, "hopper-medium", "mingru", 0, 60, true);
  const fs::path evals = tmp.path / "hopper-medium" / "mingru" / "seed0" / "evals.csv";
  const auto error = [&](const std::string& second_row) {
    std::ofstream(evals) << "250,100,1,20,1\n" << second_row << "\n";
    try {
      eval::Series s{"", {}, {}};
      eval::read_eval_curve(evals.parent_path(), &s);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(error("500,abc,0,xyz,0"),
            evals.string() + ":2: column 4: expected a number, got 'xyz'");
  EXPECT_EQ(error("500,1,0,3.0x,0"),
            evals.string() + ":2: column 4: expected a number, got '3.0x'");
  EXPECT_EQ(error("500,1,0,,0"), evals.string() + ":2: column 4: expected a number, got ''");
  EXPECT_EQ(error("500,1,0,nan,0"),
            evals.string() + ": the evaluation at step 500 is nan, not a score");
  EXPECT_EQ(error("500,1,0,40.5,0"), "read");
}

// One damaged curve file of a sweep's many does not stop its report: the file is listed with why,
// its curve left out, and the table scored from eval.json as ever (a walk, 2026-11-29: a cell
// "abc" in one run's metrics.csv failed the whole report).
TEST(Report, ADamagedCurveFileIsListedAndTheReportWritten) {
  testing::TempDir tmp;
  make_run(tmp.path, "hopper-medium", "mingru", 0, 60, true);
  make_run(tmp.path, "hopper-medium", "mingru", 1, 70, true);
  const fs::path seed0 = tmp.path / "hopper-medium" / "mingru" / "seed0";
  std::ofstream(seed0 / "evals.csv") << "250,100,1,20,1\n500,1,0,xyz,0\n";
  std::ofstream(seed0 / "metrics.csv") << "step,loss\n1,abc\n";
  const eval::ReportFiles files = eval::write_report(tmp.path.string());
  EXPECT_NE(files.markdown.find("| hopper-medium | 65.0 ± 5.0 (n=2) |"), std::string::npos)
      << files.markdown;
  for (const std::string& why :
       {(seed0 / "evals.csv").string() + ":2: column 4: expected a number, got 'xyz'",
        (seed0 / "metrics.csv").string() + ":2: column 2: expected a number, got 'abc'"}) {
    EXPECT_NE(files.markdown.find("## Unreadable curves"), std::string::npos) << files.markdown;
    EXPECT_NE(files.markdown.find("- " + why + "\n"), std::string::npos) << files.markdown;
  }
  const auto json = nlohmann::json::parse(read_text(tmp.path / "table3.json"));
  EXPECT_EQ(json["unreadable_curves"].size(), 2u) << json.dump(2);
  // Seed 1's curves are drawn; seed 0's are not.
  const std::string loss = read_text(tmp.path / "plots/hopper-medium-mingru-loss.svg");
  EXPECT_NE(loss.find("seed 1"), std::string::npos) << loss;
  EXPECT_EQ(loss.find("seed 0"), std::string::npos) << loss;

  // No seed's curve read: no plot, not an earlier report's left to pass for today's.
  const fs::path seed1 = tmp.path / "hopper-medium" / "mingru" / "seed1";
  std::ofstream(seed1 / "metrics.csv") << "step,loss\n1,abc\n";
  const eval::ReportFiles removing = eval::write_report(tmp.path.string());
  EXPECT_FALSE(fs::exists(tmp.path / "plots/hopper-medium-mingru-loss.svg"));
  EXPECT_EQ(removing.removed,  // said (`minrnn report` prints it), not done without a word
            std::vector<std::string>{(tmp.path / "plots/hopper-medium-mingru-loss.svg").string()});
  EXPECT_TRUE(fs::exists(tmp.path / "plots/hopper-medium-mingru-score.svg"));  // seed 1's evals

  // What reading would pass over without a word is listed too: a finished run's file missing or
  // cut short mid-line (a copy stopped early), a folder in a file's place.
  std::ofstream(seed1 / "metrics.csv", std::ios::trunc) << "step,loss\n1,0.5\n2,0.";
  fs::remove(seed1 / "evals.csv");
  fs::remove(seed0 / "metrics.csv");
  fs::create_directories(seed0 / "metrics.csv");
  const std::string listed = eval::write_report(tmp.path.string()).markdown;
  for (const std::string& why :
       {(seed1 / "metrics.csv").string() + ": its last line is cut short",
        (seed1 / "evals.csv").string() + ": missing (a finished run has written it)",
        (seed0 / "metrics.csv").string() + ": not a file"})
    EXPECT_NE(listed.find("- " + why), std::string::npos) << listed;
  fs::remove(seed0 / "metrics.csv");

  // A run in progress whose evals.csv cannot be read: listed with no last evaluation.
  fs::remove(seed1 / "eval.json");
  fs::remove(seed1 / "done.json");
  std::ofstream(seed1 / "metrics.csv") << "step,loss\n1,0.5\n";
  std::ofstream(seed1 / "evals.csv") << "250,100,1,nan,1\n";
  const std::string md = eval::write_report(tmp.path.string()).markdown;
  EXPECT_NE(md.find("| hopper-medium | mingru | 1 | 1 | – |"), std::string::npos) << md;
  EXPECT_NE(md.find("- " + (seed1 / "evals.csv").string() +
                    ": the evaluation at step 250 is nan, not a score"),
            std::string::npos)
      << md;
}

// An eval.json without done.json is an evaluation of a run still training: it is listed with the
// runs in progress, never scored in Table 3.
TEST(Report, AnEvaluationOfARunStillTrainingIsNotAResult) {
  testing::TempDir tmp;
  make_run(tmp.path, "hopper-medium", "mingru", 0, 60, true);
  make_run(tmp.path, "hopper-medium", "mingru", 1, 99, true, /*finished=*/false);
  const auto runs = eval::collect_scores(tmp.path.string());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].seed, 0);
  const auto unfinished = eval::collect_unfinished(tmp.path.string());
  ASSERT_EQ(unfinished.size(), 1u);
  EXPECT_EQ(unfinished[0].seed, 1);
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | 60.0 (n=1) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("99.0"), std::string::npos) << md;
}

// A finished run's eval.json that is no result (edited by hand; a NaN score, which JSON writes as
// null) is named in the report's failed runs, with why: the other runs still get their table (one
// diverged seed stopped the whole report).
TEST(Report, MalformedEvalJsonIsNamed) {
  testing::TempDir tmp;
  make_run(tmp.path, "d", "mingru", 0, 60);
  fs::create_directories(tmp.path / "d/mingru/seed1");
  std::ofstream(tmp.path / "d/mingru/seed1/eval.json") << "{\"no_score\": 1}";
  std::ofstream(tmp.path / "d/mingru/seed1/done.json") << "{}\n";  // a finished run's result
  make_run(tmp.path, "d", "mingru", 2, 0);
  std::ofstream(tmp.path / "d/mingru/seed2/eval.json") << "{\"mean_normalized\": null}";
  EXPECT_EQ(eval::collect_scores(tmp.path.string()).size(), 1u);
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| d | 60.0 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| d | mingru | 1 | result | " + (tmp.path / "d/mingru/seed1").string() +
                    "/eval.json: expected JSON with mean_normalized"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| d | mingru | 2 | result | " + (tmp.path / "d/mingru/seed2").string() +
                    "/eval.json: mean_normalized is null: the evaluation's returns were not "
                    "finite"),
            std::string::npos)
      << md;
  testing::TempDir empty;
  EXPECT_THROW(eval::write_report(empty.path.string()), std::runtime_error);
}

// A sweep across sittings: runs still training (metrics.csv, no eval.json) are listed apart with
// the step they reached and their last evaluation, kept out of the table, and drawn in the plots.
// Evaluations every 1 000 of 10 000 steps: the third quarter is 6 000 and 7 000, the last one
// 8 000 to 10 000. A rising curve shows its rise; a flat one about none; a run evaluated only at
// its end is left out.
TEST(Report, TheBudgetCheckComparesTheLastTwoQuartersOfTheCurves) {
  testing::TempDir tmp;
  auto run_with_evals = [&](const std::string& backbone, int seed, double slope) {
    make_run(tmp.path, "hopper-medium", backbone, seed, 50, false, true, 10000);
    std::ofstream e(tmp.path / "hopper-medium" / backbone / ("seed" + std::to_string(seed)) /
                    "evals.csv");
    for (int step = 1000; step <= 10000; step += 1000)
      e << step << ",1,1," << 40 + seed + slope * step / 1000 << ",1\n";
  };
  run_with_evals("mingru", 0, 1.0);  // 46, 47 | 48, 49, 50
  run_with_evals("mingru", 1, 1.0);  // one point higher throughout
  run_with_evals("transformer", 0, 0.0);
  make_run(tmp.path, "hopper-medium", "minlstm", 0, 50, false, true, 10000);
  std::ofstream(tmp.path / "hopper-medium/minlstm/seed0/evals.csv") << "10000,1,1,50,1\n";

  const auto runs = eval::collect_scores(tmp.path.string());
  const auto checks = eval::check_budgets(runs, eval::read_curves(runs, {}));
  ASSERT_EQ(checks.size(), 2u);
  const auto& gru = checks.at({"hopper-medium", "mingru"});
  EXPECT_EQ(gru.steps, 10000);
  EXPECT_EQ(gru.runs, 2);
  EXPECT_DOUBLE_EQ(gru.third_quarter, 47.0);  // (46.5 + 47.5) / 2
  EXPECT_DOUBLE_EQ(gru.last_quarter, 49.5);   // (49 + 50) / 2
  const auto& dt = checks.at({"hopper-medium", "transformer"});
  EXPECT_DOUBLE_EQ(dt.last_quarter - dt.third_quarter, 0.0);
  const std::string md = eval::budget_markdown(checks);
  EXPECT_NE(md.find("| hopper-medium | mingru | 10000 | 2 | 47.0 | 49.5 | +2.5 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("minlstm"), std::string::npos) << md;
  const auto files = eval::write_report(tmp.path.string());
  EXPECT_NE(files.markdown.find("## Is the budget flat?"), std::string::npos) << files.markdown;
}

TEST(Report, RunsInProgressAreListedApartAndDrawn) {
  testing::TempDir tmp;
  make_run(tmp.path, "hopper-medium", "mingru", 0, 60, true);
  make_run(tmp.path, "hopper-medium", "mingru", 1, 0, true);
  fs::remove(tmp.path / "hopper-medium/mingru/seed1/eval.json");  // seed 1 still training
  const fs::path lstm = tmp.path / "hopper-medium/minlstm/seed2";
  fs::create_directories(lstm);
  std::ofstream(lstm / "metrics.csv") << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n"
                                         "100,0.5,0.001,0.1,10,1\n200,0.4,0.001,0.1,10,2\n";
  fs::create_directories(tmp.path / "hopper-medium/transformer/seed0");  // not started: no row

  auto unfinished = eval::collect_unfinished(tmp.path.string());
  eval::fill_last_evaluations(&unfinished, eval::read_curves({}, unfinished));
  ASSERT_EQ(unfinished.size(), 2u);
  EXPECT_EQ(unfinished[0].backbone, "mingru");
  EXPECT_EQ(unfinished[0].seed, 1);
  EXPECT_EQ(unfinished[0].step, 500);
  EXPECT_DOUBLE_EQ(unfinished[0].last_eval, 40.5);
  EXPECT_EQ(unfinished[0].last_eval_step, 500);
  EXPECT_EQ(unfinished[1].backbone, "minlstm");
  EXPECT_EQ(unfinished[1].step, 200);
  EXPECT_TRUE(std::isnan(unfinished[1].last_eval));

  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | 60.0 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| hopper-medium | mingru | 1 | 500 | 40.5 (step 500) |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| hopper-medium | minlstm | 2 | 200 | – |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| hopper-medium | transformer |"), std::string::npos) << md;
  const std::string loss = read_text(tmp.path / "plots/hopper-medium-mingru-loss.svg");
  EXPECT_NE(loss.find("seed 0"), std::string::npos);
  EXPECT_NE(loss.find("seed 1 (at step 500)"), std::string::npos) << loss;
  EXPECT_TRUE(fs::exists(tmp.path / "plots/hopper-medium-minlstm-loss.svg"));
  EXPECT_FALSE(fs::exists(tmp.path / "plots/hopper-medium-minlstm-score.svg"));  // no evals yet

  // Nothing finished yet: the report is the progress alone, and the CSV only its header.
  testing::TempDir early;
  fs::create_directories(early.path / "hopper-medium/minlstm/seed0");
  fs::copy_file(lstm / "metrics.csv", early.path / "hopper-medium/minlstm/seed0/metrics.csv");
  eval::write_report(early.path.string());
  const std::string early_md = read_text(early.path / "table3.md");
  EXPECT_NE(early_md.find("No run has finished yet."), std::string::npos) << early_md;
  EXPECT_NE(early_md.find("| hopper-medium | minlstm | 0 | 200 | – |"), std::string::npos);
  EXPECT_EQ(read_text(early.path / "table3.csv"),
            "dataset,backbone,mean,std,seeds,steps,datasets,settings_apart\n");
}

// A sweep part-way through `--extend`: seed 0 trained on to 20 000 steps, seed 1 not yet. The cell
// holds seed 0 alone, seed 1 waits in progress with its final score, and the budgets that differ
// between cells are said.
TEST(Report, ASeedFinishedAtASmallerBudgetWaitsForTheOthers) {
  testing::TempDir tmp;
  auto run_at = [&](const std::string& backbone, int seed, double score, int64_t step) {
    make_run(tmp.path, "hopper-medium", backbone, seed, score, false, true, step);
    std::ofstream(tmp.path / "hopper-medium" / backbone / ("seed" + std::to_string(seed)) /
                  "eval.json")
        << nlohmann::json{{"mean_normalized", score}, {"train_step", step}}.dump();
  };
  run_at("mingru", 0, 55.0, 20000);
  run_at("mingru", 1, 54.8, 10000);
  run_at("transformer", 0, 56.0, 10000);
  run_at("transformer", 1, 62.0, 10000);

  auto runs = eval::collect_scores(tmp.path.string());
  auto progress = eval::collect_unfinished(tmp.path.string());
  eval::set_aside_shorter_budgets(&runs, &progress);
  ASSERT_EQ(runs.size(), 3u);
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].backbone, "mingru");
  EXPECT_EQ(progress[0].seed, 1);
  EXPECT_EQ(progress[0].step, 10000);
  EXPECT_TRUE(progress[0].finished_shorter);

  const std::string md = eval::write_report(tmp.path.string()).markdown;
  EXPECT_NE(md.find("| hopper-medium | 55.0 (n=1) | 59.0 ± 3.0 (n=2) |"), std::string::npos) << md;
  EXPECT_NE(md.find("budgets differ (steps of the checkpoint scored): hopper-medium mingru 20000, "
                    "hopper-medium transformer 10000."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| hopper-medium | mingru | 1 | 10000 | 54.8 (final, step 10000) |"),
            std::string::npos)
      << md;

  // Once every seed has the same budget, nothing is set aside and nothing is said.
  run_at("mingru", 1, 57.0, 20000);
  const std::string through = eval::write_report(tmp.path.string()).markdown;
  EXPECT_NE(through.find("| hopper-medium | 56.0 ± 1.0 (n=2) |"), std::string::npos) << through;
  EXPECT_EQ(through.find("final, step"), std::string::npos) << through;
  EXPECT_NE(
      read_text(tmp.path / "table3.csv").find("hopper-medium,mingru,56.000,1.000,2,20000,,\n"),
      std::string::npos);
}

}  // namespace
}  // namespace minrnn
