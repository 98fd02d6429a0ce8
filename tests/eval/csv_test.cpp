// The CSV files of a run as a report reads them (eval/csv.h): whole lines only, columns by the
// header's names, and a line short of them, or a blank one, as it is.
#include "eval/csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/temp_dir.h"

namespace minrnn {
namespace {

// A run killed mid-line leaves a torn last line; one that still has enough commas ("5,0." of
// "5,0.25,...") is not a row: the report and the sweep read whole lines only, as resume does.
TEST(RunCsv, ATornLastLineIsNotARowEvenWithEnoughColumns) {
  testing::TempDir tmp;
  std::ofstream(tmp.path / "metrics.csv") << "step,loss\n1,0.5\n3,0.4\n5,0.";
  eval::Series s;
  ASSERT_TRUE(eval::read_csv_columns(tmp.path / "metrics.csv", true, "step", "loss", -1, -1, &s));
  EXPECT_EQ(s.x, (std::vector<double>{1, 3}));
  EXPECT_EQ(s.y, (std::vector<double>{0.5, 0.4}));
}

// A header without the columns read is said, naming the file: a damaged metrics.csv dropped its
// seed's loss curve from the report without a word (a walk, 2026-11-29).
TEST(RunCsv, AHeaderWithoutTheColumnsReadIsNamed) {
  testing::TempDir tmp;
  std::ofstream(tmp.path / "metrics.csv") << "garbage,\n1,0.5\n";
  eval::Series s;
  try {
    eval::read_csv_columns(tmp.path / "metrics.csv", true, "step", "loss", -1, -1, &s);
    FAIL() << "read a curve from a header without its columns";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              (tmp.path / "metrics.csv").string() +
                  ":1: its header has no 'step' column (expected a header naming step and loss)");
  }
  // A file from before the header: its columns by place.
  std::ofstream(tmp.path / "metrics.csv", std::ios::trunc) << "1,0.5\n2,0.25\n";
  ASSERT_TRUE(eval::read_csv_columns(tmp.path / "metrics.csv", true, "step", "loss", 0, 1, &s));
  EXPECT_EQ(s.y, (std::vector<double>{0.5, 0.25}));
}

// A blank line an editor left is no row and no damage; a line with content short of the columns
// read is damage, named (a walk, 2026-11-30: skipped, it moved compare's window).
TEST(RunCsv, ABlankLineIsSkippedAndAShortOneNamed) {
  testing::TempDir tmp;
  std::ofstream(tmp.path / "evals.csv") << "100,1,1,10,1\n\n200,1,1,20,1\n";
  eval::Series s;
  ASSERT_TRUE(eval::read_csv_columns(tmp.path / "evals.csv", false, "", "", 0, 3, &s));
  EXPECT_EQ(s.y, (std::vector<double>{10, 20}));
  std::ofstream(tmp.path / "evals.csv", std::ios::trunc) << "100,1,1,10,1\n150,1\n";
  EXPECT_THROW(eval::read_csv_columns(tmp.path / "evals.csv", false, "", "", 0, 3, &s),
               std::runtime_error);
}

// A run's evaluations read by its header's names, and a file from before the header (its rows
// alone) by place: the same curve.
TEST(RunCsv, EvalsReadWithOrWithoutTheHeader) {
  testing::TempDir tmp;
  const std::string rows = "100,1,1,10,1\n200,2,1,20,1\n";
  std::ofstream(tmp.path / "evals.csv")
      << "step,mean_return,std_return,mean_normalized,std_normalized\n" + rows;
  eval::Series with, without;
  ASSERT_TRUE(eval::read_eval_curve(tmp.path, &with));
  std::ofstream(tmp.path / "evals.csv", std::ios::trunc) << rows;
  ASSERT_TRUE(eval::read_eval_curve(tmp.path, &without));
  EXPECT_EQ(with.x, (std::vector<double>{100, 200}));
  EXPECT_EQ(with.y, (std::vector<double>{10, 20}));
  EXPECT_EQ(without.x, with.x);
  EXPECT_EQ(without.y, with.y);
}

}  // namespace
}  // namespace minrnn
