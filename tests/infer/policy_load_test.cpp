// Policy::load on several threads at once, as infer/policy.h allows: six threads of 15 loads each
// hung (a forked reader waited on LibTorch's random-number lock, held at the fork by a thread
// building its model; an audit of the installed package, 2026-11-29).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "infer/policy.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

TEST(PolicyLoad, ManyThreadsLoadAtOnceAndAgree) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 300);
  rl::TrainOptions opt;
  opt.quiet = true;
  opt.run_dir = (tmp.path / "run").string();
  rl::train(testing::tiny_config(data, "mingru", {"max_steps=2", "checkpoint_every=2"}), opt);

  const std::vector<double> obs(11, 0.1);
  const std::vector<double> expected = rl::Policy::load(opt.run_dir).act(obs);
  constexpr int kThreads = 4, kLoads = 6;
  std::vector<std::vector<double>> actions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLoads; ++i) actions[t] = rl::Policy::load(opt.run_dir).act(obs);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(actions[t], expected) << "thread " << t;
}

}  // namespace
}  // namespace minrnn
