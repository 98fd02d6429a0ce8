// Work split across torch's threads by a shared counter: each thread takes the next task when it
// finishes one, instead of a fixed share handed out up front (at::parallel_for's static split).
//
// Why: on a VM, two vCPUs run the same work 5–18% apart from one call to the next (neighbours on
// the host; measured on the 2-vCPU development machine, docs/benchmarks.md, eighth sitting), and
// a static split makes the faster thread wait at the closing barrier for the slower. With tasks
// taken as they come, the faster thread takes more of them. What a task computes does not depend
// on which thread runs it, so results are the same bits under any schedule and thread count.
#pragma once
#include <ATen/Parallel.h>

#include "io/env_switch.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace minrnn::core {

// MINRNN_STATIC_SPLIT=1 hands the tasks out in fixed shares instead (at::parallel_for), for
// measuring one against the other in one binary.
inline bool static_split_requested() {
  static const bool requested = [] {
    return io::env_switch("MINRNN_STATIC_SPLIT", false, "0", "1",
                          "1 (tasks in fixed shares) or 0 (handed out as threads free up)");
  }();
  return requested;
}

// Calls task(i) once for every i in [0, n). Inside another parallel region (or on one thread) the
// tasks run in order on the calling thread.
template <typename F>
void parallel_tasks(int64_t n, F&& task) {
  if (static_split_requested()) {
    at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) task(i);
    });
    return;
  }
  const int64_t threads = std::min<int64_t>(at::get_num_threads(), n);
  if (threads <= 1 || at::in_parallel_region()) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<int64_t> next{0};
  at::parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      task(i);
    }
  });
}

// Calls body(begin, end) for consecutive ranges of [0, n), per_task long (the last one shorter),
// each range one task of parallel_tasks.
template <typename F>
void parallel_ranges(int64_t n, int64_t per_task, F&& body) {
  parallel_tasks((n + per_task - 1) / per_task, [&](int64_t t) {
    const int64_t begin = t * per_task;
    body(begin, std::min(n, begin + per_task));
  });
}

}  // namespace minrnn::core
