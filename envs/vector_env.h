// N copies of one environment stepped in parallel on a small persistent thread pool, with
// auto-reset. Env i is seeded seed + i; each env draws only from its own generator, so results
// do not depend on the number of threads.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "envs/env.h"

namespace minrnn::envs {

// Runs fn(i) for i in [0, n) on `num_threads` threads (the caller's included), split into fixed
// contiguous blocks. The first exception thrown by any fn is rethrown by run().
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  void run(int n, const std::function<void(int)>& fn);

 private:
  void worker_loop(int worker);
  void run_block(int block);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int job_size_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

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
  // num_threads <= 0: min(num_envs, hardware threads).
  VectorEnv(const std::string& name_or_d4rl_id, int num_envs, int64_t seed = 0,
            int num_threads = 0);

  int size() const { return static_cast<int>(envs_.size()); }
  const EnvSpec& spec() const { return envs_.front()->spec(); }
  Env& env(int i) { return *envs_.at(i); }
  int num_threads() const { return pool_.num_threads(); }

  // Resets every env; env i gets seed + i when seed >= 0, else continues its own generator.
  std::vector<std::vector<double>> reset(int64_t seed = -1);
  // One action per env, all validated before any env moves (a bad one throws
  // std::invalid_argument naming the env, and no state changes). Ended episodes auto-reset.
  VectorStepResult step(const std::vector<std::vector<double>>& actions);

 private:
  std::vector<std::unique_ptr<Env>> envs_;
  ThreadPool pool_;
};

}  // namespace minrnn::envs
