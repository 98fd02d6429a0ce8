// How far an evaluation has got, for a progress line: its rollout records each step
// (eval::RolloutOptions::on_step) on whatever thread runs it, and the thread that shows the line
// reads it (an evaluation inside `train` runs for minutes at 100 episodes; it must not look hung).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace minrnn::rl {

class EvaluationProgress {
 public:
  explicit EvaluationProgress(int episodes);
  // `steps` taken of the `most` there may be (eval::RolloutOptions::on_step), `ended` episodes
  // over.
  void record(int64_t steps, int64_t most, int ended);
  bool finished() const;  // every step taken, or every episode ended
  // "3000/10000 env steps, 2/10 episodes ended, 5400 env steps/s, ETA <= 2s": the ETA supposes
  // every episode runs to its limit, so it is an upper bound.
  std::string text() const;

 private:
  const int episodes_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<int64_t> steps_{0}, most_{0};
  std::atomic<int> ended_{0};
};

struct Agent;
// A run's evaluation of `agent` at `step` (rl::TrainOptions::evaluate), reporting to `progress`.
using Evaluate = std::function<void(int64_t step, Agent& agent, EvaluationProgress& progress)>;

}  // namespace minrnn::rl
