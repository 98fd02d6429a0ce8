// Decision-Transformer-style sampling of K-step windows for sequence training.
//
// Each window starts at a uniformly random step of the kept episodes: its episode is thereby chosen
// with probability proportional to its length and the start is uniform in [0, len - 1], as in DT.
// A window that runs past its episode's end is shorter than K and is RIGHT-padded: real steps sit
// in the first `n` slots, in order, padding in the last K - n. Padding slots hold 0 in every field
// and mask 0; real slots have mask 1. Padding goes after the real steps because every backbone is
// causal: no real step's output can depend on a later token, so the model sees exactly what an
// unpadded n-step window would show it (left padding put 3(K - n) bias tokens before the real
// ones, which the recurrence and attention absorbed and evaluation never showed). Deterministic
// given the seed (std::mt19937_64 with our own integer transform, so results do not depend on the
// standard library).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"

namespace minrnn::data {

struct SamplerOptions {
  int batch_size = 64;
  int context_len = 20;  // K
  // Subtract state_mean and divide by state_std (EpisodeIndex's) before returning states.
  bool normalize_states = true;
  // %BC: keep the highest-return episodes until they cover this fraction of the steps (DT's rule:
  // the best episode always, then the next best while the total stays within the budget).
  double top_fraction = 1.0;
  uint64_t seed = 0;
};

// Contiguous row-major arrays ready to wrap as tensors.
struct SequenceBatch {
  int batch_size = 0;
  int context_len = 0;
  int obs_dim = 0;
  int act_dim = 0;
  std::vector<float> states;         // (B, K, obs_dim), normalized when asked
  std::vector<float> actions;        // (B, K, act_dim)
  std::vector<float> returns_to_go;  // (B, K, 1) raw, undiscounted: the trainer scales them
  std::vector<int64_t> timesteps;    // (B, K) step index within the episode
  std::vector<float> mask;           // (B, K) 1 for real steps, 0 for (right) padding
};

// Samples from `data` and its `index`, which must outlive the sampler (nothing is copied).
class TrajectorySampler {
 public:
  TrajectorySampler(const Transitions& data, const EpisodeIndex& index,
                    const SamplerOptions& options);

  // Fills `batch`, reusing its buffers.
  void sample(SequenceBatch& batch);
  // Restarts the draws as a sampler made with this seed would make them (the kept episodes are
  // the same): the trainer's per-step seeding without sorting the episodes every step.
  void reseed(uint64_t seed) { rng_.seed(seed); }
  SequenceBatch sample();

  // Indices into index.episodes that the sampler draws from (all, or the top_fraction best).
  const std::vector<int64_t>& kept_episodes() const { return kept_episodes_; }
  int64_t kept_steps() const { return cumulative_steps_.empty() ? 0 : cumulative_steps_.back(); }

 private:
  const Transitions& data_;
  const EpisodeIndex& index_;
  SamplerOptions options_;
  std::vector<int64_t> kept_episodes_;
  std::vector<int64_t> cumulative_steps_;  // cumulative_steps_[i]: steps in kept episodes 0..i
  std::mt19937_64 rng_;
};

// Uniform integer in [0, n) by rejection (unbiased, identical on every platform). n > 0.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n);

}  // namespace minrnn::data
