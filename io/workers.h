// The one thread pool: run task(i) for i in [0, n) on the caller and up to threads − 1 threads of
// its own, kept between batches, then rethrow the first exception. What uses it:
// - the packed policy's large matrix products (kernels/cpu/workers.h: the column strips of one
//   product, made the calling thread's for a step by a WorkersScope);
// - a VectorEnv's environments (envs/vector_env.h: fixed contiguous blocks, one a thread);
// - a rollout's shards (eval/rollout.cpp, and `bench eval`'s physics alike).
// Each keeps its results independent of the thread count: the split follows from the work alone.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace minrnn::io {

class Workers {
 public:
  // `threads` in all, the caller's among them: threads − 1 are started here (none for 1), at
  // most as many as the CPUs this process may use (io/cpus.h). std::system_error where the system
  // refuses a thread (none is left running).
  explicit Workers(int threads);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  int threads() const { return static_cast<int>(pool_.size()) + 1; }
  // Calls task(i) for every i in [0, count), spread over the threads (the caller's too), and
  // returns once all have returned; then rethrows the first exception a task threw. Task 0 runs
  // on the calling thread (a rollout's shard 0 renders its video with the caller's renderer); the
  // others go to whichever thread is free. Allocates nothing: the task is called through a
  // pointer to it (a policy step allocates nothing). One caller at a time: a Workers belongs to
  // the one engine, environment vector or rollout that made it.
  template <typename Task>
  void for_each(int64_t count, Task&& task) {
    using Callable = std::remove_reference_t<Task>;
    run_batch(
        count, [](void* t, int64_t i) { (*static_cast<Callable*>(t))(i); },
        const_cast<void*>(static_cast<const void*>(&task)));
  }

 private:
  using Call = void (*)(void* task, int64_t i);
  void run_batch(int64_t count, Call call, void* task);
  void stop();  // ends and joins the pool threads
  // Runs tasks of the current batch until none is left; `lock` holds mutex_.
  void take_tasks(std::unique_lock<std::mutex>& lock);
  // Runs task i with mutex_ released and counts it returned; `lock` holds mutex_.
  void run_task(std::unique_lock<std::mutex>& lock, Call call, void* task, int64_t i);
  void serve();  // a pool thread: waits for a batch, takes its tasks, waits again

  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  Call call_ = nullptr;  // the batch's task: call_(task_, i); valid while a batch runs
  void* task_ = nullptr;
  int64_t count_ = 0, next_ = 0, done_ = 0;  // tasks in the batch, taken, returned
  std::exception_ptr error_;                 // the first a task of the batch threw
  std::atomic<uint64_t> batch_{0};  // counts batches, changed under mutex_: a pool thread's cue
  bool stopping_ = false;
};

}  // namespace minrnn::io
