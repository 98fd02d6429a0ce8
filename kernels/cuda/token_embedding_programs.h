// A window's token embedding (ops/token_embedding.h) as phase programs
// (kernels/cuda/phase_program.h): one launch forward and two backward
// (token_embedding_grad_programs.h), where LibTorch's ops take ~10 forward (a block-diagonal
// weight, concatenations, the product, the time lookup, the add) and ~18 backward (the
// embedding's backward alone sorts its indices: ~12 launches). Every sum runs in a fixed order, so
// a replay gives the same bits.
// - TokenEmbedding: a thread per channel of one group's tokens at 4 consecutive steps of a window
//   (token_channels' arithmetic), each warp's weights staged in shared memory first where its
//   lanes would read them n floats apart.
// A pack's runs stacked (TokenLayout::runs): each window reads its run's weights, biases and time
// table.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/math/divider.h"
#include "kernels/math/token_embedding_math.h"

namespace minrnn::core::grid {

// Each group's arrays: input (B·K, n_j), weight (D, n_j), bias (D) and their gradients.
template <typename Mem>
struct TokenGroupArrays {
  typename Mem::template In<float> input[kMaxTokenGroups], weight[kMaxTokenGroups],
      bias[kMaxTokenGroups];
};

template <typename Mem>
struct TokenEmbedding : TokenGroupArrays<Mem> {
  static constexpr int kThreads = 256;
  // A thread's tokens: one channel of one group's tokens at kSteps consecutive steps of a window,
  // their reads issued together and each weight read once for them all. A thread a token's channel
  // waited on its timestep's and table row's reads in turn with 64 warps an SM, ~58 such rounds
  // of a stacked pack of 32's 15.7 M channels: 129 µs (H200, 2026-11-28), where its bytes need ~20.
  static constexpr int kSteps = 4;
  // A warp's 32 channels of one group's tokens read their n weights each from shared memory,
  // staged by coalesced reads, where a width of whole warps keeps every warp in one group and the
  // group has at most this many inputs: read where they lie, lane d's weights are n floats from
  // lane d + 1's, so each of a warp's n loads touched n lines (121 for hopper's 11 state inputs).
  static constexpr int kMaxStagedInputs = 24;
  static constexpr int kPhases = 2;
  struct Regs : Exchange<float> {};
  struct Shared {
    typename Mem::template Array<float, kThreads * kMaxStagedInputs>
        weights;  // [warp][input][lane]
  };
  TokenLayout shape;
  typename Mem::template In<int64_t> timesteps;  // (B·K)
  typename Mem::template In<float> table;        // (rows, D)
  typename Mem::template Out<float> out;         // (B·L, D)
  // A thread's window, steps, group and channel by Dividers where the indices fit (prepared()),
  // else by 64-bit division. The weights staged where prepared() finds the width fits.
  bool divide_fast = false, stage_weights = false;
  Divider by_width, by_groups, by_quads, by_run_batch;
  // A window's steps kSteps at a time: the thread's steps 4q … 4q + 3 of quad q.
  MINRNN_HOST_DEVICE int64_t quads() const { return (shape.steps + kSteps - 1) / kSteps; }
  MINRNN_HOST_DEVICE int64_t threads() const {
    return shape.batch * quads() * shape.groups * shape.width;
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return (threads() + kThreads - 1) / kThreads; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // This pass with its dividers set (on the host, before a launch).
  TokenEmbedding prepared() const {
    TokenEmbedding k = *this;
    const int64_t count = threads();
    k.divide_fast = Divider::fits(count, shape.width) && Divider::fits(count, shape.groups) &&
                    Divider::fits(count, quads()) && Divider::fits(count, shape.run_batch());
    if (k.divide_fast) {
      k.by_width = Divider::of(shape.width), k.by_groups = Divider::of(shape.groups);
      k.by_quads = Divider::of(quads()), k.by_run_batch = Divider::of(shape.run_batch());
    }
    k.stage_weights = shape.width % kWarpSize == 0;
    return k;
  }
  // Thread t's place: its window b, quad q, group j, channel d and run.
  struct Place {
    int64_t b, q;
    int j;
    int64_t d, run;
  };
  MINRNN_HOST_DEVICE Place place_of(int64_t t) const {
    if (divide_fast) {
      const auto at = static_cast<uint32_t>(t);
      const uint32_t token = by_width.quotient(at), quad = by_groups.quotient(token);
      const uint32_t b = by_quads.quotient(quad);
      return {b, quad - b * static_cast<uint32_t>(quads()),
              static_cast<int>(token - quad * static_cast<uint32_t>(shape.groups)),
              at - token * static_cast<uint32_t>(shape.width),
              shape.runs > 1 ? by_run_batch.quotient(b) : 0};
    }
    const int64_t token = t / shape.width, quad = token / shape.groups, b = quad / quads();
    return {b, quad - b * quads(), static_cast<int>(token - quad * shape.groups),
            t - token * shape.width, shape.run_of_window(b)};
  }
  MINRNN_HOST_DEVICE bool staged(int j) const {
    return stage_weights && shape.inputs[j] <= kMaxStagedInputs;
  }
  // Phases: 0 each warp's channels' weights into shared memory (where staged); 1 the tokens.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int64_t t = th.block * kThreads + th.index;
    const int warp = th.index / kWarpSize, lane = th.index % kWarpSize;
    if (p == 0) {
      // The warp's 32 channels' weights lie together, (32, n) from its first channel's: read
      // 32 at a time, stored by input, [input][lane], for phase 1's lanes to read side by side.
      const int64_t first = t - lane;
      if (!stage_weights || first >= threads()) return;
      const Place at = place_of(first);
      if (!staged(at.j)) return;
      // (32-bit: a 64-bit division is a called routine on the GPU.)
      const int n = static_cast<int>(shape.inputs[at.j]);
      const int64_t from = (at.run * shape.width + at.d) * n;
      for (int f = lane; f < kWarpSize * n; f += kWarpSize) {
        const int channel = f / n, input = f - channel * n;
        sh.weights[(warp * kMaxStagedInputs + input) * kWarpSize + channel] =
            this->weight[at.j][from + f];
      }
      return;
    }
    if (t >= threads()) return;
    const Place at = place_of(t);
    if (staged(at.j)) {
      tokens(at, StagedWeights{sh, warp * kMaxStagedInputs * kWarpSize + lane}, 0);
    } else {
      tokens(at, this->weight[at.j], (at.run * shape.width + at.d) * shape.inputs[at.j]);
    }
  }
  // The thread's tokens (those its window has: step below K, token below L), by token_channels.
  template <typename Weights>
  MINRNN_HOST_DEVICE void tokens(const Place& at, const Weights& w, int64_t first_w) const {
    const int64_t D = shape.width, n = shape.inputs[at.j], first_k = at.q * kSteps;
    const auto x = this->input[at.j];
    bool has[kSteps];
    int64_t step[kSteps], stamp[kSteps];
    MINRNN_UNROLL for (int k = 0; k < kSteps; ++k) {
      const int64_t in_window = first_k + k;
      has[k] = in_window < shape.steps && in_window * shape.groups + at.j < shape.tokens;
      step[k] = at.b * shape.steps + in_window;
      stamp[k] = has[k] ? static_cast<int64_t>(timesteps[step[k]]) : 0;
    }
    float time[kSteps], sums[kSteps];
    MINRNN_UNROLL for (int k = 0; k < kSteps; ++k) {
      const int64_t row = at.run * shape.table_rows + time_row(stamp[k], shape.table_rows);
      time[k] = has[k] ? static_cast<float>(table[row * D + at.d]) : 0.0f;
    }
    token_channels<kSteps>(
        static_cast<float>(this->bias[at.j][at.run * D + at.d]),
        [&](int k, int64_t i) { return has[k] ? static_cast<float>(x[step[k] * n + i]) : 0.0f; }, w,
        first_w, n, time, sums);
    MINRNN_UNROLL for (int k = 0; k < kSteps; ++k) {
      const int64_t token = at.b * shape.tokens + (first_k + k) * shape.groups + at.j;
      if (has[k]) out[token * D + at.d] = sums[k];
    }
  }
  // A lane's weights as tokens() reads them: input i kWarpSize floats after input i − 1.
  struct StagedWeights {
    Shared& sh;
    int first;
    MINRNN_HOST_DEVICE float operator[](int64_t i) const {
      return static_cast<float>(sh.weights[first + static_cast<int>(i) * kWarpSize]);
    }
  };
};

}  // namespace minrnn::core::grid
