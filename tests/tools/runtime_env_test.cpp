// How the CLI sets OpenMP's waiting before it starts (tools/runtime_env.h).
#include "tools/runtime_env.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace minrnn::cli {
namespace {

using Setting = std::optional<std::pair<std::string, std::string>>;

TEST(RuntimeEnv, ThreadsThatFitBesideTheOthersSpinBeforeSleeping) {
  const Setting s = openmp_wait_setting(nullptr, nullptr, /*cpus=*/2, /*threads=*/2, /*others=*/0);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->first, "GOMP_SPINCOUNT");
  EXPECT_EQ(s->second, "300000");
  EXPECT_EQ(openmp_wait_setting(nullptr, nullptr, 8, 4, 4)->first, "GOMP_SPINCOUNT");
}

TEST(RuntimeEnv, ThreadsThatDoNotFitSleepAtOnce) {
  const Setting s = openmp_wait_setting(nullptr, nullptr, /*cpus=*/2, /*threads=*/2, /*others=*/1);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->first, "OMP_WAIT_POLICY");
  EXPECT_EQ(s->second, "PASSIVE");
  EXPECT_EQ(openmp_wait_setting(nullptr, nullptr, 8, 16, 0)->first, "OMP_WAIT_POLICY");
}

TEST(RuntimeEnv, TheUsersChoiceAndSingleThreadedRunsAreLeftAlone) {
  EXPECT_FALSE(openmp_wait_setting("ACTIVE", nullptr, 2, 2, 5).has_value());
  EXPECT_FALSE(openmp_wait_setting(nullptr, "0", 2, 2, 0).has_value());
  EXPECT_FALSE(openmp_wait_setting("", nullptr, 2, 2, 0).has_value());
  EXPECT_FALSE(openmp_wait_setting(nullptr, nullptr, 2, 1, 5).has_value());
}

TEST(RuntimeEnv, SettingsTheUserMadeAreNotRepeated) {
  // ctest runs this with OMP_WAIT_POLICY set; make sure of it, then: no OpenMP setting, and the
  // malloc settings only where unset.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  setenv("MALLOC_TOP_PAD_", "1", 1);
  unsetenv("MALLOC_MMAP_THRESHOLD_");
  for (const auto& [name, value] : runtime_settings()) {
    EXPECT_NE(name, "OMP_WAIT_POLICY");
    EXPECT_NE(name, "GOMP_SPINCOUNT");
    EXPECT_NE(name, "MALLOC_TOP_PAD_");
  }
  bool mmap = false;
  for (const auto& [name, value] : runtime_settings()) mmap |= name == "MALLOC_MMAP_THRESHOLD_";
  EXPECT_TRUE(mmap);
}

}  // namespace
}  // namespace minrnn::cli
