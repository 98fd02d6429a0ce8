#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "datasets/episodes.h"
#include "tests/datasets/fixtures.h"

namespace minrnn::data {
namespace {

using testing::make_data;

TEST(EpisodesTest, SplitsOnTerminalsAndTimeoutsAndDropsTheTail) {
  Transitions d = make_data(4, 2, {5, 3, 6}, /*tail=*/4);
  EpisodeIndex idx = split_episodes(d, "test");
  ASSERT_EQ(idx.episodes.size(), 3u);
  EXPECT_EQ(idx.episodes[0].begin, 0);
  EXPECT_EQ(idx.episodes[0].end, 5);
  EXPECT_EQ(idx.episodes[1].begin, 5);
  EXPECT_EQ(idx.episodes[1].end, 8);
  EXPECT_TRUE(idx.episodes[1].ended_by_terminal);
  EXPECT_FALSE(idx.episodes[2].ended_by_terminal);
  EXPECT_EQ(idx.episodes[2].end, 14);
  EXPECT_EQ(idx.stats.dropped_tail_steps, 4);
  EXPECT_EQ(idx.stats.num_terminals, 1);
  EXPECT_EQ(idx.stats.num_timeouts, 2);
  EXPECT_EQ(idx.stats.min_length, 3);
  EXPECT_EQ(idx.stats.max_length, 6);
}

TEST(EpisodesTest, ReturnsToGoAndReturnStatistics) {
  Transitions d = make_data(2, 1, {3, 2});
  EpisodeIndex idx = split_episodes(d, "test");
  // rewards 1.00 1.01 1.02 | 1.00 1.01
  EXPECT_NEAR(idx.returns_to_go[0], 3.03, 1e-5);
  EXPECT_NEAR(idx.returns_to_go[1], 2.03, 1e-5);
  EXPECT_NEAR(idx.returns_to_go[2], 1.02, 1e-5);
  EXPECT_NEAR(idx.returns_to_go[3], 2.01, 1e-5);
  EXPECT_NEAR(idx.returns_to_go[4], 1.01, 1e-5);
  EXPECT_NEAR(idx.episodes[0].episode_return, 3.03, 1e-5);
  EXPECT_NEAR(idx.stats.min_return, 2.01, 1e-5);
  EXPECT_NEAR(idx.stats.max_return, 3.03, 1e-5);
  EXPECT_NEAR(idx.stats.mean_return, 2.52, 1e-5);
  EXPECT_NEAR(idx.stats.std_return, 0.51, 1e-5);
}

TEST(EpisodesTest, StateStatisticsCoverCompleteEpisodesOnly) {
  Transitions d = make_data(2, 1, {2, 2}, /*tail=*/1);
  float rows[5][2] = {{1, 10}, {3, 10}, {5, 10}, {7, 10}, {1000, 1000}};
  for (int t = 0; t < 5; ++t) std::copy(rows[t], rows[t] + 2, d.observations.begin() + 2 * t);
  EpisodeIndex idx = split_episodes(d, "test");
  EXPECT_NEAR(idx.state_mean[0], 4.0, 1e-6);
  EXPECT_NEAR(idx.state_std[0], std::sqrt(5.0) + 1e-6, 1e-5);
  EXPECT_NEAR(idx.state_mean[1], 10.0, 1e-6);
  EXPECT_NEAR(idx.state_std[1], 1e-6, 1e-7);  // constant column: std is the epsilon, never 0
}

TEST(EpisodesTest, NoCompleteEpisodeIsAnError) {
  Transitions d = make_data(2, 1, {}, /*tail=*/5);
  try {
    split_episodes(d, "file.hdf5");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("file.hdf5: no complete episode"), std::string::npos);
  }
}

// D4RL sets one of the two flags on a step; a step with both ends its episode as a terminal, and
// is counted so that `data inspect` can warn of it.
TEST(EpisodesTest, StepsWithBothFlagsAreCounted) {
  Transitions d = make_data(2, 1, {3, 2});  // a timeout ends the first, a terminal the second
  d.terminals[2] = 1;
  EpisodeIndex idx = split_episodes(d, "test");
  EXPECT_EQ(idx.episodes.size(), 2u);
  EXPECT_EQ(idx.stats.both_flags, 1);
  EXPECT_TRUE(idx.episodes[0].ended_by_terminal);
  EXPECT_EQ(idx.stats.num_timeouts, 1);
}

// Finite rewards whose sum is not (two of 3e38 in one episode): refused naming the row, where
// training stopped at its 7th step on "loss is not finite" (an audit, 2026-11-29).
TEST(EpisodesTest, AReturnToGoPastAFloatsRangeIsAnError) {
  Transitions d = make_data(2, 1, {3, 2});
  d.rewards[3] = d.rewards[4] = 3e38f;
  try {
    split_episodes(d, "file.hdf5");
    FAIL() << "a return-to-go of 6e38 went into a float";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("file.hdf5: the return-to-go at row 3 is "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace minrnn::data
