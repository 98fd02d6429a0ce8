// N copies of one environment stepped in parallel on a small persistent thread pool (io/workers.h,
// one fixed contiguous block of envs a thread), with auto-reset. Env i is seeded seed + i; each
// env draws only from its own generator, so results do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"
#include "io/workers.h"

namespace minrnn::envs {

struct VectorStepResult {
  // Per env, exactly what Env::step returned: for an env whose episode ended, steps[i].obs is the
  // final observation of that episode.
  std::vector<StepResult> steps;
  // Per env, the observation to act on next: steps[i].obs, or the first observation of the new
  // episode where the env was auto-reset.
  std::vector<std::vector<double>> obs;
  std::vector<uint8_t> was_reset;  // 1 where env i ended its episode and was auto-reset
};

class VectorEnv {
 public:
  // num_threads <= 0: min(num_envs, the CPUs this process may use); never more than those.
  VectorEnv(const std::string& name_or_d4rl_id, int num_envs, int64_t seed = 0,
            int num_threads = 0);

  int size() const { return static_cast<int>(envs_.size()); }
  const EnvSpec& spec() const { return envs_.front()->spec(); }
  Env& env(int i) { return *envs_.at(i); }
  int num_threads() const { return workers_.threads(); }

  // Resets every env; env i gets seed + i when seed >= 0, else continues its own generator.
  std::vector<std::vector<double>> reset(int64_t seed = -1);
  // One action per env, all validated before any env moves (a bad one throws
  // std::invalid_argument naming the env, and no state changes). Ended episodes auto-reset.
  VectorStepResult step(const std::vector<std::vector<double>>& actions);

 private:
  // fn(i) for every env i, in one contiguous block of envs a thread.
  template <typename Fn>
  void for_each_env(Fn&& fn) {
    const int64_t n = size(), blocks = workers_.threads();
    workers_.for_each(blocks, [&](int64_t b) {
      for (int64_t i = n * b / blocks; i < n * (b + 1) / blocks; ++i) fn(static_cast<int>(i));
    });
  }

  std::vector<std::unique_ptr<Env>> envs_;
  io::Workers workers_;
};

}  // namespace minrnn::envs
