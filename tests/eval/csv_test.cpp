// A run's evaluation curve as the report reads it (eval/csv.h), with or without evals.csv's header.
#include "eval/csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/temp_dir.h"

namespace minrnn {
namespace {

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
