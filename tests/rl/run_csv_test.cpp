// metrics.csv and evals.csv through their one reader and writer (rl/run_dir.h: run_rows,
// row_line): columns by the header's names or an older file's places, a cell that is no number
// none, the step a whole number.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "rl/run_dir.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

TEST(RunCsv, RowsAreReadByTheHeadersNamesOrAnOlderFilesPlaces) {
  testing::TempDir tmp;
  const std::string csv = (tmp.path / "evals.csv").string();
  // The header in another order than the writer's today: read by name.
  testing::write_text(csv, "step,mean_normalized,mean_return\n10,55,1.5\nx,1,2\n20,abc,2.5\n30,6");
  std::vector<rl::RunRow> rows = rl::run_rows(csv, rl::evals_columns());
  ASSERT_EQ(rows.size(), 2u);  // "x" is no step; the torn last line no row
  EXPECT_EQ(rows[0].step, 10);
  EXPECT_EQ(rows[0].values[1], 1.5);              // mean_return
  EXPECT_EQ(rows[0].values[3], 55);               // mean_normalized
  EXPECT_EQ(rows[0].values[2], std::nullopt);     // std_return: not in the file
  EXPECT_EQ(rows[1].values[3], std::nullopt);     // "abc"
  testing::write_text(csv, "10,1.5,0.5,55,5\n");  // from before the header
  rows = rl::run_rows(csv, rl::evals_columns());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].values[3], 55);
  EXPECT_EQ(rows[0].values[4], 5);
}

// What the writers append reads back as what they wrote, to the format's digits.
TEST(RunCsv, ARowLineReadsBackAsItsRow) {
  testing::TempDir tmp;
  const std::string csv = (tmp.path / "evals.csv").string();
  const rl::RunRow row{40, {40.0, 1234.56789, 0.5, std::nullopt, 2.0}};
  EXPECT_EQ(rl::row_line(row, "%.3f"), "40,1234.568,0.500,,2.000\n");
  testing::write_text(csv, rl::header_line(rl::evals_columns()) + rl::row_line(row, "%g"));
  const std::vector<rl::RunRow> back = rl::run_rows(csv, rl::evals_columns());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].step, 40);
  EXPECT_EQ(back[0].values[1], 1234.57);
  EXPECT_EQ(back[0].values[3], std::nullopt);
  // The line itself, as TensorBoard's writer reads it: the values the text holds.
  const std::optional<rl::RunRow> line =
      rl::row_in_line(rl::row_line(row, "%g"), rl::evals_columns());
  ASSERT_TRUE(line);
  EXPECT_EQ(line->step, 40);
  EXPECT_EQ(line->values[1], 1234.57);
  EXPECT_EQ(line->values[3], std::nullopt);
  EXPECT_FALSE(rl::row_in_line(rl::header_line(rl::evals_columns()), rl::evals_columns()));
}

}  // namespace
}  // namespace minrnn
