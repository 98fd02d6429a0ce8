// A Decision Transformer's window as tokens (ops/token_embedding.h): each of a window's K steps
// gives one token per group (return-to-go, state, action), token G·k + j of the sequence being
// group j's Linear of its step-k input plus the time table's row for step k's timestep. Shared by
// the CPU loops (kernels/cpu/token_embedding.cpp) and the CUDA kernels
// (kernels/cuda/token_embedding_programs.h), so both index and round alike.
#pragma once
#include <cstdint>

#include "kernels/math/shared_inline.h"

namespace minrnn::core {

constexpr int kMaxTokenGroups = 4;

struct TokenLayout {
  int64_t batch, steps;  // B windows of K steps: step n = b·K + k
  int64_t tokens;        // L ≤ G·K tokens a window (DT's training drops the last action's)
  int64_t width;         // D, the embedding's channels
  int64_t table_rows;    // the time table's rows; a timestep past them reads the last
  int groups;            // G ≤ kMaxTokenGroups
  int64_t inputs[kMaxTokenGroups];  // group j's input features a step
  // A pack's runs stacked (ops/run_axis.h): the B windows are `runs` runs' B / runs each, every
  // weight, bias and the time table one a run (their arrays the runs' one after the other).
  int64_t runs = 1;

  MINRNN_SHARED_INLINE int64_t step_count() const { return batch * steps; }
  // In 32 bits (a batch's windows fit): a 64-bit division is a called routine on the GPU, and
  // its call spills the registers of the loops around it.
  MINRNN_SHARED_INLINE int64_t run_batch() const {
    return static_cast<int32_t>(batch) / static_cast<int32_t>(runs);
  }
  MINRNN_SHARED_INLINE int64_t run_of_window(int64_t window) const {
    return runs > 1 ? static_cast<int32_t>(window) / static_cast<int32_t>(run_batch()) : 0;
  }
  // The (B·L)-row of step n's token of group j, or −1 where the window stops before it.
  MINRNN_SHARED_INLINE int64_t token_row(int64_t step, int group) const {
    const int64_t window = step / steps;
    return window_token_row(window, step - window * steps, group);
  }
  // The same for step k of window b.
  MINRNN_SHARED_INLINE int64_t window_token_row(int64_t window, int64_t k, int group) const {
    const int64_t l = k * groups + group;
    return l < tokens ? window * tokens + l : -1;
  }
  // How many of a window's first steps have a token of group j (all K but where L < G·K).
  MINRNN_SHARED_INLINE int64_t steps_with_token(int group) const {
    const int64_t k = (tokens - group + groups - 1) / groups;
    return k < steps ? k : steps;
  }
};

// Evaluation can run past the longest training episode: its rows clamp rather than index out.
MINRNN_SHARED_INLINE int64_t time_row(int64_t timestep, int64_t rows) {
  return timestep < 0 ? 0 : timestep >= rows ? rows - 1 : timestep;
}

// One channel of kTokens tokens at once: each bias + Σ_i x_i · w_i in ascending i, then + its
// time, each product and sum rounded on its own (the kernels are built without FMA contraction),
// so the CPU loops, which run the same order over a token's channels at once, and the GPU give the
// same bits. Each weight is read once for all kTokens; x(k, i) is token k's input i (0 where
// there is no token k), and sums[k] takes token k's channel.
template <int kTokens, typename Inputs, typename Weights>
MINRNN_SHARED_INLINE void token_channels(float bias, const Inputs& x, const Weights& w,
                                         int64_t first_w, int64_t n, const float (&time)[kTokens],
                                         float (&sums)[kTokens]) {
  for (int k = 0; k < kTokens; ++k) sums[k] = bias;
  for (int64_t i = 0; i < n; ++i) {
    const float weight = static_cast<float>(w[first_w + i]);
    for (int k = 0; k < kTokens; ++k) sums[k] = sums[k] + x(k, i) * weight;
  }
  for (int k = 0; k < kTokens; ++k) sums[k] = sums[k] + time[k];
}

}  // namespace minrnn::core
