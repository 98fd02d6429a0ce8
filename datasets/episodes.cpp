#include "datasets/episodes.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace minrnn::data {

namespace {

// The episodes a terminal or timeout ends, with their returns and each step's return-to-go; the
// unfinished tail after the last is dropped and counted. A return-to-go past float's range (finite
// rewards of 3e38) is refused naming its row: training would stop later on a non-finite loss.
void find_episodes(const Transitions& data, const std::string& what, EpisodeIndex& index) {
  const int64_t n = data.num_steps();
  EpisodeStats& stats = index.stats;
  index.returns_to_go.assign(n, 0.0f);
  int64_t begin = 0;
  for (int64_t t = 0; t < n; ++t) {
    stats.num_terminals += data.terminals[t];
    stats.num_timeouts += data.timeouts[t];
    stats.both_flags += data.terminals[t] && data.timeouts[t];
    if (!data.terminals[t] && !data.timeouts[t]) continue;
    Episode episode;
    episode.begin = begin;
    episode.end = t + 1;
    episode.ended_by_terminal = data.terminals[t] != 0;
    // Returns-to-go backwards, accumulated in double so a 1000-step sum keeps float precision.
    double to_go = 0.0;
    for (int64_t s = t; s >= begin; --s) {
      to_go += data.rewards[s];
      index.returns_to_go[s] = static_cast<float>(to_go);
      if (!std::isfinite(index.returns_to_go[s])) {
        throw std::invalid_argument(what + ": the return-to-go at row " + std::to_string(s) +
                                    " is " + std::to_string(to_go) +
                                    ", past a float's range: rewards too large to train on");
      }
    }
    episode.episode_return = to_go;
    index.episodes.push_back(episode);
    begin = t + 1;
  }
  stats.dropped_tail_steps = n - begin;
  stats.num_episodes = static_cast<int64_t>(index.episodes.size());
}

// The episodes' returns and lengths: least, mean (with the returns' population std), most.
void summarize_episodes(EpisodeIndex& index) {
  EpisodeStats& stats = index.stats;
  double return_sum = 0.0, return_sq = 0.0;
  int64_t steps = 0;
  stats.min_return = stats.max_return = index.episodes[0].episode_return;
  stats.min_length = stats.max_length = index.episodes[0].length();
  for (const Episode& e : index.episodes) {
    steps += e.length();
    return_sum += e.episode_return;
    return_sq += e.episode_return * e.episode_return;
    stats.min_return = std::min(stats.min_return, e.episode_return);
    stats.max_return = std::max(stats.max_return, e.episode_return);
    stats.min_length = std::min(stats.min_length, e.length());
    stats.max_length = std::max(stats.max_length, e.length());
  }
  const double num = static_cast<double>(stats.num_episodes);
  stats.mean_return = return_sum / num;
  stats.std_return =
      std::sqrt(std::max(0.0, return_sq / num - stats.mean_return * stats.mean_return));
  stats.mean_length = static_cast<double>(steps) / num;
}

// The states' mean and std over the complete episodes' steps (summed in double for a stable
// variance over 2M rows; the std kept off zero).
void state_moments(const Transitions& data, EpisodeIndex& index) {
  const int obs_dim = data.obs_dim;
  std::vector<double> sum(obs_dim, 0.0), sum_sq(obs_dim, 0.0);
  int64_t steps = 0;
  for (const Episode& e : index.episodes) {
    for (int64_t t = e.begin; t < e.end; ++t) {
      const float* row = data.observations.data() + t * obs_dim;
      for (int j = 0; j < obs_dim; ++j) {
        sum[j] += row[j];
        sum_sq[j] += static_cast<double>(row[j]) * row[j];
      }
    }
    steps += e.length();
  }
  index.state_mean.resize(obs_dim);
  index.state_std.resize(obs_dim);
  for (int j = 0; j < obs_dim; ++j) {
    double mean = sum[j] / steps;
    double var = std::max(0.0, sum_sq[j] / steps - mean * mean);
    index.state_mean[j] = static_cast<float>(mean);
    index.state_std[j] = static_cast<float>(std::sqrt(var) + 1e-6);
  }
}

}  // namespace

EpisodeIndex split_episodes(const Transitions& data, const std::string& what) {
  EpisodeIndex index;
  find_episodes(data, what, index);
  if (index.episodes.empty()) {
    throw std::invalid_argument(what +
                                ": no complete episode (no step has terminals or timeouts set; " +
                                std::to_string(data.num_steps()) + " steps)");
  }
  summarize_episodes(index);
  state_moments(data, index);
  return index;
}

}  // namespace minrnn::data
