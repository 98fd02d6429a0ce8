// A Linear to a few outputs and its tanh (ops/tanh_head.h: DT's action head) as phase programs
// (kernels/cuda/phase_program.h): one launch forward and one backward before the column sums of
// its parameters' partial rows, where cuBLAS took a product forward and two backward on rows a
// few floats wide (its unaligned kernels: ~41 µs of an H200's step, 2026-11-27 20:33), LibTorch a
// launch for the tanh each way, and the bias its column sums. A warp a row (RowGridOf: the launcher
// takes 4 channels a lane where rows are at most 128 wide, and the full form where they are
// exactly 128 or 256, as the joins do); every sum in a fixed order, so a replay gives the same
// bits, in every form.
// - TanhHeadForward: each lane's channels' products with every output's weights, the row's sums
//   halved across barriers, y = tanh(sum + bias).
// - TanhHeadBackward: g = dy · (1 − y²); the input gradient Σₐ gₐ wₐ; each block's partial row of
//   the weight gradient (gₐ x, its warps' rows summed) and the bias gradient (gₐ), for ColumnSums.
// A pack's runs stacked (`runs`, kernels/math/run_rows.h): each row reads its run's weights and
// bias; a backward block's rows are one run's (the host sees to it), so its partial row is that
// run's.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/math/run_rows.h"

#include <math.h>

namespace minrnn::core::grid {

// Outputs a row, and outputs × width: a backward warp's terms, which its block keeps in shared
// memory for every warp (8 × 1 024 floats, 32 KB of the 48 a block's static arrays may take):
// halfcheetah's and walker2d's 6 actions at DT's 128 channels, 4 at the widest rows.
constexpr int kMaxHeadOutputs = 8;
constexpr int kMaxHeadTerms = 4 * RowGrid::kMaxWidth;

MINRNN_HOST_DEVICE float tanh_of(float v) {
  return ::tanhf(v);
}

template <typename Mem, int PerLane = 8, bool FullRows = false>
struct TanhHeadForward : RowGridOf<PerLane, FullRows> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane, FullRows>);
  static constexpr int kPhases = kLevels + 2;
  struct Regs : Exchange<float> {};
  struct Shared {
    typename Mem::template Array<float, kMaxHeadOutputs * kThreads> dots;  // [output][thread]
  };
  int64_t outputs;
  typename Mem::template In<float> x, weight, bias;  // (rows, width), (runs, outputs, width),
  typename Mem::template Out<float> y;               // (runs, outputs); (rows, outputs)
  RunRows runs;
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // Phases: 0 the lane's products; 1 … kLevels the row's sums; the last the outputs.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int64_t row = this->row(th);
    const bool real = row < rows;
    const int64_t run = real ? runs.run(row) : 0;
    if (p == 0) {
      float dot[kMaxHeadOutputs] = {};
      const int w = row_width();
      const auto x_row = advanced(x, real ? row * width : 0);
      const auto weights = advanced(weight, run * outputs * width);  // the run's (outputs, width)
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        if (!real || k >= w) continue;
        const float v = x_row[k];
        MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
          if (a < outputs) dot[a] = dot[a] + v * static_cast<float>(weights[a * w + k]);
        }
      }
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a < outputs) sh.dots[a * kThreads + th.index] = dot[a];
      }
    } else if (p <= kLevels) {
      const int half = kLanes >> p;
      if (th.index % kLanes >= half) return;
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a >= outputs) continue;
        const int at = a * kThreads + th.index;
        sh.dots[at] = static_cast<float>(sh.dots[at]) + static_cast<float>(sh.dots[at + half]);
      }
    } else if (real && th.index % kLanes == 0) {
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a >= outputs) continue;
        const float sum = static_cast<float>(sh.dots[a * kThreads + th.index]) +
                          static_cast<float>(bias[run * outputs + a]);
        y[row * outputs + a] = tanh_of(sum);
      }
    }
  }
};

template <typename Mem, int PerLane = 8, bool FullRows = false>
struct TanhHeadBackward : RowGridOf<PerLane, FullRows> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane, FullRows>);
  static constexpr int kWarpLevels = 3;  // 2^3 = kWarps
  static constexpr int kPhases = kWarpLevels + 2;
  struct Regs : Exchange<float> {};
  struct Shared {
    // [warp][output · width + channel] and [warp][output]: the warps' rows' terms, halved across
    // warps.
    typename Mem::template Array<float, kWarps * kMaxHeadTerms> weight_part;
    typename Mem::template Array<float, kWarps * kMaxHeadOutputs> bias_part;
  };
  int64_t outputs;
  typename Mem::template In<float> x, weight, y, y_grad;  // y, y_grad (rows, outputs)
  typename Mem::template Out<float> x_grad;               // (rows, width)
  typename Mem::template Out<float> partial;              // (blocks(), partial_width())
  RunRows runs;
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // A block's partial row: the weight gradient's outputs × width terms, then the bias's outputs.
  MINRNN_HOST_DEVICE int64_t partial_width() const { return outputs * width + outputs; }
  // Phases: 0 the row's g, its input gradient and the warp's terms; 1 … kWarpLevels the warps'
  // terms halved; the last the block's partial row.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int warp = th.index / kLanes;
    if (p == 0) {
      terms(th, sh);
    } else if (p <= kWarpLevels) {
      const int half = kWarps >> p, w = row_width();
      if (warp >= half) return;
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a >= outputs) continue;
        MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
          const int k = lane_channel(th, c);
          if (k >= w) continue;
          const int at = warp * kMaxHeadTerms + a * w + k, from = at + half * kMaxHeadTerms;
          sh.weight_part[at] =
              static_cast<float>(sh.weight_part[at]) + static_cast<float>(sh.weight_part[from]);
        }
        if (th.index % kLanes == 0) {
          const int at = warp * kMaxHeadOutputs + a, from = at + half * kMaxHeadOutputs;
          sh.bias_part[at] =
              static_cast<float>(sh.bias_part[at]) + static_cast<float>(sh.bias_part[from]);
        }
      }
    } else if (warp == 0) {
      const int w = row_width();
      const auto block_partial = advanced(partial, th.block * partial_width());
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a >= outputs) continue;
        MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
          const int k = lane_channel(th, c);
          if (k < w) block_partial[a * w + k] = sh.weight_part[a * w + k];
        }
        if (th.index == 0) block_partial[outputs * width + a] = sh.bias_part[a];
      }
    }
  }
  MINRNN_HOST_DEVICE void terms(const Thread& th, Shared& sh) const {
    const int64_t row = this->row(th);
    const bool real = row < rows;
    const int64_t run = real ? runs.run(row) : 0;
    const int warp = th.index / kLanes;
    float g[kMaxHeadOutputs] = {};  // the gradient before the tanh (0 past the rows)
    MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
      if (!real || a >= outputs) continue;
      const float out = y[row * outputs + a];
      g[a] = static_cast<float>(y_grad[row * outputs + a]) * (1.0f - out * out);
    }
    const int w = row_width();
    const auto x_row = advanced(x, real ? row * width : 0);
    const auto x_grad_row = advanced(x_grad, real ? row * width : 0);
    const auto weights = advanced(weight, run * outputs * width);  // the run's (outputs, width)
    MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
      const int k = lane_channel(th, c);
      if (k >= w) continue;
      const float v = real ? static_cast<float>(x_row[k]) : 0.0f;
      float dx = 0.0f;
      MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
        if (a >= outputs) continue;
        dx = dx + g[a] * static_cast<float>(weights[a * w + k]);
        sh.weight_part[warp * kMaxHeadTerms + a * w + k] = g[a] * v;
      }
      if (real) x_grad_row[k] = dx;
    }
    if (th.index % kLanes != 0) return;
    MINRNN_UNROLL for (int a = 0; a < kMaxHeadOutputs; ++a) {
      if (a < outputs) sh.bias_part[warp * kMaxHeadOutputs + a] = g[a];
    }
  }
};

}  // namespace minrnn::core::grid
