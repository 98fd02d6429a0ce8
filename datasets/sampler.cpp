#include "datasets/sampler.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace minrnn::data {

uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  // Reject the lowest 2^64 mod n values so every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

TrajectorySampler::TrajectorySampler(const Transitions& data, const EpisodeIndex& index,
                                     const SamplerOptions& options)
    : data_(data), index_(index), options_(options), rng_(options.seed) {
  if (options.batch_size <= 0 || options.context_len <= 0) {
    throw std::invalid_argument("sampler: batch_size and context_len must be positive (got " +
                                std::to_string(options.batch_size) + ", " +
                                std::to_string(options.context_len) + ")");
  }
  if (!(options.top_fraction > 0.0 && options.top_fraction <= 1.0)) {
    throw std::invalid_argument("sampler: top_fraction must be in (0, 1], got " +
                                std::to_string(options.top_fraction));
  }
  const auto& episodes = index.episodes;
  if (episodes.empty()) throw std::invalid_argument("sampler: the dataset has no episodes");
  if (options.normalize_states && static_cast<int>(index.state_std.size()) != data.obs_dim) {
    throw std::invalid_argument("sampler: normalize_states needs state_mean/state_std of obs_dim");
  }

  // Best returns first; ties keep file order so the selection is deterministic.
  std::vector<int64_t> order(episodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return episodes[a].episode_return > episodes[b].episode_return;
  });
  int64_t total = 0;
  for (const Episode& e : episodes) total += e.length();
  const int64_t budget = std::max<int64_t>(static_cast<int64_t>(options.top_fraction * total), 1);
  int64_t kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t len = episodes[order[i]].length();
    if (i > 0 && kept + len > budget) break;
    kept_episodes_.push_back(order[i]);
    kept += len;
  }
  // Sample in file order: the order of the kept list must not depend on the sort above when all
  // episodes are kept.
  std::sort(kept_episodes_.begin(), kept_episodes_.end());
  int64_t running = 0;
  for (int64_t e : kept_episodes_) {
    running += episodes[e].length();
    cumulative_steps_.push_back(running);
  }
}

void TrajectorySampler::sample(SequenceBatch& batch) {
  const int B = options_.batch_size, K = options_.context_len;
  const int obs_dim = data_.obs_dim, act_dim = data_.act_dim;
  batch.batch_size = B;
  batch.context_len = K;
  batch.obs_dim = obs_dim;
  batch.act_dim = act_dim;
  batch.states.assign(static_cast<size_t>(B) * K * obs_dim, 0.0f);
  batch.actions.assign(static_cast<size_t>(B) * K * act_dim, 0.0f);
  batch.returns_to_go.assign(static_cast<size_t>(B) * K, 0.0f);
  batch.timesteps.assign(static_cast<size_t>(B) * K, 0);
  batch.mask.assign(static_cast<size_t>(B) * K, 0.0f);

  for (int b = 0; b < B; ++b) {
    // A uniform step of the kept data: its episode is length-proportional, its offset uniform.
    const int64_t u = static_cast<int64_t>(uniform_below(rng_, kept_steps()));
    const size_t k = std::upper_bound(cumulative_steps_.begin(), cumulative_steps_.end(), u) -
                     cumulative_steps_.begin();
    const Episode& episode = index_.episodes[kept_episodes_[k]];
    const int64_t offset = u - (cumulative_steps_[k] - episode.length());
    const int64_t start = episode.begin + offset;
    const int n = static_cast<int>(std::min<int64_t>(K, episode.end - start));
    for (int j = 0; j < n; ++j) {
      const int64_t t = start + j;
      const size_t slot = static_cast<size_t>(b) * K + j;
      const float* obs = data_.observations.data() + t * obs_dim;
      float* dst = batch.states.data() + slot * obs_dim;
      for (int i = 0; i < obs_dim; ++i) {
        dst[i] = options_.normalize_states ? (obs[i] - index_.state_mean[i]) / index_.state_std[i]
                                           : obs[i];
      }
      std::copy_n(data_.actions.data() + t * act_dim, act_dim,
                  batch.actions.data() + slot * act_dim);
      batch.returns_to_go[slot] = index_.returns_to_go[t];
      batch.timesteps[slot] = offset + j;
      batch.mask[slot] = 1.0f;
    }
  }
}

SequenceBatch TrajectorySampler::sample() {
  SequenceBatch batch;
  sample(batch);
  return batch;
}

}  // namespace minrnn::data
