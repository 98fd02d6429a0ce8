#include "collect/replay_buffer.h"

#include <stdexcept>
#include <string>

namespace minrnn::rl {

void ReplayBuffer::add(const std::vector<double>& o, const std::vector<double>& a, double r,
                       const std::vector<double>& next, bool terminal, bool timeout,
                       const std::vector<double>& qpos_before,
                       const std::vector<double>& qvel_before, double log_prob) {
  if (static_cast<int>(o.size()) != obs_dim || static_cast<int>(next.size()) != obs_dim ||
      static_cast<int>(a.size()) != act_dim || static_cast<int>(qpos_before.size()) != nq ||
      static_cast<int>(qvel_before.size()) != nv) {
    throw std::invalid_argument("ReplayBuffer::add: sizes differ from the buffer's dimensions");
  }
  obs.insert(obs.end(), o.begin(), o.end());
  for (double x : a) actions.push_back(static_cast<float>(x));
  rewards.push_back(static_cast<float>(r));
  next_obs.insert(next_obs.end(), next.begin(), next.end());
  terminals.push_back(terminal ? 1 : 0);
  timeouts.push_back(timeout && !terminal ? 1 : 0);
  qpos.insert(qpos.end(), qpos_before.begin(), qpos_before.end());
  qvel.insert(qvel.end(), qvel_before.begin(), qvel_before.end());
  log_probs.push_back(static_cast<float>(log_prob));
}

void ReplayBuffer::truncate(int64_t n) {
  if (n < 0 || n > size()) throw std::out_of_range("ReplayBuffer::truncate: bad size");
  obs.resize(n * obs_dim);
  actions.resize(n * act_dim);
  rewards.resize(n);
  next_obs.resize(n * obs_dim);
  terminals.resize(n);
  timeouts.resize(n);
  qpos.resize(n * nq);
  qvel.resize(n * nv);
  log_probs.resize(n);
}

data::Transitions ReplayBuffer::to_d4rl(int64_t n) const {
  if (n < 0 || n > size()) n = size();
  data::Transitions d;
  d.obs_dim = obs_dim;
  d.act_dim = act_dim;
  d.observations.assign(obs.begin(), obs.begin() + n * obs_dim);
  d.next_observations.assign(next_obs.begin(), next_obs.begin() + n * obs_dim);
  d.actions.assign(actions.begin(), actions.begin() + n * act_dim);
  d.rewards.assign(rewards.begin(), rewards.begin() + n);
  d.terminals.assign(terminals.begin(), terminals.begin() + n);
  d.timeouts.assign(timeouts.begin(), timeouts.begin() + n);
  d.infos["qpos"] = {{n, nq}, {qpos.begin(), qpos.begin() + n * nq}};
  d.infos["qvel"] = {{n, nv}, {qvel.begin(), qvel.begin() + n * nv}};
  d.infos["action_log_probs"] = {{n}, {log_probs.begin(), log_probs.begin() + n}};
  return d;
}

std::vector<int64_t> sample_indices(uint64_t seed, int64_t size, int64_t count) {
  if (size <= 0) throw std::invalid_argument("sample_indices: the buffer is empty");
  std::vector<int64_t> out(count);
  uint64_t state = seed;
  for (int64_t& i : out) {
    // splitmix64; the modulo bias is below 2^-40 for any buffer we hold.
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    i = static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(size));
  }
  return out;
}

data::Transitions concat_d4rl(const data::Transitions& a, const data::Transitions& b) {
  if (a.obs_dim != b.obs_dim || a.act_dim != b.act_dim) {
    throw std::invalid_argument("concat_d4rl: datasets of different dimensions");
  }
  data::Transitions d = a;
  // a's unfinished last episode was cut, not ended, where b begins: mark that step a timeout (as
  // D4RL marks every truncation) so no reader splices a's tail onto b's first episode.
  if (!d.timeouts.empty() && !d.terminals.back() && !d.timeouts.back()) d.timeouts.back() = 1;
  auto append = [](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
  append(d.observations, b.observations);
  if (a.next_observations.empty() || b.next_observations.empty()) {
    d.next_observations.clear();
  } else {
    append(d.next_observations, b.next_observations);
  }
  append(d.actions, b.actions);
  append(d.rewards, b.rewards);
  append(d.terminals, b.terminals);
  append(d.timeouts, b.timeouts);
  d.infos.clear();
  for (const auto& [key, fa] : a.infos) {
    auto it = b.infos.find(key);
    if (it == b.infos.end() || fa.shape.size() != it->second.shape.size()) continue;
    data::FloatArray merged = fa;
    merged.shape[0] += it->second.shape[0];
    append(merged.values, it->second.values);
    d.infos[key] = std::move(merged);
  }
  d.metadata = b.metadata;
  return d;
}

}  // namespace minrnn::rl
