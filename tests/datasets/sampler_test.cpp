#include <gtest/gtest.h>

#include <cmath>

#include "datasets/sampler.h"
#include "tests/datasets/fixtures.h"

namespace minrnn::data {
namespace {

// Data whose observation column 0 holds the global step index, so a window names its source.
Transitions indexed_data(const std::vector<int>& lengths) {
  Transitions d = testing::make_data(3, 2, lengths, /*tail=*/2);
  for (int64_t t = 0; t < d.num_steps(); ++t) d.observations[t * 3] = static_cast<float>(t);
  return d;
}

SamplerOptions raw_options(int batch, int k, uint64_t seed) {
  SamplerOptions o;
  o.batch_size = batch;
  o.context_len = k;
  o.seed = seed;
  o.normalize_states = false;
  return o;
}

TEST(SamplerTest, WindowsAreRightPaddedAndMatchTheData) {
  Transitions d = indexed_data({5, 12, 3});
  EpisodeIndex idx = split_episodes(d, "test");
  TrajectorySampler sampler(d, idx, raw_options(256, 8, 7));
  SequenceBatch batch = sampler.sample();
  ASSERT_EQ(batch.states.size(), 256u * 8 * 3);
  ASSERT_EQ(batch.actions.size(), 256u * 8 * 2);
  int padded_windows = 0;
  for (int b = 0; b < 256; ++b) {
    int n = 0;
    for (int j = 0; j < 8; ++j) n += batch.mask[b * 8 + j] == 1.0f;
    padded_windows += n < 8;
    ASSERT_GE(n, 1);
    for (int j = 0; j < 8; ++j) {
      size_t slot = b * 8 + j;
      if (j >= n) {  // padding last, all zero: a causal model never sees it from a real step
        EXPECT_EQ(batch.mask[slot], 0.0f);
        EXPECT_EQ(batch.states[slot * 3 + 1], 0.0f);
        EXPECT_EQ(batch.actions[slot * 2], 0.0f);
        EXPECT_EQ(batch.returns_to_go[slot], 0.0f);
        EXPECT_EQ(batch.timesteps[slot], 0);
        continue;
      }
      ASSERT_EQ(batch.mask[slot], 1.0f);
      int64_t t = static_cast<int64_t>(batch.states[slot * 3]);
      EXPECT_EQ(batch.states[slot * 3 + 2], d.observations[t * 3 + 2]);
      EXPECT_EQ(batch.actions[slot * 2 + 1], d.actions[t * 2 + 1]);
      EXPECT_EQ(batch.returns_to_go[slot], idx.returns_to_go[t]);
      const Episode* ep = nullptr;
      for (const Episode& e : idx.episodes) ep = (t >= e.begin && t < e.end) ? &e : ep;
      ASSERT_NE(ep, nullptr) << "step " << t << " is outside every complete episode";
      EXPECT_EQ(batch.timesteps[slot], t - ep->begin);
      if (j > 0) {
        EXPECT_EQ(batch.states[(slot - 1) * 3] + 1, batch.states[slot * 3]);
      }
    }
    if (n < 8) {  // a short window always reaches its episode's end
      int64_t last = static_cast<int64_t>(batch.states[(b * 8 + n - 1) * 3]);
      EXPECT_TRUE(d.terminals[last] || d.timeouts[last]) << "window ends at " << last;
    }
  }
  EXPECT_GT(padded_windows, 0);
}

TEST(SamplerTest, DeterministicGivenSeed) {
  Transitions d = indexed_data({20, 30, 10});
  EpisodeIndex idx = split_episodes(d, "test");
  SamplerOptions o = raw_options(16, 5, 42);
  TrajectorySampler a(d, idx, o), b(d, idx, o);
  for (int i = 0; i < 3; ++i) {
    SequenceBatch x = a.sample(), y = b.sample();
    EXPECT_EQ(x.states, y.states);
    EXPECT_EQ(x.timesteps, y.timesteps);
  }
  o.seed = 43;
  TrajectorySampler c(d, idx, o);
  EXPECT_NE(TrajectorySampler(d, idx, raw_options(16, 5, 42)).sample().states, c.sample().states);
}

// The trainer keeps one sampler and reseeds it every step: its draws are a fresh sampler's.
TEST(SamplerTest, ReseedingDrawsWhatAFreshSamplerWithThatSeedDraws) {
  Transitions d = indexed_data({20, 30, 10});
  EpisodeIndex idx = split_episodes(d, "test");
  SamplerOptions o = raw_options(16, 5, 1);
  o.top_fraction = 0.6;
  TrajectorySampler kept(d, idx, o);
  kept.sample();  // draws before the reseed must not matter
  for (uint64_t seed : {7u, 8u, 7u}) {
    kept.reseed(seed);
    o.seed = seed;
    const SequenceBatch got = kept.sample(), want = TrajectorySampler(d, idx, o).sample();
    EXPECT_EQ(got.states, want.states) << "seed " << seed;
    EXPECT_EQ(got.timesteps, want.timesteps) << "seed " << seed;
  }
}

TEST(SamplerTest, EpisodesProportionalToLengthStartsUniform) {
  Transitions d = indexed_data({10, 30});
  EpisodeIndex idx = split_episodes(d, "test");
  TrajectorySampler sampler(d, idx, raw_options(1000, 1, 3));
  std::vector<int> counts(42, 0);  // 40 episode steps + a 2-step tail never sampled
  for (int r = 0; r < 40; ++r) {
    SequenceBatch batch = sampler.sample();
    for (int b = 0; b < 1000; ++b) counts[static_cast<int>(batch.states[b * 3])]++;
  }
  int first = 0;
  for (int t = 0; t < 10; ++t) first += counts[t];
  EXPECT_NEAR(first / 40000.0, 0.25, 0.015);
  for (int t = 0; t < 40; ++t) EXPECT_NEAR(counts[t], 1000, 150) << "step " << t;
  EXPECT_EQ(counts[40] + counts[41], 0);
}

TEST(SamplerTest, TopFractionKeepsBestEpisodesByStepBudget) {
  Transitions d = testing::make_data(3, 2, {10, 10, 10, 10});
  // Returns: episode 2 best, then 0, then 3, then 1.
  const float scale[4] = {2.0f, 0.5f, 3.0f, 1.0f};
  for (int e = 0; e < 4; ++e)
    for (int t = 0; t < 10; ++t) d.rewards[e * 10 + t] = scale[e];
  EpisodeIndex idx = split_episodes(d, "test");
  SamplerOptions o = raw_options(4, 3, 0);
  o.top_fraction = 0.5;
  TrajectorySampler half(d, idx, o);
  EXPECT_EQ(half.kept_episodes(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(half.kept_steps(), 20);
  o.top_fraction = 0.01;  // always at least the best episode
  EXPECT_EQ(TrajectorySampler(d, idx, o).kept_episodes(), (std::vector<int64_t>{2}));
  SequenceBatch batch = TrajectorySampler(d, idx, o).sample();
  for (int i = 0; i < 4 * 3; ++i) {
    if (batch.mask[i] == 0.0f) continue;
    float rtg = batch.returns_to_go[i];
    EXPECT_NEAR(std::fmod(rtg, 3.0f), 0.0f, 1e-4) << "rtg " << rtg << " is not from episode 2";
  }
}

TEST(SamplerTest, NormalizesStatesWhenAsked) {
  Transitions d = indexed_data({6, 6});
  EpisodeIndex idx = split_episodes(d, "test");
  SamplerOptions o = raw_options(8, 4, 1);
  o.normalize_states = true;
  SequenceBatch norm = TrajectorySampler(d, idx, o).sample();
  SequenceBatch raw = TrajectorySampler(d, idx, raw_options(8, 4, 1)).sample();
  for (size_t slot = 0; slot < norm.mask.size(); ++slot) {
    for (int i = 0; i < 3; ++i) {
      float expected = norm.mask[slot] == 0.0f
                           ? 0.0f
                           : (raw.states[slot * 3 + i] - idx.state_mean[i]) / idx.state_std[i];
      EXPECT_FLOAT_EQ(norm.states[slot * 3 + i], expected);
    }
  }
}

TEST(SamplerTest, RejectsBadOptions) {
  Transitions d = indexed_data({6});
  EpisodeIndex idx = split_episodes(d, "test");
  SamplerOptions o = raw_options(0, 4, 1);
  EXPECT_THROW(TrajectorySampler(d, idx, o), std::invalid_argument);
  o = raw_options(2, 4, 1);
  o.top_fraction = 0.0;
  EXPECT_THROW(TrajectorySampler(d, idx, o), std::invalid_argument);
}

TEST(SamplerTest, UniformBelowStaysInRange) {
  std::mt19937_64 rng(5);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 7000; ++i) counts[uniform_below(rng, 7)]++;
  for (int c : counts) EXPECT_NEAR(c, 1000, 150);
  std::mt19937_64 a(9), b(9);
  EXPECT_EQ(uniform_below(a, 1000003), uniform_below(b, 1000003));
}

}  // namespace
}  // namespace minrnn::data
