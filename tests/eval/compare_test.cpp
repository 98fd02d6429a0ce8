// `minrnn compare`: two sweeps' evaluations during training, per dataset × backbone, over the
// steps both reached (eval/compare.h).
#include "eval/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

// <sweep>/<cell>/seed<S>/evals.csv with one row per (step, normalized score).
void write_evals(const fs::path& sweep, const std::string& cell, int seed,
                 const std::map<int, double>& normalized) {
  const fs::path dir = sweep / cell / ("seed" + std::to_string(seed));
  fs::create_directories(dir);
  std::string rows;
  for (const auto& [step, score] : normalized) {
    rows += std::to_string(step) + ",100.0,10.0," + std::to_string(score) + ",1.0\n";
  }
  testing::write_text(dir / "evals.csv", rows);
}

TEST(Compare, ScoresTheLaterHalfOfTheStepsBothSidesReached) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  // A reached step 4000, B 3000: the common steps are 1000–3000, the window 2000–3000.
  write_evals(a, "hop/mingru", 0, {{1000, 10}, {2000, 20}, {3000, 30}, {4000, 40}});
  write_evals(a, "hop/mingru", 1, {{1000, 12}, {2000, 22}, {3000, 32}, {4000, 42}});
  write_evals(b, "hop/mingru", 0, {{1000, 11}, {2000, 21}, {3000, 31}});
  write_evals(b, "hop/mingru", 1, {{1000, 13}, {2000, 23}, {3000, 33}});
  // Far apart: moved. A run without evaluations yet is left out.
  write_evals(a, "hop/minlstm", 0, {{1000, 10}, {2000, 11}});
  write_evals(a, "hop/minlstm", 1, {{1000, 12}, {2000, 13}});
  write_evals(b, "hop/minlstm", 0, {{1000, 50}, {2000, 51}});
  write_evals(b, "hop/minlstm", 1, {{1000, 52}, {2000, 53}});
  fs::create_directories(b / "hop/minlstm/seed2");
  // Only in A: not compared, but named.
  write_evals(a, "walker/mingru", 0, {{1000, 5}});

  std::vector<std::string> one_sided;
  const auto cells = compare_sweeps(a.string(), b.string(), nullptr, &one_sided);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(one_sided,
            std::vector<std::string>{"walker / mingru: only in A (1 run(s) with evaluations)"});
  EXPECT_NE(comparison_markdown(cells, "a", "b", {}, one_sided)
                .find("## Cells on one side only\n\nNot compared: the other sweep has no readable "
                      "run of them with evaluations (none at all, or only runs left out "
                      "above).\n\n- walker / mingru: only in A"),
            std::string::npos);
  const CellComparison& gru = cells[0];
  EXPECT_EQ(gru.backbone, "mingru");
  EXPECT_EQ(gru.from_step, 2000);
  EXPECT_EQ(gru.to_step, 3000);
  EXPECT_EQ(gru.evaluations, 2);
  EXPECT_EQ(gru.a.scores, (std::vector<double>{25, 27}));
  EXPECT_EQ(gru.b.scores, (std::vector<double>{26, 28}));
  EXPECT_DOUBLE_EQ(gru.a.mean, 26);
  EXPECT_DOUBLE_EQ(gru.a.std, 1);  // population std, as Table 3
  EXPECT_DOUBLE_EQ(gru.difference, -1);
  EXPECT_DOUBLE_EQ(gru.standard_error, std::sqrt(2.0));  // sample variances 2 and 2, n 2 and 2
  EXPECT_EQ(gru.paired_seeds, 2);
  EXPECT_DOUBLE_EQ(gru.paired_difference, -1);
  EXPECT_DOUBLE_EQ(gru.paired_standard_error, 0);
  // Both sides hold seeds 0 and 1: the paired test, and every seed one lower in A is a move.
  EXPECT_TRUE(gru.paired_test);
  EXPECT_EQ(gru.p_value, 0);
  EXPECT_FALSE(gru.within_noise);

  const CellComparison& lstm = cells[1];
  EXPECT_EQ(lstm.backbone, "minlstm");
  EXPECT_EQ(lstm.b.seeds, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(lstm.evaluations, 1);  // of two common steps, the later half: 2000
  EXPECT_DOUBLE_EQ(lstm.difference, -40);
  EXPECT_FALSE(lstm.within_noise);

  const std::string md = comparison_markdown(cells, "a", "b");
  EXPECT_NE(md.find("| hop | mingru | 2000–3000 | 2 | 26.0 ± 1.0 (n=2) | 27.0 ± 1.0 (n=2) | "
                    "-1.0 ± 1.4 | -1.0 ± 0.0 (n=2) | paired t, 1 df: p < 0.001 | "
                    "**moved (p < 0.05)** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| hop | minlstm | 2000–2000 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| **moved (p < 0.05)** | – |"), std::string::npos) << md;
  const std::string csv = comparison_csv(cells);
  EXPECT_NE(csv.find("\nhop,mingru,2000,3000,2,2,26,1,2,27,1,-1,1.41421,2,-1,0,0,moved (p < "
                     "0.05),,paired,1,0\n"),
            std::string::npos)
      << csv;
}

// The verdict's test, worked by hand (walk 45: a seed's two runs move together, so the unpaired
// error called a consistent paired difference noise; and "2 s.e." ignored the few degrees).
TEST(Compare, PairsTheSeedsWhereBothSidesHoldThemAndWelchOtherwise) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  // Paired, seeds 0–2: differences 2, 3, 4 — mean 3, sample variance 1, s.e. 1/√3, t = 3√3 with
  // 2 df: p = 1 − t/√(2 + t²) = 1 − √(27/29) = 0.0351: moved. Unpaired, the seeds' spread
  // (variances 100 and 81: s.e. √(181/3) = 7.77) would call 3 noise.
  const double paired_a[] = {50, 60, 70}, paired_b[] = {48, 57, 66};
  for (int seed : {0, 1, 2}) {
    write_evals(a, "hop/mingru", seed, {{1000, paired_a[seed]}});
    write_evals(b, "hop/mingru", seed, {{1000, paired_b[seed]}});
  }
  // Welch, other seeds (A 0–1, B 2–3): 10, 14 against 2, 6 — difference 8, variances 8 and 8,
  // s.e. √(4 + 4) = 2√2, df (4 + 4)² / (4²/1 + 4²/1) = 2, t = 2√2: p = 1 − √(8/10) = 0.1056:
  // within noise (8 is 2.8 s.e.: "moved" under the old 2 s.e. rule).
  write_evals(a, "hop/minlstm", 0, {{1000, 10}});
  write_evals(a, "hop/minlstm", 1, {{1000, 14}});
  write_evals(b, "hop/minlstm", 2, {{1000, 2}});
  write_evals(b, "hop/minlstm", 3, {{1000, 6}});
  // Welch where the seeds overlap but differ (A 0–1, B 0–2): 10, 14 against 0, 6, 12 — variances
  // 8 and 36, squared s.e. 4 and 12: s.e. 4, t = 6/4 = 1.5, df 16² / (4²/1 + 12²/2) = 32/11.
  write_evals(a, "hop/transformer", 0, {{1000, 10}});
  write_evals(a, "hop/transformer", 1, {{1000, 14}});
  for (int seed : {0, 1, 2}) write_evals(b, "hop/transformer", seed, {{1000, 6.0 * seed}});

  const auto cells = compare_sweeps(a.string(), b.string());
  ASSERT_EQ(cells.size(), 3u);
  const CellComparison &gru = cells[0], &lstm = cells[1], &tf = cells[2];
  EXPECT_TRUE(gru.paired_test);
  EXPECT_DOUBLE_EQ(gru.paired_difference, 3);
  EXPECT_DOUBLE_EQ(gru.paired_standard_error, 1 / std::sqrt(3.0));
  EXPECT_NEAR(gru.standard_error, std::sqrt(181 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(gru.degrees_of_freedom, 2);
  EXPECT_NEAR(gru.p_value, 1 - std::sqrt(27 / 29.0), 1e-12);
  EXPECT_FALSE(gru.within_noise);

  EXPECT_FALSE(lstm.paired_test);
  EXPECT_EQ(lstm.paired_seeds, 0);
  EXPECT_DOUBLE_EQ(lstm.standard_error, 2 * std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(lstm.degrees_of_freedom, 2);
  EXPECT_NEAR(lstm.p_value, 1 - std::sqrt(0.8), 1e-12);
  EXPECT_TRUE(lstm.within_noise);

  EXPECT_FALSE(tf.paired_test);
  EXPECT_EQ(tf.paired_seeds, 2);
  EXPECT_DOUBLE_EQ(tf.standard_error, 4);
  EXPECT_NEAR(tf.degrees_of_freedom, 32 / 11.0, 1e-12);
  // Between t = 1.5's p at 2 df (1 − 1.5/√4.25 = 0.272) and at 3 df (0.231).
  EXPECT_GT(tf.p_value, 0.231);
  EXPECT_LT(tf.p_value, 0.272);
  EXPECT_TRUE(tf.within_noise);

  const std::string md = comparison_markdown(cells, "a", "b");
  EXPECT_NE(md.find("| paired t, 2 df: p = 0.035 | **moved (p < 0.05)** |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| Welch t, 2.0 df: p = 0.11 | within seed noise |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Welch t, 2.9 df: p = 0.2"), std::string::npos) << md;
  const std::string csv = comparison_csv(cells);
  EXPECT_NE(csv.find(",0,moved (p < 0.05),,paired,2,0.0350987\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,within seed noise,,welch,2,0.105573\n"), std::string::npos) << csv;
}

TEST(Compare, CellsWithoutACommonStepOrASecondSeedSaySo) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  write_evals(a, "hop/mingru", 0, {{1000, 10}});
  write_evals(b, "hop/mingru", 0, {{2000, 10}});
  write_evals(a, "hop/minlstm", 0, {{1000, 10}});
  write_evals(b, "hop/minlstm", 0, {{1000, 10}});
  const auto cells = compare_sweeps(a.string(), b.string());
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].evaluations, 0);   // minGRU: no step both evaluated
  EXPECT_FALSE(cells[1].within_noise);  // minLSTM: one seed a side has no spread to judge by
  const std::string md = comparison_markdown(cells, "a", "b");
  EXPECT_NE(md.find("no step evaluated by every run"), std::string::npos) << md;
  EXPECT_NE(md.find("too few seeds to say"), std::string::npos) << md;
  // No verdict: within_noise is empty, not 0 ("moved"); one seed has no std.
  const std::string csv = comparison_csv(cells);
  EXPECT_NE(csv.find("\nhop,mingru,0,0,0,0,,,0,,,,,0,,,,no step evaluated by every run,,,,\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\nhop,minlstm,1000,1000,1,1,10,,1,10,,0,,1,0,,,too few seeds to say,,,,\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(md.find("| 10.0 (n=1) | 10.0 (n=1) |"), std::string::npos) << md;
}

// A label holding a comma, a quote or a '|' (a folder name may) keeps its rows' columns.
TEST(Compare, ALabelWithACommaOrABarKeepsItsColumns) {
  testing::TempDir tmp;
  const std::string label = "hop,\"x\"|y";
  write_evals(tmp.path / "a", label + "/mingru", 0, {{1000, 10}});
  write_evals(tmp.path / "b", label + "/mingru", 0, {{1000, 10}});
  const auto cells = compare_sweeps((tmp.path / "a").string(), (tmp.path / "b").string());
  const std::string csv = comparison_csv(cells);
  EXPECT_NE(csv.find("\n\"hop,\"\"x\"\"|y\",mingru,1000,1000,1,"), std::string::npos) << csv;
  const std::string md = comparison_markdown(cells, "a", "b");
  EXPECT_NE(md.find("| hop,\"x\"\\|y | mingru |"), std::string::npos) << md;
}

// What the two sides trained with, where it differs, is named beside the verdict: the change under
// test, or data that was not meant to differ. A failed run is left out, as the report leaves it.
TEST(Compare, NamesTheSettingsTheSidesDifferInAndLeavesFailedRunsOut) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  for (int seed : {0, 1}) {
    write_evals(a, "hop/mingru", seed, {{1000, 10.0 + seed}});
    write_evals(b, "hop/mingru", seed, {{1000, 11.0 - seed}});  // A − B −1 and +1: within noise
    // The evaluations during training, which compare scores, were asked for 3600 and 300.
    for (const auto& [side, precision, fingerprint, target] :
         {std::tuple{a, "tf32", "0123456789abcdef", "3600"},
          std::tuple{b, "fp32", "fedcba9876543210", "300"}}) {
      const fs::path run = side / "hop/mingru" / ("seed" + std::to_string(seed));
      testing::write_text(run / "config.yaml",
                          std::string("dataset: d.hdf5\nenv: hopper\nmatmul_precision: ") +
                              precision + "\ntarget_return: " + target +
                              "\nseed: " + std::to_string(seed) + "\n");
      testing::write_text(run / "env.json",
                          std::string(R"({"dataset_fingerprint": ")") + fingerprint + "\"}");
    }
  }
  write_evals(b, "hop/mingru", 2, {{1000, 90}});
  testing::write_text(b / "hop/mingru/seed2/failed.json", R"({"phase": "train"})");
  const auto cells = compare_sweeps(a.string(), b.string());
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].b.seeds, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(cells[0].settings_apart,
            "data fingerprint 0123456789abcdef / fedcba9876543210; matmul_precision tf32 / fp32; "
            "target_return 3600 / 300");
  EXPECT_NE(comparison_csv(cells).find(",within seed noise,data fingerprint 0123"),
            std::string::npos);
}

// A run whose evals.csv cannot be read is left out of its side and named (a walk, 2026-11-30: a
// folder in its place or a copy cut short dropped the seed without a word, and one NaN
// evaluation stopped the whole comparison); one whose config.yaml is gone is compared, its
// settings said unknown once rather than every key "(none)".
TEST(Compare, RunsWhoseFilesCannotBeReadAreLeftOutAndNamed) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  for (int seed : {0, 1}) {
    write_evals(a, "hop/mingru", seed, {{1000, 10.0 + seed}});
    write_evals(b, "hop/mingru", seed, {{1000, 11.0 + seed}});
    testing::write_text(a / "hop/mingru" / ("seed" + std::to_string(seed)) / "config.yaml",
                        "dataset: d.hdf5\nenv: hopper\n");
  }
  testing::write_text(b / "hop/mingru/seed0/config.yaml", "dataset: d.hdf5\nenv: hopper\n");
  testing::write_text(a / "hop/mingru/seed2/evals.csv", "1000,1,1,nan,1\n");
  fs::create_directories(a / "hop/mingru/seed3/evals.csv");
  testing::write_text(a / "hop/mingru/seed4/evals.csv", "1000,1,1,10,1\n2000,1,1,1");
  testing::write_text(a / "hop/mingru/seed4/done.json", "{}\n");  // finished: wrote it whole
  std::vector<std::string> left_out;
  const auto cells = compare_sweeps(a.string(), b.string(), &left_out);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].a.seeds, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(left_out.size(), 3u) << ::testing::PrintToString(left_out);
  for (const auto& [seed, why] : {std::pair{2, "the evaluation at step 1000 is nan"},
                                  std::pair{3, "not a file"}, std::pair{4, "cut short"}}) {
    const std::string file = (a / "hop/mingru" / ("seed" + std::to_string(seed)) / "evals.csv");
    EXPECT_NE(left_out[seed - 2].find(file), std::string::npos) << left_out[seed - 2];
    EXPECT_NE(left_out[seed - 2].find(why), std::string::npos) << left_out[seed - 2];
  }
  EXPECT_EQ(cells[0].settings_apart, "config.yaml read / missing, read");
  const std::string md = comparison_markdown(cells, "a", "b", left_out);
  EXPECT_NE(md.find("## Runs left out"), std::string::npos) << md;
  EXPECT_NE(md.find("- " + left_out[0]), std::string::npos) << md;
  // No run of B says what it trained with: said once, not every key "a / ".
  fs::remove(b / "hop/mingru/seed0/config.yaml");
  EXPECT_EQ(compare_sweeps(a.string(), b.string())[0].settings_apart, "config.yaml read / missing");
}

// A cell whose runs on B were all left out unreadable has runs there, none readable: said so,
// not "B has no run of it" (review 51).
TEST(Compare, ACellWhoseOtherSideRunsAreAllUnreadableSaysSo) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  for (const fs::path& side : {a, b}) write_evals(side, "hop/mingru", 0, {{1000, 10}});
  write_evals(a, "hop/minlstm", 0, {{1000, 10}});
  write_evals(a, "hop/minlstm", 1, {{1000, 11}});
  testing::write_text(b / "hop/minlstm/seed0/evals.csv", "1000,1,1,nan,1\n");
  testing::write_text(b / "hop/minlstm/seed1/evals.csv", "1000,1,1,abc,1\n");
  std::vector<std::string> left_out, one_sided;
  const auto cells = compare_sweeps(a.string(), b.string(), &left_out, &one_sided);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(left_out.size(), 2u) << ::testing::PrintToString(left_out);
  EXPECT_EQ(one_sided, std::vector<std::string>{"hop / minlstm: only in A (2 run(s) with "
                                                "evaluations; B's 2 run(s) of it left out)"});
  const std::string md = comparison_markdown(cells, "a", "b", left_out, one_sided);
  EXPECT_NE(md.find("the other sweep has no readable run of them"), std::string::npos) << md;
  EXPECT_EQ(md.find("has no run of them"), std::string::npos) << md;
}

// A run in another run's folder (a copy of minlstm/ named gru/) is left out and named, as the
// report names it, not compared as a cell of its own.
TEST(Compare, ARunInAnotherRunsFolderIsLeftOutAndNamed) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  for (const fs::path& side : {a, b}) {
    write_evals(side, "hop/minlstm", 0, {{1000, 10}});
    testing::write_text(side / "hop/minlstm/seed0/config.yaml",
                        "dataset: d.hdf5\nbackbone: minlstm\n");
  }
  fs::copy(a / "hop/minlstm", a / "hop/gru", fs::copy_options::recursive);
  std::vector<std::string> left_out, one_sided;
  const auto cells = compare_sweeps(a.string(), b.string(), &left_out, &one_sided);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].backbone, "minlstm");
  EXPECT_TRUE(one_sided.empty()) << ::testing::PrintToString(one_sided);
  ASSERT_EQ(left_out.size(), 1u);
  EXPECT_EQ(left_out[0], (a / "hop/gru/seed0/config.yaml").string() +
                             " says backbone minlstm, but the run is in the folder gru (a copy "
                             "under another name?)");
}

// What moved a cell's window without a word (a walk, 2026-11-30): a whole row short of its
// columns, an empty file of a finished run, and one whose last rows were lost (a finished run
// evaluated at its last step, done.json's). Each is named and left out; the cell keeps the window
// of the runs that read whole.
TEST(Compare, RowsShortOrLostAreNamedNotSkipped) {
  testing::TempDir tmp;
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  for (int seed : {0, 1}) {
    for (const fs::path& side : {a, b}) {
      write_evals(side, "hop/mingru", seed, {{1000, 10.0 + seed}, {2000, 20.0 + seed}});
      testing::write_text(side / "hop/mingru" / ("seed" + std::to_string(seed)) / "done.json",
                          "{\"step\": 2000}\n");
    }
  }
  testing::write_text(a / "hop/mingru/seed2/evals.csv", "1000,1,1,10,1\n1500,1,1\n2000,1,1,20,1\n");
  testing::write_text(a / "hop/mingru/seed3/evals.csv", "");
  testing::write_text(a / "hop/mingru/seed3/done.json", "{\"step\": 2000}\n");
  testing::write_text(a / "hop/mingru/seed4/evals.csv", "1000,1,1,10,1\n");
  testing::write_text(a / "hop/mingru/seed4/done.json", "{\"step\": 2000}\n");
  std::vector<std::string> left_out;
  const auto cells = compare_sweeps(a.string(), b.string(), &left_out);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].a.seeds, (std::vector<int64_t>{0, 1}));
  // The later half of the common steps 1000 and 2000; seed 4's lost row would make it 1000.
  EXPECT_EQ(cells[0].from_step, 2000);
  EXPECT_EQ(cells[0].to_step, 2000);
  ASSERT_EQ(left_out.size(), 3u) << ::testing::PrintToString(left_out);
  for (const auto& [seed, why] :
       {std::pair{2, "evals.csv:2: 3 column(s), where a row has 4 or more"},
        std::pair{3, "evals.csv: no row, but the run finished at step 2000"},
        std::pair{4,
                  "evals.csv: its last row is of step 1000, but the run finished at step 2000"}}) {
    EXPECT_NE(left_out[seed - 2].find("seed" + std::to_string(seed) + "/" + why), std::string::npos)
        << left_out[seed - 2];
  }
}

TEST(Compare, APathThatIsNoDirectoryIsNamed) {
  testing::TempDir tmp;
  write_evals(tmp.path / "a", "hop/mingru", 0, {{1000, 10}});
  try {
    compare_sweeps((tmp.path / "a").string(), (tmp.path / "nowhere").string());
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((tmp.path / "nowhere").string()), std::string::npos) << what;
    EXPECT_NE(what.find("no such sweep directory"), std::string::npos) << what;
  }
}

TEST(Compare, SweepsWithNothingInCommonAreRefusedNamingBoth) {
  testing::TempDir tmp;
  write_evals(tmp.path / "a", "hop/mingru", 0, {{1000, 10}});
  write_evals(tmp.path / "b", "walker/mingru", 0, {{1000, 10}});
  try {
    compare_sweeps((tmp.path / "a").string(), (tmp.path / "b").string());
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((tmp.path / "a").string() + " and " + (tmp.path / "b").string()),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("share no dataset and backbone"), std::string::npos) << what;
  }
  EXPECT_THROW(compare_sweeps((tmp.path / "missing").string(), (tmp.path / "b").string()),
               std::invalid_argument);
  // Nothing in common because B's runs were left out: the refusal names them.
  testing::write_text(tmp.path / "c/hop/mingru/seed0/evals.csv", "1000,1,1,nan,1\n");
  try {
    compare_sweeps((tmp.path / "a").string(), (tmp.path / "c").string());
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("runs left out, unreadable or in another run's folder:\n  " +
                                   (tmp.path / "c/hop/mingru/seed0/evals.csv").string()),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace minrnn::eval
