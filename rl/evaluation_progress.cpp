#include "rl/evaluation_progress.h"

#include "io/progress_line.h"

#include <algorithm>
#include <cstdio>

namespace minrnn::rl {

EvaluationProgress::EvaluationProgress(int episodes) : episodes_(episodes) {}

void EvaluationProgress::record(int64_t steps, int64_t most, int ended) {
  most_.store(most, std::memory_order_relaxed);
  ended_.store(ended, std::memory_order_relaxed);
  steps_.store(steps, std::memory_order_relaxed);
}

bool EvaluationProgress::finished() const {
  const int64_t most = most_.load(std::memory_order_relaxed);
  return (most > 0 && steps_.load(std::memory_order_relaxed) >= most) ||
         ended_.load(std::memory_order_relaxed) >= episodes_;
}

std::string EvaluationProgress::text() const {
  const int64_t steps = steps_.load(std::memory_order_relaxed);
  const int64_t most = most_.load(std::memory_order_relaxed);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = steps / std::max(elapsed, 1e-9);
  char eta[48] = "done";
  if (!finished()) {
    if (steps > 0)
      std::snprintf(eta, sizeof eta, "ETA <= %s",
                    io::duration_text(io::eta_seconds(steps, most, rate)).c_str());
    else
      std::snprintf(eta, sizeof eta, "starting");
  }
  char text[160];
  std::snprintf(text, sizeof text,
                "%lld/%lld env steps, %d/%d episodes ended, %.0f env steps/s, %s",
                static_cast<long long>(steps), static_cast<long long>(most),
                ended_.load(std::memory_order_relaxed), episodes_, rate, eta);
  return text;
}

}  // namespace minrnn::rl
