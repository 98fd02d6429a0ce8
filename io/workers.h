// Threads that share one caller's large matrix products: one episode's window re-encoding (a few
// dozen rows times a 1 MB weight at embed 256) left every core but one idle, where a BLAS had
// split it. A product's column strips are independent (each element's sum is formed whole by one
// thread, kernels/cpu/float_loops.h), so splitting them changes no bit of the result.
//
// The products sit three calls under the layer code (a Dense inside a residual MLP inside a
// layer), which has no business knowing about threads: the engine that owns a Workers makes it the
// calling thread's for the length of a step (WorkersScope), and gemm_ab asks current_workers().
// Without a scope a product runs on the calling thread alone, as it always did.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace minrnn::core::cpu {

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
  // returns once all have returned; then rethrows the first exception a task threw. Allocates
  // nothing: the task is called through a pointer to it (a policy step allocates nothing). One
  // caller at a time: a Workers belongs to the one engine that made it.
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
  void stop();        // ends and joins the pool threads
  void take_tasks();  // runs tasks of the current batch until none is left
  void serve();       // a pool thread: waits for a batch, takes its tasks, waits again

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

// The Workers the calling thread's products split over; nullptr (alone) outside a WorkersScope.
Workers* current_workers();

// Makes `workers` (nullptr: none) the calling thread's for the scope's life, restoring the one
// before after.
class WorkersScope {
 public:
  explicit WorkersScope(Workers* workers);
  ~WorkersScope();
  WorkersScope(const WorkersScope&) = delete;
  WorkersScope& operator=(const WorkersScope&) = delete;

 private:
  Workers* previous_;
};

}  // namespace minrnn::core::cpu
