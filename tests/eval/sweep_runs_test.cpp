// A run's eval.json as the report and the sweep read it (eval/sweep_runs.h): a file cut short or a
// FIFO where it belongs is a result that is unreadable, said naming the file, never a wait.
#include "eval/sweep_runs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/temp_dir.h"

namespace minrnn {
namespace {

TEST(SweepRuns, AResultCutShortOrAFifoIsUnreadableAndNamed) {
  testing::TempDir tmp;
  const std::string result = (tmp.path / "eval.json").string();
  std::ofstream(result) << "{\"mean_normalized\": 4";
  eval::FinalEvaluation e = eval::read_final_evaluation(tmp.path);
  EXPECT_NE(e.unreadable.find(result + ": not valid JSON"), std::string::npos) << e.unreadable;
  std::filesystem::remove(result);
  ASSERT_EQ(::mkfifo(result.c_str(), 0600), 0);
  e = eval::read_final_evaluation(tmp.path);
  EXPECT_NE(e.unreadable.find(result + ": not a regular file"), std::string::npos) << e.unreadable;
}

}  // namespace
}  // namespace minrnn
