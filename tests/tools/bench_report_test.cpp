// What every bench's filed entry says beside its numbers (tools/bench/report.h): the environment
// variables that changed what it measured, under its heading — set, each named with its value;
// unset, the entry as measured. And the median the benches report.
#include "tools/bench/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/scoped_env.h"

namespace minrnn::cli {
namespace {

TEST(BenchReport, AnEntryNamesTheEnvironmentThatChangedItsRun) {
  std::vector<std::unique_ptr<testing::ScopedEnv>> clean;  // each variable it reads, unset
  for (const char* name : kBehaviourVariables) {
    clean.push_back(std::make_unique<testing::ScopedEnv>(name, std::nullopt));
  }
  const std::string entry = "### 2026-11-28 03:00 — a CPU\n\nCommand: `minrnn bench train`.\n";
  EXPECT_EQ(with_environment(entry), entry);
  setenv("MINRNN_SCAN_KERNEL", "tiled32", 1);
  setenv("MINRNN_SIDE_WORK", "1", 1);
  EXPECT_EQ(with_environment(entry),
            "### 2026-11-28 03:00 — a CPU\n\nSet in the environment: `MINRNN_SCAN_KERNEL=tiled32`, "
            "`MINRNN_SIDE_WORK=1`.\n\nCommand: `minrnn bench train`.\n");
  EXPECT_EQ(with_environment("no heading\n\nbody"), "no heading\n\nbody");  // not an entry
}

// The benches' median (bench train's rounds, bench scan's and figure1's repeats): the middle one,
// the mean of the middle two for an even count, whatever the order; nothing measured is NaN.
TEST(BenchReport, AMedianIsTheMiddleOfTheSortedValues) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_TRUE(std::isnan(median({})));
}

}  // namespace
}  // namespace minrnn::cli
