// The one thread pool (io/workers.h), which the packed policy's products, a VectorEnv's envs and a
// rollout's shards share.
#include "io/workers.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "io/cpus.h"

namespace minrnn::io {
namespace {

// Under a CPU mask of one core (taskset, Slurm's binding) a pool of 4 starts no thread: they
// would only take turns on that core. The mask is this thread's, restored before any check.
TEST(Workers, StartNoMoreThreadsThanTheAffinityMaskAllows) {
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int threads = Workers(4).threads();
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(threads, 1);
}

// Every task of every batch runs once, batches back to back (the pool threads spinning or asleep).
TEST(Workers, EveryTaskRunsOnceInEveryBatch) {
  Workers workers(4);
  const int usable = usable_cpu_count();
  EXPECT_EQ(workers.threads(), std::min(4, usable));  // no more than this process runs at once
  EXPECT_EQ(Workers(1 << 20).threads(), usable);      // a count no system would start
  std::vector<std::atomic<int>> runs(37);
  for (int batch = 1; batch <= 500; ++batch) {
    const int64_t count = 1 + batch % 37;
    workers.for_each(count, [&](int64_t i) { runs[i].fetch_add(1); });
    for (int64_t i = 0; i < 37; ++i) {
      ASSERT_EQ(runs[i].load(), i < count ? 1 : 0) << "batch " << batch << ", task " << i;
      runs[i].store(0);
    }
    if (batch % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep
  }
  // A task that throws: every other task still runs, and the caller gets the exception once the
  // batch is over (the pool goes on with the next).
  std::atomic<int> ran{0};
  EXPECT_THROW(workers.for_each(16,
                                [&](int64_t i) {
                                  ran.fetch_add(1);
                                  if (i == 3) throw std::runtime_error("task 3");
                                }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 16);
  workers.for_each(5, [&](int64_t i) { runs[i].fetch_add(1); });
  EXPECT_EQ(runs[4].load(), 1);
  workers.for_each(0, [&](int64_t) { ADD_FAILURE() << "a task of none"; });
  Workers alone(1);  // no pool thread: the caller runs them all
  int64_t sum = 0;
  alone.for_each(10, [&](int64_t i) { sum += i; });
  EXPECT_EQ(sum, 45);
}

// Task 0 is the caller's, in every batch (a rollout's shard 0 renders with the caller's
// renderer); the others may run anywhere.
TEST(Workers, TaskZeroRunsOnTheCallingThread) {
  Workers workers(4);
  const std::thread::id caller = std::this_thread::get_id();
  for (int batch = 0; batch < 200; ++batch) {
    std::thread::id first;
    workers.for_each(8, [&](int64_t i) {
      if (i == 0) first = std::this_thread::get_id();
    });
    ASSERT_EQ(first, caller) << "batch " << batch;
  }
}

}  // namespace
}  // namespace minrnn::io
