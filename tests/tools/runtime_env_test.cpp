// How the CLI sets OpenMP's waiting before it starts (tools/runtime_env.h).
#include "tools/runtime_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace minrnn::cli {
namespace {

using Setting = std::optional<std::pair<std::string, std::string>>;

// Threads that fit beside the others spin a while before sleeping; threads that do not fit
// sleep at once.
TEST(RuntimeEnv, SpinWhereThreadsFitSleepWhereTheyDoNot) {
  struct Case {
    int cpus, threads, others;
    const char *name, *value;
  };
  for (const Case& c :
       {Case{2, 2, 0, "GOMP_SPINCOUNT", "300000"}, Case{8, 4, 4, "GOMP_SPINCOUNT", "300000"},
        Case{2, 2, 1, "OMP_WAIT_POLICY", "PASSIVE"},
        Case{8, 16, 0, "OMP_WAIT_POLICY", "PASSIVE"}}) {
    SCOPED_TRACE(std::to_string(c.threads) + " threads on " + std::to_string(c.cpus) +
                 " cpus beside " + std::to_string(c.others));
    const Setting s = openmp_wait_setting(nullptr, nullptr, c.cpus, c.threads, c.others);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->first, c.name);
    EXPECT_EQ(s->second, c.value);
  }
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

// CUDA's hardware queues: raised to 32 (one per run of a pack of up to 32), unless the user set
// them, to whatever value.
TEST(RuntimeEnv, CudaQueuesAreRaisedUnlessTheUserChose) {
  auto queues = [] {
    std::string value;
    for (const auto& [name, v] : runtime_settings())
      if (name == "CUDA_DEVICE_MAX_CONNECTIONS") value = v;
    return value;
  };
  unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(queues(), "32");
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1);
  EXPECT_EQ(queues(), "");
  unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

}  // namespace
}  // namespace minrnn::cli
