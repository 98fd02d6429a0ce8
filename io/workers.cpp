#include "io/workers.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "io/cpus.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MINRNN_SPIN_PAUSE() _mm_pause()
#else
#define MINRNN_SPIN_PAUSE() std::this_thread::yield()
#endif

namespace minrnn::io {
namespace {

// How long a pool thread polls for the next batch before it sleeps: longer than the element-wise
// work between one step's products and an env's physics step between two steps, so a step's
// products find the threads awake (a futex wake-up costs tens of microseconds, about a tenth of a
// product), and short enough that an idle policy sleeps.
constexpr auto kSpinFor = std::chrono::microseconds(300);

}  // namespace

Workers::Workers(int threads) {
  // More threads than this process may run at once only wait for each other.
  const int most = usable_cpu_count();
  try {
    for (int t = 1; t < std::min(threads, most); ++t) pool_.emplace_back([this] { serve(); });
  } catch (...) {  // the system refused a thread (EAGAIN): the ones started are stopped first
    stop();
    throw;
  }
}

Workers::~Workers() {
  stop();
}

void Workers::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : pool_) t.join();
  pool_.clear();
}

void Workers::run_batch(int64_t count, Call call, void* task) {
  if (pool_.empty() || count <= 1) {
    for (int64_t i = 0; i < count; ++i) call(task, i);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  call_ = call;
  task_ = task;
  count_ = count;
  next_ = 1;  // task 0 is the caller's
  done_ = 0;
  error_ = nullptr;
  batch_.fetch_add(1, std::memory_order_release);
  lock.unlock();
  // Those asleep: as many as there are tasks for besides the caller's (the spinning see batch_).
  if (count - 1 >= static_cast<int64_t>(pool_.size())) {
    wake_.notify_all();
  } else {
    for (int64_t w = 0; w < count - 1; ++w) wake_.notify_one();
  }
  lock.lock();
  run_task(lock, call, task, 0);
  take_tasks(lock);
  finished_.wait(lock, [&] { return done_ == count_; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void Workers::take_tasks(std::unique_lock<std::mutex>& lock) {
  while (next_ < count_) run_task(lock, call_, task_, next_++);
}

void Workers::run_task(std::unique_lock<std::mutex>& lock, Call call, void* task, int64_t i) {
  lock.unlock();
  std::exception_ptr thrown;
  try {
    call(task, i);
  } catch (...) {  // kept for the caller: the batch still waits for every task to return
    thrown = std::current_exception();
  }
  lock.lock();
  if (thrown && !error_) error_ = thrown;
  if (++done_ == count_) finished_.notify_one();
}

void Workers::serve() {
  uint64_t seen = 0;
  for (;;) {
    const auto until = std::chrono::steady_clock::now() + kSpinFor;
    for (int polls = 0; batch_.load(std::memory_order_acquire) == seen; ++polls) {
      MINRNN_SPIN_PAUSE();
      if (polls % 64 == 0 && std::chrono::steady_clock::now() > until) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stopping_ || batch_.load() != seen; });
    if (stopping_) return;
    seen = batch_.load();
    take_tasks(lock);
  }
}

}  // namespace minrnn::io
