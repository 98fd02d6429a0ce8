// Where the milliseconds of a piece of work go, by ATen op: `minrnn bench train --profile`.
//
//   OpProfile profile;
//   profile.start();      // every op dispatched from now on is timed (all threads)
//   work();
//   profile.stop();
//   profile.table(n, 10); // the 10 ops with the most self time, per repetition of work()
//
// Built on RecordFunction callbacks (the hooks LibTorch's own profiler uses). An op's self time is
// its wall time minus the time of the ops it called, so the rows add up to the time spent inside
// ATen; autograd's backward nodes ("autograd::engine::evaluate_function: …") keep the engine's
// own bookkeeping as their self time.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace minrnn::cli {

class OpProfile {
 public:
  OpProfile() = default;
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;
  ~OpProfile();

  void start();
  void stop();
  // Markdown table: op, calls and self ms per repetition, share of the total; the ops after the
  // first `top` summed into one row.
  std::string table(int64_t repetitions, int top) const;
  double total_ms() const;  // self time of every op, summed

  // Called by the callbacks; public only so they can reach it.
  void add(const std::string& name, double self_ms);

 private:
  struct Stat {
    int64_t calls = 0;
    double self_ms = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Stat> stats_;
  uint64_t handle_ = 0;
  bool active_ = false;
};

}  // namespace minrnn::cli
