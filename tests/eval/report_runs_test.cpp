// Which runs a report scores, and what it says of them: seeds trained or evaluated otherwise,
// failed runs, cells scored otherwise than D4RL's table, and tables and plots written all or none.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "eval/report.h"
#include "io/atomic_file.h"
#include "tests/eval/report_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::read_text;

// A finished run: config.yaml (its dataset and `config`), done.json and eval.json (its score and
// `eval` keys).
fs::path write_scored_run(const fs::path& sweep, const std::string& backbone, int seed,
                          double score, const std::string& config, nlohmann::json eval = {}) {
  const fs::path run = sweep / "hopper-medium" / backbone / ("seed" + std::to_string(seed));
  fs::create_directories(run);
  std::ofstream(run / "config.yaml") << "dataset: d.hdf5\n" << config << "seed: " << seed << "\n";
  eval["mean_normalized"] = score;
  std::ofstream(run / "eval.json") << eval.dump();
  std::ofstream(run / "done.json") << "{}\n";
  return run;
}

// A cell is a mean over seeds of one thing: seeds of another lr, evaluated over other episodes,
// are marked † and named; seeds apart only in their seed, device or how a value is written are not
// (an audit, 2026-11-29: two sweeps of one `out`, lr 1e-3 and 0.05, made one "1.2 ± 0.1 (n=2)").
TEST(ReportRuns, SeedsTrainedOrEvaluatedOtherwiseAreMarked) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "lr: 0.001\ndevice: cpu\n", {{"episodes", 10}});
  write_scored_run(tmp.path, "mingru", 1, 60, "lr: 0.05\ndevice: cuda\n", {{"episodes", 2}});
  write_scored_run(tmp.path, "minlstm", 0, 50, "lr: 0.001\ndevice: cpu\n", {{"episodes", 10}});
  // The same lr written otherwise: values are compared, not their text.
  write_scored_run(tmp.path, "minlstm", 1, 52, "lr: 1e-3\ndevice: cuda\n", {{"episodes", 10}});
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | 55.0 ± 5.0 (n=2) † | 51.0 ± 1.0 (n=2) |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- hopper-medium mingru: eval episodes 10 / 2; lr 0.001 / 0.05\n"),
            std::string::npos)
      << md;
  const std::string csv = read_text(tmp.path / "table3.csv");
  EXPECT_NE(csv.find("hopper-medium,mingru,55.000,5.000,2,0,,eval episodes 10 / 2; lr 0.001 / "
                     "0.05\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("hopper-medium,minlstm,51.000,1.000,2,0,,\n"), std::string::npos) << csv;

  // table3.json: each cell with its seeds' own scores, for a script.
  const auto j = nlohmann::json::parse(read_text(tmp.path / "table3.json"));
  ASSERT_EQ(j["cells"].size(), 2u);
  EXPECT_EQ(j["cells"][0]["backbone"], "mingru");
  EXPECT_EQ(j["cells"][0]["settings_apart"], "eval episodes 10 / 2; lr 0.001 / 0.05");
  ASSERT_EQ(j["cells"][0]["runs"].size(), 2u);
  EXPECT_EQ(j["cells"][0]["runs"][1]["seed"], 1);
  EXPECT_DOUBLE_EQ(j["cells"][0]["runs"][1]["score"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(j["average"][1]["mean"].get<double>(), 51.0);

  // A seed evaluated on other episodes (`eval --seed 12345 --replace`; a walk, 2026-11-30: it was
  // averaged in unmarked).
  write_scored_run(tmp.path, "minlstm", 1, 52, "lr: 1e-3\ndevice: cuda\n",
                   {{"episodes", 10}, {"seed", 12345}});
  eval::write_report(tmp.path.string());
  const std::string reseeded = read_text(tmp.path / "table3.md");
  EXPECT_NE(reseeded.find("| 51.0 ± 1.0 (n=2) † |"), std::string::npos) << reseeded;
  EXPECT_NE(reseeded.find("- hopper-medium minlstm: eval seed "), std::string::npos) << reseeded;
  EXPECT_NE(reseeded.find("12345"), std::string::npos) << reseeded;
  write_scored_run(tmp.path, "minlstm", 1, 52, "lr: 1e-3\ndevice: cuda\n", {{"episodes", 10}});

  // A seed whose config.yaml is gone: what it trained with is unknown, said once (a walk,
  // 2026-11-30: every key was listed "(none) / value" beside "config.yaml unreadable").
  fs::remove(tmp.path / "hopper-medium/minlstm/seed1/config.yaml");
  eval::write_report(tmp.path.string());
  EXPECT_NE(read_text(tmp.path / "table3.md")
                .find("- hopper-medium minlstm: config.yaml read / "
                      "missing\n"),
            std::string::npos)
      << read_text(tmp.path / "table3.md");
}

// A run whose training failed after logging step 10 (its failed.json as `minrnn sweep` writes it).
void train_failed_run(const fs::path& run, int exit_code) {
  fs::create_directories(run);
  std::ofstream(run / "metrics.csv") << "step,loss\n10,0.5\n";
  std::ofstream(run / "failed.json") << R"({"phase": "train", "exit_code": )" << exit_code << "}";
}

// A run whose last attempt failed (failed.json, beside an older eval.json or a metrics.csv) is
// listed failed, with its phase, exit status and log: not scored, not "in progress".
TEST(ReportRuns, FailedRunsAreListedApartNotScored) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "lr: 0.001\n");
  const fs::path eval_failed = write_scored_run(tmp.path, "mingru", 1, 99, "lr: 0.001\n");
  std::ofstream(eval_failed / "failed.json") << R"({"phase": "eval", "exit_code": 1})";
  train_failed_run(tmp.path / "hopper-medium/mingru/seed2", 137);
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | 50.0 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| hopper-medium | mingru | 1 | eval | exit 1, see " + eval_failed.string() +
                    "/train.log |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| hopper-medium | mingru | 2 | train | exit 137, see "), std::string::npos)
      << md;
  EXPECT_EQ(md.find("## In progress"), std::string::npos) << md;
  const auto j = nlohmann::json::parse(read_text(tmp.path / "table3.json"));
  ASSERT_EQ(j["failed"].size(), 2u);
  EXPECT_EQ(j["failed"][1]["exit_code"], 137);
  EXPECT_TRUE(j["in_progress"].empty());
  // A hand-edited failed.json of other types is listed, not a crash of the report.
  std::ofstream(eval_failed / "failed.json") << R"({"phase": ["eval"], "exit_code": 1.5})";
  eval::write_report(tmp.path.string());
  EXPECT_NE(read_text(tmp.path / "table3.md").find("| hopper-medium | mingru | 1 | ? | exit ?,"),
            std::string::npos);
  // No exit status recorded: null in table3.json, not a made-up -1.
  EXPECT_TRUE(nlohmann::json::parse(read_text(tmp.path / "table3.json"))["failed"][0]["exit_code"]
                  .is_null());
  // A dataset whose every run failed keeps its row, and the Average says it leaves it out (a walk
  // through the commands, 2026-11-29: the row went and the Average read as the sweep's).
  train_failed_run(tmp.path / "walker2d-medium/mingru/seed0", 1);
  eval::write_report(tmp.path.string());
  const std::string with_walker = read_text(tmp.path / "table3.md");
  EXPECT_NE(with_walker.find("| walker2d-medium | – |"), std::string::npos) << with_walker;
  EXPECT_NE(with_walker.find("| **Average** | **50.0** (1 of 2) |"), std::string::npos)
      << with_walker;
}

// Scores of another environment or reference scores (a Minari dataset's, Gymnasium v5) under a
// label of the paper's are not set beside the paper's D4RL numbers.
TEST(ReportRuns, ACellScoredOtherwiseThanD4rlsTableIsNotComparedWithThePaper) {
  testing::TempDir tmp;
  write_scored_run(
      tmp.path, "mingru", 0, 50, "lr: 0.001\n",
      {{"env_id", "Hopper-v5"}, {"env_version", 5}, {"ref_source", "metadata.json ref_min_score"}});
  write_scored_run(
      tmp.path, "minlstm", 0, 60, "lr: 0.001\n",
      {{"env_id", "Hopper-v4"}, {"env_version", 4}, {"ref_source", "D4RL table (hopper)"}});
  eval::write_report(tmp.path.string());
  const std::string md = read_text(tmp.path / "table3.md");
  EXPECT_NE(md.find("| hopper-medium | – (not D4RL's) | 79.4 ± 8.2 | 60.0 (n=1) | 85.0 ± 4.4 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("A cell marked \"not D4RL's\""), std::string::npos) << md;
}

// Hand edits that changed a cell without a word (a walk, 2026-11-30): a copy of a seed's folder
// named seed01 counted seed 1 twice; an eval.json of another step than done.json's became the
// cell's budget and set the other seeds aside; one of no episodes was scored.
TEST(ReportRuns, HandEditsThatWouldMoveACellAreNamedOrIgnored) {
  testing::TempDir tmp;
  for (int seed : {0, 1, 2}) {
    const fs::path run = write_scored_run(tmp.path, "mingru", seed, 50 + seed, "lr: 0.001\n",
                                          {{"episodes", 10}, {"train_step", 300}});
    std::ofstream(run / "done.json") << R"({"step": 300})";
  }
  fs::copy(tmp.path / "hopper-medium/mingru/seed1", tmp.path / "hopper-medium/mingru/seed01");
  fs::copy(tmp.path / "hopper-medium/mingru/seed1",
           tmp.path / "hopper-medium/mingru/seed99999999999999999999");
  EXPECT_NE(eval::write_report(tmp.path.string()).markdown.find("| 51.0 ± 0.8 (n=3) |"),
            std::string::npos);
  const fs::path seed1 = tmp.path / "hopper-medium/mingru/seed1";
  std::ofstream(seed1 / "eval.json")
      << R"({"mean_normalized": 90, "episodes": 10, "train_step": 999})";
  std::ofstream(tmp.path / "hopper-medium/mingru/seed2/eval.json")
      << R"({"mean_normalized": 90, "episodes": 0, "train_step": 300})";
  const std::string md = eval::write_report(tmp.path.string()).markdown;
  EXPECT_NE(md.find("| hopper-medium | 50.0 (n=1) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("In progress"), std::string::npos) << md;  // seed 0 is not set aside
  EXPECT_NE(md.find("train_step is 999, but the run finished at step 300 (done.json)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("episodes is 0: a mean over no episode"), std::string::npos) << md;
}

// A run whose files say it is another's (a walk, 2026-11-30: a copy of minlstm/ named gru/ became a
// column of its own) is named under Failed, phase folder, and makes no row or column: its
// config.yaml's backbone, the env its env.json (else config.yaml) names against the one its
// dataset folder's name mentions, its D4RL id against a dataset folder named as a D4RL dataset.
TEST(ReportRuns, ARunInAnotherRunsFolderIsNamedNotAColumn) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "backbone: mingru\n");
  write_scored_run(tmp.path, "mingru", 1, 52, "backbone: mingru\n");
  write_scored_run(tmp.path, "minlstm", 0, 40, "backbone: minlstm\n");
  fs::copy(tmp.path / "hopper-medium/minlstm", tmp.path / "hopper-medium/gru",
           fs::copy_options::recursive);
  std::ofstream(write_scored_run(tmp.path, "mingru", 2, 90, "backbone: mingru\n") / "env.json")
      << R"({"env": "walker2d"})";
  const fs::path other = write_scored_run(tmp.path, "mingru", 3, 90, "");
  std::ofstream(other / "config.yaml") << "dataset: hopper-medium-replay-v2\nbackbone: mingru\n";
  // A label that names no env or D4RL dataset: nothing to check but the backbone.
  const fs::path tiny = write_scored_run(tmp.path, "mingru", 9, 30, "backbone: mingru\n");
  fs::create_directories(tmp.path / "tiny/mingru");
  fs::rename(tiny, tmp.path / "tiny/mingru/seed0");
  std::ofstream(tmp.path / "tiny/mingru/seed0/env.json") << R"({"env": "walker2d"})";

  const std::string md = eval::write_report(tmp.path.string()).markdown;
  EXPECT_NE(md.find("| dataset | mingru | minlstm |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| hopper-medium | 51.0 ± 1.0 (n=2) | 40.0 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| tiny | 30.0 (n=1) | – |"), std::string::npos) << md;
  const std::string cell = tmp.path.string() + "/hopper-medium/";
  for (const std::string& why :
       {"| hopper-medium | gru | 0 | folder | " + cell +
            "gru/seed0/config.yaml says backbone minlstm, but the run is in the folder gru (a "
            "copy under another name?) |",
        "| hopper-medium | mingru | 2 | folder | " + cell +
            "mingru/seed2/env.json says env walker2d, but the run is in the folder hopper-medium",
        "| hopper-medium | mingru | 3 | folder | " + cell +
            "mingru/seed3/config.yaml says dataset hopper-medium-replay-v2, but the run is in the "
            "folder hopper-medium"}) {
    EXPECT_NE(md.find(why), std::string::npos) << why << "\n" << md;
  }
  const auto j = nlohmann::json::parse(read_text(tmp.path / "table3.json"));
  ASSERT_EQ(j["failed"].size(), 3u) << j.dump(2);
  EXPECT_EQ(j["failed"][0]["phase"], "folder");
}

// Whether a run is in another's folder is read once per report (review 52: three reads, one per
// collection, could disagree while a live sweep rewrote a config.yaml, the run then scored and
// listed as misplaced, or neither): a config.yaml changed after the listing moves no run.
TEST(ReportRuns, ARunsFolderIsJudgedOnceForEveryCollection) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "backbone: mingru\n");
  const fs::path copy = write_scored_run(tmp.path, "mingru", 1, 90, "backbone: minlstm\n");
  const std::vector<eval::ListedRun> listed = eval::list_report_runs(tmp.path.string());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].misplaced, "");
  EXPECT_NE(listed[1].misplaced.find("says backbone minlstm"), std::string::npos)
      << listed[1].misplaced;
  std::ofstream(copy / "config.yaml") << "dataset: d.hdf5\nbackbone: mingru\nseed: 1\n";
  const auto scores = eval::collect_scores(listed);
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_EQ(scores[0].seed, 0);
  const auto failed = eval::collect_failed(listed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].phase, eval::kMisplacedPhase);
  EXPECT_EQ(failed[0].unreadable, listed[1].misplaced);
  EXPECT_TRUE(eval::collect_unfinished(listed).empty());
  // Listed again, the run is its folder's.
  EXPECT_EQ(eval::collect_scores(tmp.path.string()).size(), 2u);
}

// A table3.md an earlier report wrote (its first line is the report's).
const std::string kPreviousReport = "# Table 3 (an earlier report)\n";

// The tables all or none: a plots/ that cannot be made, or a table3.csv that cannot be written,
// leaves the previous table3.md as it was (the Markdown was replaced, then the CSV failed).
TEST(ReportRuns, TheTablesAllOrNone) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "lr: 0.001\n");
  std::ofstream(tmp.path / "table3.md") << kPreviousReport;
  std::ofstream(tmp.path / "plots") << "a file in the way\n";
  try {
    eval::write_report(tmp.path.string());
    FAIL() << "reported with a file named plots in the way";
  } catch (const io::WriteError& e) {
    EXPECT_NE(std::string(e.what()).find((tmp.path / "plots").string()), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_text(tmp.path / "table3.md"), kPreviousReport);
  EXPECT_FALSE(fs::exists(tmp.path / "table3.csv"));
  EXPECT_FALSE(fs::exists(tmp.path / "table3.json"));

  fs::remove(tmp.path / "plots");
  fs::create_directories(tmp.path / "table3.csv");  // cannot be replaced by a file
  EXPECT_THROW(eval::write_report(tmp.path.string()), io::WriteError);
  EXPECT_EQ(read_text(tmp.path / "table3.md"), kPreviousReport);
}

// A file of a table's name that is no report's (a user's notes) is not replaced, nor is anything
// else written (walk 47: table3.md and table3.csv were replaced without a word).
TEST(ReportRuns, AUsersFileNamedLikeATableIsNotReplaced) {
  testing::TempDir tmp;
  write_scored_run(tmp.path, "mingru", 0, 50, "lr: 0.001\n");
  for (const auto& [name, notes] :
       {std::pair{"table3.md", "my notes\n"}, std::pair{"table3.csv", "x,y\n"},
        std::pair{"table3.json", "[1, 2]\n"}}) {
    std::ofstream(tmp.path / name) << notes;
    try {
      eval::write_report(tmp.path.string());
      FAIL() << "replaced a user's " << name;
    } catch (const io::WriteError& e) {
      EXPECT_NE(std::string(e.what()).find((tmp.path / name).string() +
                                           ": it holds something other than a report's"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("nothing was written"), std::string::npos);
    }
    EXPECT_EQ(read_text(tmp.path / name), notes);
    EXPECT_FALSE(fs::exists(tmp.path / "plots")) << name;
    fs::remove(tmp.path / name);
  }
  eval::write_report(tmp.path.string());  // an empty table3.md, or none, is the report's to write
  const std::string written = read_text(tmp.path / "table3.md");
  eval::write_report(tmp.path.string());  // and its own again
  EXPECT_EQ(read_text(tmp.path / "table3.md"), written);
}

// The plots go with the tables: a plot that cannot be written leaves the tables and the other
// plots as they were (a walk, 2026-11-30: under a full disk the report replaced table3.*, then
// failed on one plot and left plots/ a mix of two reports).
TEST(ReportRuns, ThePlotsAllOrNoneWithTheTables) {
  testing::TempDir tmp;
  testing::make_run(tmp.path, "hopper-medium", "mingru", 0, 60, /*curves=*/true);
  testing::make_run(tmp.path, "hopper-medium", "minlstm", 0, 70, /*curves=*/true);
  eval::write_report(tmp.path.string());
  const fs::path loss = tmp.path / "plots/hopper-medium-mingru-loss.svg";
  const fs::path score = tmp.path / "plots/hopper-medium-minlstm-score.svg";
  std::ofstream(tmp.path / "table3.md") << kPreviousReport;
  std::ofstream(loss) << "the previous plot\n";
  fs::remove(score);
  fs::create_directories(score);  // cannot be replaced by a file
  EXPECT_THROW(eval::write_report(tmp.path.string()), io::WriteError);
  EXPECT_EQ(read_text(tmp.path / "table3.md"), kPreviousReport);
  EXPECT_EQ(read_text(loss), "the previous plot\n");
  fs::remove(score);
  eval::write_report(tmp.path.string());
  EXPECT_NE(read_text(loss), "the previous plot\n");
  EXPECT_TRUE(fs::is_regular_file(score));
}

// A cell whose every run failed keeps no earlier report's plots: they would read as today's.
TEST(ReportRuns, AFailedCellsEarlierPlotsAreRemoved) {
  testing::TempDir tmp;
  testing::make_run(tmp.path, "hopper-medium", "mingru", 0, 60, /*curves=*/true);
  testing::make_run(tmp.path, "hopper-medium", "minlstm", 0, 70, /*curves=*/true);
  eval::write_report(tmp.path.string());
  std::ofstream(tmp.path / "hopper-medium/mingru/seed0/eval.json") << "{\"mean_normalized\": ";
  const eval::ReportFiles files = eval::write_report(tmp.path.string());
  const std::vector<std::string> removed = {
      (tmp.path / "plots/hopper-medium-mingru-loss.svg").string(),
      (tmp.path / "plots/hopper-medium-mingru-score.svg").string()};
  EXPECT_EQ(files.removed, removed);
  for (const auto& path : removed) EXPECT_FALSE(fs::exists(path)) << path;
  EXPECT_TRUE(fs::exists(tmp.path / "plots/hopper-medium-minlstm-loss.svg"));
}

}  // namespace
}  // namespace minrnn
