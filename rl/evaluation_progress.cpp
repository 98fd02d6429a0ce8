#include "rl/evaluation_progress.h"

#include <algorithm>
#include <cstdio>

namespace minrnn::rl {

EvaluationProgress::EvaluationProgress(int episodes) : episodes_(episodes) {}

void EvaluationProgress::record(int step, int max_steps, int ended) {
  max_steps_.store(max_steps, std::memory_order_relaxed);
  ended_.store(ended, std::memory_order_relaxed);
  step_.store(step, std::memory_order_relaxed);
}

bool EvaluationProgress::finished() const {
  const int max_steps = max_steps_.load(std::memory_order_relaxed);
  return (max_steps > 0 && step_.load(std::memory_order_relaxed) >= max_steps) ||
         ended_.load(std::memory_order_relaxed) >= episodes_;
}

std::string EvaluationProgress::text() const {
  const int step = step_.load(std::memory_order_relaxed);
  const int max_steps = max_steps_.load(std::memory_order_relaxed);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = step / std::max(elapsed, 1e-9);
  char eta[48] = "done";
  if (!finished()) {
    if (step > 0)
      std::snprintf(eta, sizeof eta, "ETA <= %.0f s", (max_steps - step) / std::max(rate, 1e-9));
    else
      std::snprintf(eta, sizeof eta, "starting");
  }
  char text[160];
  std::snprintf(text, sizeof text, "%d/%d steps, %d/%d episodes ended, %.0f steps/s, %s", step,
                max_steps, ended_.load(std::memory_order_relaxed), episodes_, rate, eta);
  return text;
}

}  // namespace minrnn::rl
