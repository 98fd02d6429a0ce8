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
#include <vector>

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
  // Before start(): each call of these ops (e.g. "aten::copy_") is also counted by the op that
  // called it and its tensors' sizes and strides — which copies a step makes, and where.
  void watch(std::vector<std::string> ops);
  // Markdown: watched op, caller, tensors, calls per repetition (empty when nothing was watched).
  std::string watched_table(int64_t repetitions) const;
  bool watches(const std::string& op) const;
  void add_watched(const std::string& key);
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
  std::vector<std::string> watched_ops_;
  std::map<std::string, int64_t> watched_calls_;  // "op | caller | tensors" → calls
  uint64_t handle_ = 0;
  bool active_ = false;
};

}  // namespace minrnn::cli
