// Causal attention's probabilities (ops/attention_probs.h, kernels/math/attention_math.h) as
// phase programs: one launch forward and one backward, where LibTorch's ops took ~7 forward (the
// scale, the causal mask made and applied, the softmax, the dropout) and ~4 backward. A warp a row
// of at most kMaxWidth keys (RowGridOf<PerLane>: the launcher takes 2 keys a lane for rows of up
// to 64, DT's, 8 up to 256); every reduction in a fixed order, so a replay gives the same bits.
// - AttentionProbsForward: the row's largest logit and the sum of its exponentials, each halved
//   across barriers; the probabilities kept for the backward, and their dropout.
// - AttentionProbsBackward: the gradient through the dropout, the row's Σ g·probs halved, and the
//   scores' gradient.
// A pack's runs stacked (`runs`, kernels/math/run_rows.h): each run's rows dropped out with its
// own seed base, its elements counted from its first row.
// Rows sit `pitch` floats apart in every array (≥ width): a pitch a multiple of 4 keeps cuBLAS on
// its aligned kernels for the products around these passes, where DT's 59 keys a row made it
// take the unaligned ones (ops/causal_attention.cpp). A row's dropout counts its elements as
// `width` a row, whatever the pitch: the same bits either way.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/math/attention_math.h"
#include "kernels/math/run_rows.h"
#include "kernels/math/scan_math.h"

#include <math.h>

namespace minrnn::core::grid {

template <typename Mem, int PerLane = 8>
struct AttentionProbsForward : RowGridOf<PerLane> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane>);
  static constexpr int kPhases = 2 * kLevels + 3;
  struct Regs : Exchange<float> {
    float e[kPerLane];  // the logits, then their exponentials
    int64_t last_key;   // the last key the row's query sees (−1: no row)
  };
  struct Shared {
    typename Mem::template Array<float, kThreads> maxes, sums;
  };
  HashedDropout dropout;      // seed: an offset added to *seed_base when that is set
  const uint64_t* seed_base;  // a replayed graph's step, or null
  QueryRows queries;
  float scale;
  typename Mem::template In<float> scores;
  typename Mem::template Out<float> probs, out;
  RunRows runs;
  int64_t pitch;
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // Whether channel c of the lane is a key the row's query sees (the query's position is a 64-bit
  // modulo, dozens of instructions on the GPU: r.last_key holds it from phase 0 on).
  MINRNN_HOST_DEVICE bool visible(const Thread& th, const Regs& r, int c) const {
    const int64_t k = channel(th, c);
    return k >= 0 && k <= r.last_key;
  }
  // Phases: 0 the lane's logits and their largest; 1 … kLevels the row's largest; then the
  // exponentials and their sum; its halvings; the last the probabilities and their dropout.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs& r, Shared& sh) const {
    const int64_t row = this->row(th);
    if (p == 0) {
      r.last_key = row < rows ? queries.position(row) : -1;
      float largest = -INFINITY;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        r.e[c] = visible(th, r, c)
                     ? static_cast<float>(scores[row * pitch + channel(th, c)]) * scale
                     : -INFINITY;
        largest = r.e[c] > largest ? r.e[c] : largest;
      }
      sh.maxes[th.index] = largest;
    } else if (p <= kLevels) {
      halve_max(sh.maxes, th, p);
    } else if (p == kLevels + 1) {
      const float largest = row_total(sh.maxes, th);
      float sum = 0.0f;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        r.e[c] = visible(th, r, c) ? scan_math::exp_of(r.e[c] - largest) : 0.0f;
        sum = sum + r.e[c];
      }
      sh.sums[th.index] = sum;
    } else if (p <= 2 * kLevels + 1) {
      halve(sh.sums, th, p - kLevels - 1);
    } else if (row < rows) {
      const int64_t run = runs.run(row);
      const DropoutDraws d = runs.dropout_of(dropout, seed_base, run).draws();
      const float total = row_total(sh.sums, th);
      const int64_t local = runs.local(row, run) * width;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int64_t k = channel(th, c), i = row * pitch + k;
        if (k < 0) continue;
        const float prob = r.e[c] / total;
        probs[i] = prob;
        out[i] = d.dropped(prob, local + k);
      }
    }
  }
};

template <typename Mem, int PerLane = 8>
struct AttentionProbsBackward : RowGridOf<PerLane> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane>);
  static constexpr int kPhases = kLevels + 2;
  struct Regs : Exchange<float> {
    float g[kPerLane], prob[kPerLane];
  };
  struct Shared {
    typename Mem::template Array<float, kThreads> dots;
  };
  HashedDropout dropout;
  const uint64_t* seed_base;
  float scale;
  typename Mem::template In<float> probs, out_grad;
  typename Mem::template Out<float> scores_grad;
  RunRows runs;
  int64_t pitch;
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // Phases: 0 the gradient through the dropout and the lane's Σ g·probs; 1 … kLevels the row's;
  // the last the scores' gradient.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs& r, Shared& sh) const {
    const int64_t row = this->row(th);
    if (p == 0) {
      const bool real = row < rows;
      const int64_t run = real ? runs.run(row) : 0;
      const DropoutDraws d = runs.dropout_of(dropout, seed_base, run).draws();
      const int64_t local = real ? runs.local(row, run) * width : 0;
      // Every read first, predicated: the dropout's hash between two reads would make the
      // second wait on the first.
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int64_t k = channel(th, c), i = row * pitch + k;
        const bool here = real && k >= 0;
        r.prob[c] = here ? static_cast<float>(probs[i]) : 0.0f;
        r.g[c] = here ? static_cast<float>(out_grad[i]) : 0.0f;
      }
      float dot = 0.0f;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int64_t k = channel(th, c);
        if (k >= 0) r.g[c] = d.y_grad(r.g[c], local + k);  // (0 stays 0 past the rows)
        dot = dot + r.g[c] * r.prob[c];
      }
      sh.dots[th.index] = dot;
    } else if (p <= kLevels) {
      halve(sh.dots, th, p);
    } else if (row < rows) {
      const float dot = row_total(sh.dots, th);
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int64_t k = channel(th, c);
        if (k >= 0)
          scores_grad[row * pitch + k] = softmax_score_grad(r.prob[c], r.g[c], dot, scale);
      }
    }
  }
};

}  // namespace minrnn::core::grid
