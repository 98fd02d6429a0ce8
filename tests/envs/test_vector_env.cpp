#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "envs/registry.h"
#include "envs/rng.h"
#include "envs/vector_env.h"
#include "io/cpus.h"

namespace minrnn::envs {
namespace {

std::vector<std::vector<double>> random_actions(Rng& rng, int n, int act_dim) {
  std::vector<std::vector<double>> actions(n, std::vector<double>(act_dim));
  for (auto& a : actions) {
    for (double& x : a) x = rng.uniform(-1, 1);
  }
  return actions;
}

TEST(VectorEnv, MatchesIndependentEnvsWithAutoReset) {
  const int n = 3;
  VectorEnv vec("hopper-medium-v2", n, 40, 2);
  std::vector<std::unique_ptr<Env>> singles;
  for (int i = 0; i < n; ++i) singles.push_back(make_env("hopper", 40 + i));
  auto vec_obs = vec.reset(40);
  for (int i = 0; i < n; ++i) ASSERT_EQ(vec_obs[i], singles[i]->reset(40 + i));

  Rng rng(3);
  int resets = 0;
  for (int t = 0; t < 300; ++t) {
    const auto actions = random_actions(rng, n, 3);
    const VectorStepResult r = vec.step(actions);
    for (int i = 0; i < n; ++i) {
      const StepResult s = singles[i]->step(actions[i]);
      ASSERT_EQ(r.steps[i].obs, s.obs) << "env " << i << " t " << t;
      ASSERT_EQ(r.steps[i].reward, s.reward);
      ASSERT_EQ(r.steps[i].terminated, s.terminated);
      const bool ended = s.terminated || s.truncated;
      ASSERT_EQ(r.was_reset[i], ended ? 1 : 0);
      if (ended) {
        ++resets;
        // The new episode's first obs, drawn from env i's own generator.
        ASSERT_EQ(r.obs[i], singles[i]->reset());
        ASSERT_NE(r.obs[i], r.steps[i].obs);
      } else {
        ASSERT_EQ(r.obs[i], s.obs);
      }
    }
  }
  EXPECT_GT(resets, 3);  // a random hopper falls within tens of steps
}

TEST(VectorEnv, ResultsDoNotDependOnTheThreadCount) {
  VectorEnv one("walker2d", 5, 7, 1), four("walker2d", 5, 7, 4);
  EXPECT_EQ(one.num_threads(), 1);
  EXPECT_EQ(four.num_threads(), std::min(4, io::usable_cpu_count()));  // no more than it may use
  EXPECT_EQ(one.reset(), four.reset());
  Rng rng(1);
  for (int t = 0; t < 100; ++t) {
    const auto actions = random_actions(rng, 5, 6);
    const auto a = one.step(actions), b = four.step(actions);
    ASSERT_EQ(a.obs, b.obs) << t;
    ASSERT_EQ(a.was_reset, b.was_reset) << t;
  }
}

TEST(VectorEnv, TruncatesAtTheTimeLimitAndKeepsTheFinalObservation) {
  VectorEnv vec("halfcheetah", 2, 0, 2);
  vec.reset(0);
  const std::vector<std::vector<double>> zeros(2, std::vector<double>(6, 0.0));
  for (int t = 1; t < 1000; ++t) ASSERT_EQ(vec.step(zeros).was_reset[0], 0) << t;
  const auto r = vec.step(zeros);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(r.steps[i].truncated);
    EXPECT_FALSE(r.steps[i].terminated);
    EXPECT_EQ(r.was_reset[i], 1);
    EXPECT_EQ(vec.env(i).elapsed_steps(), 0);
    EXPECT_EQ(r.obs[i], vec.env(i).observation());
  }
}

TEST(VectorEnv, BadActionAnywhereMovesNoEnv) {
  VectorEnv vec("hopper", 3, 0, 3);
  vec.reset(0);
  std::vector<std::vector<double>> actions(3, std::vector<double>(3, 0.1));
  actions[2][1] = std::numeric_limits<double>::quiet_NaN();
  try {
    vec.step(actions);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("env 2"), std::string::npos) << e.what();
  }
  actions.pop_back();
  EXPECT_THROW(vec.step(actions), std::invalid_argument);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(vec.env(i).elapsed_steps(), 0);
  EXPECT_THROW(VectorEnv("hopper", 0), std::invalid_argument);
  EXPECT_THROW(VectorEnv("ant", 2), std::invalid_argument);
}

}  // namespace
}  // namespace minrnn::envs
