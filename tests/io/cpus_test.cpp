#include "io/cpus.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace minrnn::io {
namespace {

// Under taskset or Slurm's binding a process sees fewer CPUs than the machine has: the count is
// the mask's. Narrowed here for this thread alone (sched_setaffinity(0) is the calling thread's).
TEST(UsableCpus, CountTheAffinityMaskNotTheMachine) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(usable_cpu_count(), CPU_COUNT(&all));
  EXPECT_LE(usable_cpu_count(), static_cast<int>(std::thread::hardware_concurrency()));

  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int narrowed = usable_cpu_count();
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(narrowed, 1);
}

}  // namespace
}  // namespace minrnn::io
