#include "envs/vector_env.h"

#include <algorithm>
#include <stdexcept>

#include "envs/registry.h"
#include "io/cpus.h"

namespace minrnn::envs {

namespace {
int default_threads(int num_envs, int requested) {
  if (requested > 0) return std::min(requested, num_envs);
  return std::max(1, std::min(num_envs, io::usable_cpu_count()));
}
}  // namespace

VectorEnv::VectorEnv(const std::string& name_or_d4rl_id, int num_envs, int64_t seed,
                     int num_threads)
    : workers_(num_envs >= 1 ? default_threads(num_envs, num_threads) : 1) {
  if (num_envs < 1) {
    throw std::invalid_argument("VectorEnv: num_envs must be >= 1, got " +
                                std::to_string(num_envs));
  }
  if (seed < 0) throw std::invalid_argument("VectorEnv: seed must be >= 0");
  for (int i = 0; i < num_envs; ++i) envs_.push_back(make_env(name_or_d4rl_id, seed + i));
}

std::vector<std::vector<double>> VectorEnv::reset(int64_t seed) {
  std::vector<std::vector<double>> obs(envs_.size());
  for_each_env([&](int i) { obs[i] = envs_[i]->reset(seed >= 0 ? seed + i : -1); });
  return obs;
}

VectorStepResult VectorEnv::step(const std::vector<std::vector<double>>& actions) {
  if (static_cast<int>(actions.size()) != size()) {
    throw std::invalid_argument("VectorEnv::step: got " + std::to_string(actions.size()) +
                                " actions for " + std::to_string(size()) + " environments");
  }
  for (int i = 0; i < size(); ++i) {
    try {
      check_action(spec(), actions[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("VectorEnv::step: env " + std::to_string(i) + ": " + e.what());
    }
  }
  VectorStepResult out;
  out.steps.resize(envs_.size());
  out.obs.resize(envs_.size());
  out.was_reset.assign(envs_.size(), 0);
  for_each_env([&](int i) {
    out.steps[i] = envs_[i]->step(actions[i]);
    if (out.steps[i].terminated || out.steps[i].truncated) {
      out.obs[i] = envs_[i]->reset();
      out.was_reset[i] = 1;
    } else {
      out.obs[i] = out.steps[i].obs;
    }
  });
  return out;
}

}  // namespace minrnn::envs
