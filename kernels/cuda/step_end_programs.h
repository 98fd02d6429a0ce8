// A training step's loss, end and update (rl/train_step.h) as phase programs
// (kernels/cuda/phase_program.h) for CUDA, launched by kernels/cuda/pointwise.cu:
// - MaskedMseForward / MaskedMseBackward: DT's loss and its gradient, two launches where
//   LibTorch's ops take ~14.
// - SquareSums / EndStep: a training step's end — the squares of its gradients summed, a partial
//   sum per block, then on one block the global gradient norm from those and end_of_step — in
//   place of LibTorch's foreach norm, stack and norm (~5 launches) and ~20 one-element kernels.
// - AdamWStep: FusedAdamW's update of up to 48 parameter tensors in one launch
//   (kernels/math/adamw_math.h).
// Each takes a pack's stacked runs too (ops/run_axis.h): a loss, norm, verdict and update a run.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/cuda/pointwise_programs.h"  // PointwiseGrid, BlockTree
#include "kernels/math/adamw_math.h"
#include "kernels/math/masked_mse_math.h"

#include <math.h>

namespace minrnn::core::grid {

// The blocks of up to N tensors in one launch, kPerBlock elements a block: tensor t owns blocks
// [first_block[t], first_block[t + 1]) (AdamWStep, SquareSums: a step's ~40 small tensors in one
// launch instead of ~40, which a replayed step is bound by). With runs > 1 each tensor is a
// pack's stacked runs' (ops/run_axis.h), `size` elements a run one run after the other, and no
// block takes elements of two runs.
template <int N, int64_t kPerBlock>
struct TensorBlocks {
  int count = 0;
  int64_t first_block[N + 1] = {0};
  int64_t size[N] = {};  // a run's elements
  int64_t runs = 1;
  static MINRNN_HOST_DEVICE int64_t blocks_of(int64_t n) { return (n + kPerBlock - 1) / kPerBlock; }
  // Appends a tensor of `runs` runs of n elements each (the caller keeps count below N).
  void add(int64_t n) {
    size[count] = n;
    first_block[count + 1] = first_block[count] + runs * blocks_of(n);
    ++count;
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return first_block[count]; }
  // The tensor block `block` belongs to: the last t whose first block is at most `block` (an empty
  // tensor's first block is its successor's). Halving the range, 6 probes for 48 tensors, where a
  // walk from the first took ~24 on average, each thread of every block.
  MINRNN_HOST_DEVICE int of(int64_t block) const {
    int low = 0, high = count - 1;
    while (low < high) {
      const int mid = (low + high + 1) / 2;
      if (first_block[mid] <= block) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }
  // Where block `block` is: its tensor, its run and its index among that run's blocks of it.
  struct Place {
    int tensor;
    int64_t run, block;
  };
  MINRNN_HOST_DEVICE Place place(int64_t block) const {
    const int t = of(block);
    const int64_t b = block - first_block[t], per_run = blocks_of(size[t]);
    const int64_t run = runs > 1 ? b / per_run : 0;
    return {t, run, b - run * per_run};
  }
  // A run's blocks of the tensors before t in this launch.
  MINRNN_HOST_DEVICE int64_t run_blocks_before(int t) const { return first_block[t] / runs; }
};

// One AdamW step over up to kTensors float32 parameter tensors in one launch, a block of
// kThreads · kPerThread elements each (TensorBlocks), a thread's kPerThread elements kThreads
// apart; each element is read and written by the thread that owns it (on the GPU the In and Out
// of each are the same array). With `scalars` set, the update, gradient scale and apply flag are
// read from there when the step runs: for a pack's runs (tensors.runs > 1), run r's from
// scalars[r]. A thread's reads are all issued before it looks at the apply flag: at one element a
// thread, behind that flag's read, a stacked pack of 32's update moved ~2.4 TB/s (0.23 ms for
// 564 MB on an H200, 2026-11-28).
template <typename Mem>
struct AdamWStep {
  static constexpr int kThreads = PointwiseGrid::kThreads, kPerThread = 4;
  static constexpr int kPhases = 1;
  // 48: a minRNN agent's 43 parameter tensors in one launch, the arguments (~3.5 KB) under the
  // 4 KB every CUDA version takes (checked in kernels/cuda/pointwise.cu).
  static constexpr int kTensors = 48;
  using Regs = PointwiseGrid::Regs;
  using Shared = PointwiseGrid::Shared;
  using In = typename Mem::template In<float>;
  using Out = typename Mem::template Out<float>;
  AdamWUpdate u;
  const AdamWStepScalars* scalars;
  TensorBlocks<kTensors, int64_t{kThreads}* kPerThread> tensors = {};
  In p_in[kTensors] = {}, g[kTensors] = {}, m_in[kTensors] = {}, v_in[kTensors] = {};
  Out p_out[kTensors] = {}, m_out[kTensors] = {}, v_out[kTensors] = {};

  // Appends a tensor of n elements (the caller keeps tensors.count below kTensors).
  void add(int64_t n, In p, In grad, In m, In v, Out p_new, Out m_new, Out v_new) {
    const int t = tensors.count;
    p_in[t] = p, g[t] = grad, m_in[t] = m, v_in[t] = v;
    p_out[t] = p_new, m_out[t] = m_new, v_out[t] = v_new;
    tensors.add(n);
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return tensors.blocks(); }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int) { return {Boundary::kNone, 0}; }
  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, Regs&, Shared&) const {
    const auto at = tensors.place(th.block);
    const int t = at.tensor;
    const int64_t first = at.block * kThreads * kPerThread + th.index;
    const int64_t run_first = at.run * tensors.size[t];
    const AdamWStepScalars* s = scalars ? scalars + at.run : nullptr;
    float p[kPerThread], m[kPerThread], v[kPerThread], grad[kPerThread];
    MINRNN_UNROLL for (int k = 0; k < kPerThread; ++k) {
      const int64_t local = first + k * kThreads, i = run_first + local;
      const bool here = local < tensors.size[t];
      p[k] = here ? static_cast<float>(p_in[t][i]) : 0.0f;
      m[k] = here ? static_cast<float>(m_in[t][i]) : 0.0f;
      v[k] = here ? static_cast<float>(v_in[t][i]) : 0.0f;
      grad[k] = here ? static_cast<float>(g[t][i]) : 0.0f;
    }
    if (s && s->apply == 0.0f) return;
    MINRNN_UNROLL for (int k = 0; k < kPerThread; ++k) {
      const int64_t local = first + k * kThreads, i = run_first + local;
      if (local >= tensors.size[t]) continue;
      adamw_element(p[k], s ? grad[k] * s->grad_scale : grad[k], m[k], v[k], s ? s->update : u);
      p_out[t][i] = p[k];
      m_out[t][i] = m[k];
      v_out[t][i] = v[k];
    }
  }
};

// The squares of up to kTensors float32 tensors (a step's gradients) summed a block of kPerBlock
// elements at a time (TensorBlocks): each thread adds its kPerThread elements, kThreads apart, in
// order, the block halves the sums, and thread 0 writes the block's partial sum at first_partial +
// its block. For a pack's runs (tensors.runs > 1) each run's partials are its own row of
// run_partials: at run · run_partials + first_partial + the block's index among the run's.
template <typename Mem>
struct SquareSums {
  static constexpr int kThreads = BlockTree::kThreads, kLevels = BlockTree::kLevels;
  static constexpr int kPerThread = 8;
  static constexpr int64_t kPerBlock = int64_t{kThreads} * kPerThread;
  static constexpr int kPhases = kLevels + 2;
  static constexpr int kTensors = 48;  // the arguments stay under CUDA's 4 KB
  using Regs = PointwiseGrid::Regs;
  struct Shared {
    typename Mem::template Array<float, kThreads> sums;
  };
  using In = typename Mem::template In<float>;
  TensorBlocks<kTensors, kPerBlock> tensors = {};
  In values[kTensors] = {};
  int64_t first_partial = 0;
  typename Mem::template Out<float> partials;
  int64_t run_partials = 0;  // a run's partials over every launch of the step

  // Appends a tensor of n elements (the caller keeps tensors.count below kTensors).
  void add(int64_t n, In v) {
    values[tensors.count] = v;
    tensors.add(n);
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return tensors.blocks(); }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    if (p == 0) {
      const auto at = tensors.place(th.block);
      const int t = at.tensor;
      const int64_t start = at.block * kPerBlock + th.index, base = at.run * tensors.size[t];
      const int64_t end = start + int64_t{kPerThread} * kThreads;
      sh.sums[th.index] = ordered_sum<kPerThread>(
          0.0f, start, end < tensors.size[t] ? end : tensors.size[t], kThreads, [&](int64_t i) {
            const float v = values[t][base + i];
            return v * v;
          });
    } else if (p <= kLevels) {
      BlockTree::halve(sh.sums, th.index, p);
    } else if (th.index == 0) {
      const auto at = tensors.place(th.block);
      partials[at.run * run_partials + first_partial + tensors.run_blocks_before(at.tensor) +
               at.block] = sh.sums[0];
    }
  }
};

// One block ends the step: sums the partial square sums in a fixed order (each thread every
// kThreads-th, then the tree), and its thread 0 takes the global gradient norm's square root and
// the step's loss, number and apply flag; writes the gradient scale and flag into the step's
// scalars (AdamWStepScalars), the first bad step and what into `verdict` (its two values kept
// otherwise), and the loss and norm. No partials (nothing clips): the norm is 0. For a pack's
// runs, a block a run: run r's partials, loss, number, scalars, verdict and outputs its own.
template <typename Mem>
struct EndStep {
  static constexpr int kThreads = BlockTree::kThreads, kLevels = BlockTree::kLevels;
  static constexpr int kPhases = kLevels + 2;
  using Regs = PointwiseGrid::Regs;
  struct Shared {
    typename Mem::template Array<float, kThreads> sums;
  };
  float clip;
  int64_t partial_count;
  typename Mem::template In<float> loss, partials, scalars;
  typename Mem::template In<int64_t> step_number, verdict;  // (`step` is the grid's phase step)
  typename Mem::template Out<float> scalars_out, loss_out, norm_out;
  typename Mem::template Out<int64_t> verdict_out;
  int64_t runs = 1;  // partial_count partials a run
  MINRNN_HOST_DEVICE int64_t blocks() const { return runs; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int64_t r = th.block;
    if (p == 0) {
      float sum = 0.0f;
      const int64_t first = r * partial_count;
      for (int64_t i = th.index; i < partial_count; i += kThreads) sum += partials[first + i];
      sh.sums[th.index] = sum;
      return;
    }
    if (p <= kLevels) {
      BlockTree::halve(sh.sums, th.index, p);
      return;
    }
    if (th.index != 0) return;
    const int64_t s = r * kAdamWStepScalarCount, v = r * kStepVerdictCount;
    const float l = loss[r], g = sqrtf(sh.sums[0]);
    const StepEnd end = end_of_step(l, g, clip, scalars[s + kApplyScalar]);
    scalars_out[s + kGradScaleScalar] = end.grad_scale;
    scalars_out[s + kApplyScalar] = end.apply;
    verdict_out[v + kFirstBadStep] = end.record ? step_number[r] : verdict[v + kFirstBadStep];
    verdict_out[v + kBadWhat] = end.record ? end.record : verdict[v + kBadWhat];
    loss_out[r] = l;
    norm_out[r] = g;
  }
};

// DT's masked MSE (kernels/math/masked_mse_math.h) in one block: each thread sums its rows'
// masked squared errors and mask values, the block halves the partial sums kLevels times across
// barriers (a fixed order: the same bits every replay), and thread 0 writes the loss and its
// denominator max(Σ mask, 1) for the backward. For a pack's runs, a block a run: rows / runs
// rows each, loss and denominator one a run.
template <typename Mem>
struct MaskedMseForward {
  static constexpr int kThreads = BlockTree::kThreads, kLevels = BlockTree::kLevels;
  static constexpr int kPhases = kLevels + 2;
  using Regs = PointwiseGrid::Regs;
  struct Shared {
    typename Mem::template Array<float, kThreads> squares, weights;
  };
  int64_t rows, width;
  typename Mem::template In<float> predicted, target, mask;
  typename Mem::template Out<float> loss, denominator;
  int64_t runs = 1;
  MINRNN_HOST_DEVICE int64_t blocks() const { return runs; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int t = th.index;
    const int64_t run = th.block, run_rows = rows / runs;
    if (p == 0) {
      float squares = 0.0f, weights = 0.0f;
      const int64_t end = (run + 1) * run_rows;
      for (int64_t r = run * run_rows + t; r < end; r += kThreads) {
        const float m = mask[r];
        squares += m * row_squared_error(predicted, target, r * width, width);
        weights += m;
      }
      sh.squares[t] = squares;
      sh.weights[t] = weights;
    } else if (p <= kLevels) {
      BlockTree::halve(sh.squares, t, p);
      BlockTree::halve(sh.weights, t, p);
    } else if (t == 0) {
      const float weights = sh.weights[0], denom = weights > 1.0f ? weights : 1.0f;
      loss[run] = static_cast<float>(sh.squares[0]) / (static_cast<float>(width) * denom);
      denominator[run] = denom;
    }
  }
};

// Its backward, one thread per element of the (rows, width) prediction: masked_mse_grad. For a
// pack's runs, each row's run's loss gradient and denominator (rows_per_run > 0).
template <typename Mem>
struct MaskedMseBackward : PointwiseGrid {
  int64_t width;
  typename Mem::template In<float> predicted, target, mask, grad_loss, denominator;
  typename Mem::template Out<float> grad;
  int64_t rows_per_run = 0;
  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, Regs&, Shared&) const {
    const int64_t i = element(th);
    if (i >= n) return;
    const int64_t row = i / width, run = rows_per_run > 0 ? row / rows_per_run : 0;
    grad[i] = masked_mse_grad(grad_loss[run], mask[row], predicted[i], target[i], width,
                              denominator[run]);
  }
};

}  // namespace minrnn::core::grid
