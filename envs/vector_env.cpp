#include "envs/vector_env.h"

#include <algorithm>
#include <stdexcept>

#include "envs/registry.h"
#include "io/cpus.h"

namespace minrnn::envs {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) {
    throw std::invalid_argument("ThreadPool: num_threads must be >= 1, got " +
                                std::to_string(num_threads));
  }
  for (int w = 1; w < num_threads; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_block(int block) {
  const int blocks = num_threads();
  const int begin = static_cast<int>(static_cast<int64_t>(job_size_) * block / blocks);
  const int end = static_cast<int>(static_cast<int64_t>(job_size_) * (block + 1) / blocks);
  try {
    for (int i = begin; i < end; ++i) (*job_)(i);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_block(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::run(int n, const std::function<void(int)>& fn) {
  if (workers_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_size_ = n;
    pending_ = static_cast<int>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_block(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

namespace {
int default_threads(int num_envs, int requested) {
  if (requested > 0) return std::min(requested, num_envs);
  return std::max(1, std::min(num_envs, io::usable_cpu_count()));
}
}  // namespace

VectorEnv::VectorEnv(const std::string& name_or_d4rl_id, int num_envs, int64_t seed,
                     int num_threads)
    : pool_(num_envs >= 1 ? default_threads(num_envs, num_threads) : 1) {
  if (num_envs < 1) {
    throw std::invalid_argument("VectorEnv: num_envs must be >= 1, got " +
                                std::to_string(num_envs));
  }
  if (seed < 0) throw std::invalid_argument("VectorEnv: seed must be >= 0");
  for (int i = 0; i < num_envs; ++i) envs_.push_back(make_env(name_or_d4rl_id, seed + i));
}

std::vector<std::vector<double>> VectorEnv::reset(int64_t seed) {
  std::vector<std::vector<double>> obs(envs_.size());
  pool_.run(size(), [&](int i) { obs[i] = envs_[i]->reset(seed >= 0 ? seed + i : -1); });
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
  pool_.run(size(), [&](int i) {
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
