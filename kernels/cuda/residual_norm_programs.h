// A residual block's join (ops/residual_norm.h) as phase programs (kernels/cuda/phase_program.h):
// one launch forward and two backward, where the dropout-add and LibTorch's LayerNorm take two
// forward and ~5 backward (the dropout's, the LayerNorm's input and parameter gradients, and the
// add of the residual's two gradients). Every sum runs in a fixed order: a replay gives the same
// bits.
// - ResidualNormForward: a warp a row (D ≤ kMaxWidth, kPerLane channels a lane; the launcher
//   takes 4 where rows are at most 128 wide, 8 up to 256): the sums, the
//   row's mean and variance summed by warp shuffles (no barrier: the warps of a block never wait
//   for each other), the normed row, the row's moments kept. x and y are read through row maps
//   (the top block's selected tokens), their gradients written back through them (the rows no
//   output reads are zeroed beforehand).
// - ResidualNormBackward: the same layout; the row's two means of the backward summed alike, the
//   gradients of x and y, and the block's rows' γ and β gradients summed into one partial row
//   (across barriers).
// - NormParamGrads: the blocks' partial rows summed (SlicedSums: 32 channels a block, 16 slices of
//   the partials) into γ's and β's gradients.
// A pack's runs stacked (`runs`, kernels/math/run_rows.h): γ and β (runs, D), each run's rows
// joined with its own and dropped out with its own seed, its γ and β gradients summed from its
// own rows (a run's rows fill whole blocks: the host checks).
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/math/residual_norm_math.h"
#include "kernels/math/run_rows.h"

#include <math.h>

namespace minrnn::core::grid {

template <typename Mem, int PerLane = 8, bool FullRows = false>
struct ResidualNormForward : RowGridOf<PerLane, FullRows> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane, FullRows>);
  static constexpr int kPhases = 2 * kLevels + 1;
  struct Regs : Exchange<float> {
    float s[kPerLane];
    float mean;
  };
  struct Shared {};
  HashedDropout dropout;      // seed: an offset added to *seed_base when that is set
  const uint64_t* seed_base;  // a replayed graph's step, or null
  float eps;
  RowMap x_rows, y_rows;  // the rows of x and y each output row reads
  bool residual;          // false: no x, sum = dropout(y)
  typename Mem::template In<float> x, y, gamma, beta;
  typename Mem::template Out<float> sum, normed, moments;  // moments: (rows, 2) mean, rstd
  RunRows runs;
  // Two butterflies over the row's lanes (RowGrid::xor_level), one after the other.
  static constexpr MINRNN_HOST_DEVICE Step step(int p) {
    return p < kLevels       ? xor_level(p + 1)
           : p < 2 * kLevels ? xor_level(p - kLevels + 1)
                             : Step{Boundary::kNone, 0};
  }
  // Phases: 0 the sums; 1 … kLevels their total; then the squared deviations' (the last of those
  // the normed row). Each lane's partial total travels in r.out.a. A row's places are found once
  // and each channel read or written as an offset from them (row_width()).
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs& r, Shared&) const {
    const int64_t row = this->row(th);
    const bool real = row < rows;
    const float D = static_cast<float>(width);
    const int w = row_width();
    if (p == 0) {
      const int64_t run = runs.run(row), local_at = runs.local(row, run) * width;
      // (A row past the end reads no run's base, and no row of x or y.)
      const DropoutDraws d = runs.dropout_of(dropout, seed_base, real ? run : 0).draws();
      const auto y_row = advanced(y, real ? y_rows(row) * width : 0);
      const auto x_row = residual ? advanced(x, real ? x_rows(row) * width : 0) : x;
      // Every read first, predicated: arithmetic between two reads (the dropout's hash) would make
      // the second wait on the first, a memory latency a channel.
      float xs[kPerLane];
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        const bool here = real && k < w;
        r.s[c] = here ? static_cast<float>(y_row[k]) : 0.0f;
        xs[c] = here && residual ? static_cast<float>(x_row[k]) : 0.0f;
      }
      // Each channel's draw made whether or not the row has it, the result selected: a branch a
      // channel kept the compiler from sharing the row's address arithmetic.
      float total = 0.0f;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        const float dropped = d.dropped(r.s[c], local_at + k);
        r.s[c] = k < w ? (residual ? xs[c] + dropped : dropped) : 0.0f;
        total = total + r.s[c];
      }
      // The writes after every read: a write between two channels' reads (which it may alias)
      // makes the second wait for the first.
      const auto sum_row = advanced(sum, real ? row * width : 0);
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        if (real && k < w) sum_row[k] = r.s[c];
      }
      r.out.a = total;
      return;
    }
    add_received(r);
    if (p == kLevels) {
      r.mean = r.out.a / D;
      float squares = 0.0f;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const float dev = lane_channel(th, c) < w ? r.s[c] - r.mean : 0.0f;
        squares = squares + dev * dev;
      }
      r.out.a = squares;
    } else if (p == 2 * kLevels && real) {
      const float rstd = 1.0f / sqrtf(r.out.a / D + eps);
      const int64_t params = runs.run(row) * width;
      const auto gamma_row = advanced(gamma, params), beta_row = advanced(beta, params);
      float g[kPerLane], b[kPerLane];  // read together, before the first write (which may alias)
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        g[c] = k < w ? static_cast<float>(gamma_row[k]) : 0.0f;
        b[c] = k < w ? static_cast<float>(beta_row[k]) : 0.0f;
      }
      const auto normed_row = advanced(normed, row * width);
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        if (k < w) normed_row[k] = (r.s[c] - r.mean) * rstd * g[c] + b[c];
      }
      if (th.index % kLanes == 0) {
        moments[2 * row] = r.mean;
        moments[2 * row + 1] = rstd;
      }
    }
  }
};

template <typename Mem, int PerLane = 8, bool FullRows = false>
struct ResidualNormBackward : RowGridOf<PerLane, FullRows> {
  MINRNN_ROW_GRID_NAMES(RowGridOf<PerLane, FullRows>);
  static constexpr int kWarpLevels = 3;  // 2^3 warps
  static constexpr int kPhases = kLevels + kWarpLevels + 2;
  // At 80 registers a thread an SM held 3 blocks: 396 on an H200, where a training step's joins
  // of 64 × 60 tokens take 480, two waves. At 64, four: one wave. Rows of up to 128 channels
  // (PerLane 4) keep half the channels in registers: five at 48 (six, at 40, spilled to the
  // stack). A stacked pack's joins take many waves: the more blocks an SM, the more rows' reads
  // in flight (at 64 registers, P 32's joins moved ~2 TB/s, 2026-11-28).
  static constexpr int kMinBlocksPerSm = PerLane <= 4 ? 5 : 4;
  struct Regs : Exchange<float> {
    float xhat[kPerLane], dn[kPerLane];
    float through[kPerLane];  // the sum's own gradient, read with the rest in phase 0
    float rstd;
    uint32_t key;  // the dropout's seed, its base added, mixed
  };
  struct Shared {
    // [warp][channel]: the warps' rows' γ and β gradients, halved across warps.
    typename Mem::template Array<float, kWarps * kMaxWidth> gamma_part, beta_part;
  };
  HashedDropout dropout;
  const uint64_t* seed_base;
  RowMap x_rows, y_rows;  // where each output row's x and y gradients go
  typename Mem::template In<float> sum, moments, gamma, sum_grad, normed_grad;  // sum_grad: may be
  bool has_sum_grad;                                                            // absent
  bool residual;  // false: no x, no x_grad
  typename Mem::template Out<float> x_grad, y_grad;
  typename Mem::template Out<float> gamma_partial, beta_partial;  // (blocks, D)
  RunRows runs;
  // The row's two sums by one butterfly (RowGrid::xor_level), then barriers for the warps' rows.
  static constexpr MINRNN_HOST_DEVICE Step step(int p) {
    return p < kLevels ? xor_level(p + 1) : barrier_after_each(p, kPhases);
  }
  // Phases: 0 every read of the row (its gradient through the sum too, so the last phase waits
  // on no load), x̂ and dn, the lane's sums (Σ dn in r.out.a, Σ dn·x̂ in r.out.b), γ's and β's
  // terms into the warp's row; 1 … kLevels the row's totals; then the warps' γ and β rows
  // halved, kWarpLevels times; the last the gradients. A row's places are found once, as the
  // forward's are.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs& r, Shared& sh) const {
    const int64_t row = this->row(th);
    const bool real = row < rows;
    const int warp = th.index / kLanes, w = row_width();
    if (p == 0) {
      const float mean = real ? static_cast<float>(moments[2 * row]) : 0.0f;
      r.rstd = real ? static_cast<float>(moments[2 * row + 1]) : 0.0f;
      const int64_t run = real ? runs.run(row) : 0, at = real ? row * width : 0;
      r.key = runs.dropout_of(dropout, seed_base, run).draws().key;
      const auto gamma_row = advanced(gamma, run * width), sum_row = advanced(sum, at);
      const auto normed_grad_row = advanced(normed_grad, at);
      const auto sum_grad_row = has_sum_grad ? advanced(sum_grad, at) : sum_grad;
      const float rstd = r.rstd;
      float dn_total = 0.0f, dn_xhat_total = 0.0f;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        const bool here = real && k < w;
        const float g = here ? static_cast<float>(normed_grad_row[k]) : 0.0f;
        r.through[c] = here && has_sum_grad ? static_cast<float>(sum_grad_row[k]) : 0.0f;
        r.xhat[c] = here ? (static_cast<float>(sum_row[k]) - mean) * rstd : 0.0f;
        r.dn[c] = here ? g * static_cast<float>(gamma_row[k]) : 0.0f;
        dn_total = dn_total + r.dn[c];
        dn_xhat_total = dn_xhat_total + r.dn[c] * r.xhat[c];
        if (k < w) {
          sh.gamma_part[warp * kMaxWidth + k] = g * r.xhat[c];
          sh.beta_part[warp * kMaxWidth + k] = g;
        }
      }
      r.out.a = dn_total;
      r.out.b = dn_xhat_total;
    } else if (p <= kLevels) {
      add_received(r);
    } else if (p <= kLevels + kWarpLevels) {
      halve_warps(sh, th, kWarps >> (p - kLevels));
    } else {
      write(th, r, sh);
    }
  }
  MINRNN_HOST_DEVICE void halve_warps(Shared& sh, const Thread& th, int half) const {
    const int warp = th.index / kLanes, w = row_width();
    if (warp >= half) return;
    MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
      const int k = lane_channel(th, c);
      if (k >= w) continue;
      const int at = warp * kMaxWidth + k, from = at + half * kMaxWidth;
      sh.gamma_part[at] =
          static_cast<float>(sh.gamma_part[at]) + static_cast<float>(sh.gamma_part[from]);
      sh.beta_part[at] =
          static_cast<float>(sh.beta_part[at]) + static_cast<float>(sh.beta_part[from]);
    }
  }
  MINRNN_HOST_DEVICE void write(const Thread& th, const Regs& r, Shared& sh) const {
    const int64_t row = this->row(th);
    const float D = static_cast<float>(width);
    const int w = row_width();
    const DropoutDraws d{r.key, dropout.threshold, dropout.scale};
    if (row < rows) {
      const float dn_mean = r.out.a / D, dn_xhat_mean = r.out.b / D;
      const int64_t local_at = runs.local(row) * width;
      const int64_t x_at = residual ? x_rows(row) * width : 0, y_at = y_rows(row) * width;
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int k = lane_channel(th, c);
        if (k >= w) continue;
        const float total =
            r.through[c] + norm_input_grad(r.dn[c], r.xhat[c], dn_mean, dn_xhat_mean, r.rstd);
        if (residual) x_grad[x_at + k] = total;
        y_grad[y_at + k] = d.y_grad(total, local_at + k);
      }
    }
    if (th.index / kLanes != 0) return;
    const auto gamma_out = advanced(gamma_partial, th.block * width);
    const auto beta_out = advanced(beta_partial, th.block * width);
    MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
      const int k = lane_channel(th, c);
      if (k >= w) continue;
      gamma_out[k] = sh.gamma_part[k];
      beta_out[k] = sh.beta_part[k];
    }
  }
};

// γ's and β's gradients: each channel's partial rows (ResidualNormBackward's, one a block) summed.
template <typename Mem>
struct NormParamGrads : SlicedSums {
  // Partials whose reads a thread has in flight at once: a training step's joins leave 480 (rows of
  // 64 × 60 tokens, 8 a block), 30 a slice: two waits on memory (at 8, four).
  static constexpr int kChunk = 16;
  struct GammaBeta {  // both sums walked together: their reads wait together
    float gamma = 0.0f, beta = 0.0f;
    MINRNN_HOST_DEVICE GammaBeta operator+(const GammaBeta& o) const {
      return {gamma + o.gamma, beta + o.beta};
    }
  };
  struct Regs : Exchange<float> {};
  struct Shared {
    typename Mem::template Array<float, kThreads> gamma_sums, beta_sums;
  };
  int64_t partials, width;
  typename Mem::template In<float> gamma_partial, beta_partial;  // (partials, D)
  typename Mem::template Out<float> gamma_grad, beta_grad;       // (runs, D)
  int64_t runs = 1;  // partials / runs partial rows each
  MINRNN_HOST_DEVICE int64_t groups() const { return (width + kLanes - 1) / kLanes; }
  MINRNN_HOST_DEVICE int64_t blocks() const { return runs * groups(); }
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int64_t run = th.block / groups();
    const int64_t k = (th.block - run * groups()) * kLanes + lane(th);
    if (p == 0) {
      const int64_t per_run = partials / runs, first = run * per_run;
      const int64_t end = k < width ? first + per_run : first;
      const GammaBeta sums =
          ordered_sum<kChunk>(GammaBeta{}, first + slice(th), end, kSlices, [&](int64_t at) {
            return GammaBeta{static_cast<float>(gamma_partial[at * width + k]),
                             static_cast<float>(beta_partial[at * width + k])};
          });
      sh.gamma_sums[th.index] = sums.gamma;
      sh.beta_sums[th.index] = sums.beta;
    } else if (p <= kLevels) {
      halve(sh.gamma_sums, th, p);
      halve(sh.beta_sums, th, p);
    } else if (slice(th) == 0 && k < width) {
      gamma_grad[run * width + k] = sh.gamma_sums[th.index];
      beta_grad[run * width + k] = sh.beta_sums[th.index];
    }
  }
};

}  // namespace minrnn::core::grid
