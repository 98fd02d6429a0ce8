// SAC's replay buffer. Append-only and unbounded (D4RL's buffer held 1M steps, as many as a full
// run), so its first n rows are exactly "the replay buffer up to step n" — what medium-replay is.
// Besides what SAC learns from it keeps D4RL's infos (qpos/qvel before the step, log-prob of the
// action), so a prefix converts straight into a D4RL dataset.
#pragma once
#include <cstdint>
#include <vector>

#include "datasets/d4rl.h"

namespace minrnn::rl {

struct ReplayBuffer {
  int obs_dim = 0, act_dim = 0, nq = 0, nv = 0;
  std::vector<float> obs, actions, rewards, next_obs;  // (N, obs_dim), (N, act_dim), (N), ...
  std::vector<uint8_t> terminals, timeouts;            // (N) as D4RL: exclusive
  std::vector<float> qpos, qvel, log_probs;            // (N, nq), (N, nv), (N)

  ReplayBuffer() = default;
  ReplayBuffer(int obs_dim_, int act_dim_, int nq_, int nv_)
      : obs_dim(obs_dim_), act_dim(act_dim_), nq(nq_), nv(nv_) {}

  int64_t size() const { return static_cast<int64_t>(rewards.size()); }
  void add(const std::vector<double>& o, const std::vector<double>& a, double r,
           const std::vector<double>& next, bool terminal, bool timeout,
           const std::vector<double>& qpos_before, const std::vector<double>& qvel_before,
           double log_prob);
  // Drops every row from `n` on (resume: the buffer must match the checkpointed step).
  void truncate(int64_t n);
  // The first `n` rows (all when n < 0) as a D4RL dataset with infos/qpos, infos/qvel,
  // infos/action_log_probs; metadata is left to the caller.
  data::Transitions to_d4rl(int64_t n = -1) const;
};

// `count` indices uniform in [0, size) from a splitmix64 stream: the same (seed, size, count) give
// the same indices on every platform and standard library.
std::vector<int64_t> sample_indices(uint64_t seed, int64_t size, int64_t count);

// a ++ b, field by field (medium-expert = medium ++ expert). Infos present in both are kept;
// metadata comes from `b`. When a ends mid-episode its last step becomes a timeout: the seam is a
// truncation, never one episode running from a into b. Throws std::invalid_argument when dimensions
// differ.
data::Transitions concat_d4rl(const data::Transitions& a, const data::Transitions& b);

}  // namespace minrnn::rl
