// The token embedding's backward (ops/token_embedding.h) as phase programs
// (kernels/cuda/phase_program.h), beside its forward (token_embedding_programs.h). Every sum runs
// in a fixed order, so a replay gives the same bits.
// - TokenParameterGrads: every group's weight and bias gradients. A block takes 32 channels (one
//   warp wide) of kInputs of a group's inputs (its bias one of them) and kSlices slices of the
//   windows; each thread sums its slice in ascending steps for all its inputs, each token gradient
//   read once, and the slices halve across barriers.
// - TimeTableGrad: the time table's gradient, whole (rows no step reads get zeros). A block takes
//   kRows rows × kChannels channels, a warp a row; round by round it reads kRoundSteps steps' rows
//   into shared memory, marks each row's steps in a bitmap (a thread a word: no atomics), and each
//   warp adds its row's steps' token gradients in ascending order, as the CPU loop does. (Its
//   warps each kept all 8 rows' sums and halved them across barriers: 126 registers, two blocks
//   an SM, 0.32 ms of a stacked pack of 32's round on an H200, 2026-11-28.)
// A pack's runs stacked (TokenLayout::runs): each run's gradients are summed from its own windows
// alone.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/cuda/token_embedding_programs.h"
#include "kernels/math/token_embedding_math.h"

namespace minrnn::core::grid {

template <typename Mem>
struct TokenParameterGrads : TokenGroupArrays<Mem>, SlicedSums {
  // Gradient entries a thread sums: kInputs of one group's inputs (its bias counted as input n_j,
  // of value 1) at one channel, so that each token gradient it reads serves them all. A thread an
  // entry read each one n_j + 1 times: 0.23 ms of a stacked pack of 32's round (H200,
  // 2026-11-28), its 2 304 blocks in nine waves. At 4, hopper's 18 entries a channel take 5
  // blocks' worth, not 18; at 8 a thread's reads of a step left room for 2 steps in flight.
  static constexpr int kInputs = 4;
  // Steps whose reads (a gradient and kInputs inputs each) a thread has in flight at once: a
  // quarter of DT's window of 20; 64 registers, two blocks an SM, nothing spilled.
  static constexpr int kChunk = 5;
  static constexpr int kMinBlocksPerSm = 2;
  struct StepReads {
    float grad, x[kInputs];
  };
  struct Regs : Exchange<float> {};
  struct Shared {
    typename Mem::template Array<float, kInputs * kThreads> partial;  // [input][slice][lane]
  };
  TokenLayout shape;
  typename Mem::template In<float> grad;  // (B·L, D), the tokens' gradient
  typename Mem::template Out<float> weight_grad[kMaxTokenGroups], bias_grad[kMaxTokenGroups];

  // Where a block's threads sum: group `group`'s inputs first_input … (kInputs of them, or to its
  // bias), lane l at channel first_channel + l of the run.
  struct Place {
    int group;
    int64_t first_input, first_channel;
  };
  MINRNN_HOST_DEVICE int64_t lane_groups() const { return (shape.width + kLanes - 1) / kLanes; }
  static MINRNN_HOST_DEVICE int64_t chunks_of(int64_t inputs) {
    return (inputs + 1 + kInputs - 1) / kInputs;  // its inputs and its bias, kInputs a chunk
  }
  MINRNN_HOST_DEVICE int64_t run_blocks() const {
    int64_t chunks = 0;
    for (int j = 0; j < kMaxTokenGroups; ++j)
      chunks += j < shape.groups ? chunks_of(shape.inputs[j]) : 0;
    return chunks * lane_groups();
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return shape.runs * run_blocks(); }
  // A run's blocks: group by group, each group's input chunks, each chunk's lane groups.
  MINRNN_HOST_DEVICE Place place(int64_t block) const {
    int64_t chunk = block / lane_groups();
    const int64_t lanes = block - chunk * lane_groups();
    int j = 0;
    while (j + 1 < shape.groups && chunk >= chunks_of(shape.inputs[j]))
      chunk -= chunks_of(shape.inputs[j++]);
    return {j, chunk * kInputs, lanes * kLanes};
  }
  // Phases: 0 each slice's sums; 1 … kLevels halve the slices; kLevels + 1 write.
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    // (32-bit: a 64-bit division is a called routine on the GPU, and its call spilled registers.)
    const int64_t run = static_cast<int32_t>(th.block) / static_cast<int32_t>(run_blocks());
    const Place at = place(th.block - run * run_blocks());
    const int64_t channel = at.first_channel + lane(th), n = shape.inputs[at.group];
    if (p == 0) {
      float sums[kInputs] = {};
      if (channel < shape.width) {
        const int64_t first = run * shape.run_batch();
        slice_sums(at, channel, first + slice(th), first + shape.run_batch(), sums);
      }
      MINRNN_UNROLL for (int q = 0; q < kInputs; ++q) sh.partial[q * kThreads + th.index] = sums[q];
    } else if (p <= kLevels) {
      const int half = kSlices >> p;
      if (slice(th) >= half) return;
      MINRNN_UNROLL for (int q = 0; q < kInputs; ++q) {
        const int at_q = q * kThreads + th.index;
        sh.partial[at_q] = static_cast<float>(sh.partial[at_q]) +
                           static_cast<float>(sh.partial[at_q + half * kLanes]);
      }
    } else if (slice(th) == 0 && channel < shape.width) {
      const int64_t row = run * shape.width + channel;
      MINRNN_UNROLL for (int q = 0; q < kInputs; ++q) {
        const int64_t i = at.first_input + q;
        const float sum = sh.partial[q * kThreads + th.index];
        if (i < n) weight_grad[at.group][row * n + i] = sum;
        if (i == n) bias_grad[at.group][row] = sum;
      }
    }
  }
  // Σ over a slice's windows (first, first + kSlices, … below end: its run's), each window's
  // steps in ascending order, of the token gradient times each input (itself for the bias): every
  // entry in the order a thread an entry summed it. Whole windows a slice, so a token's row follows
  // from its step without a division; kChunk steps' reads in flight at once (the products after
  // them: a product between two reads makes the second wait on the first).
  MINRNN_HOST_DEVICE void slice_sums(const Place& at, int64_t channel, int64_t first, int64_t end,
                                     float (&sums)[kInputs]) const {
    const int64_t n = shape.inputs[at.group], count = shape.steps_with_token(at.group);
    for (int64_t b = first; b < end; b += kSlices) {
      const int64_t first_row = b * shape.tokens + at.group, first_step = b * shape.steps;
      walk_in_chunks<kChunk>(
          count,
          [&](int64_t k) {
            StepReads r{
                static_cast<float>(grad[(first_row + k * shape.groups) * shape.width + channel]),
                {}};
            MINRNN_UNROLL for (int q = 0; q < kInputs; ++q) {
              const int64_t i = at.first_input + q;
              r.x[q] = i < n ? static_cast<float>(this->input[at.group][(first_step + k) * n + i])
                             : 1.0f;
            }
            return r;
          },
          [&](int64_t, const StepReads& r) {
            MINRNN_UNROLL for (int q = 0; q < kInputs; ++q) {
              const int64_t i = at.first_input + q;
              if (i < n) sums[q] = sums[q] + r.grad * r.x[q];
              if (i == n) sums[q] = sums[q] + r.grad;
            }
          });
    }
  }
};

// The lowest set bit of m ≠ 0.
MINRNN_HOST_DEVICE int lowest_bit(uint32_t m) {
#ifdef __CUDA_ARCH__
  return __ffs(static_cast<int>(m)) - 1;
#else
  return __builtin_ctz(m);
#endif
}

template <typename Mem>
struct TimeTableGrad {
  static constexpr int kLanes = kWarpSize, kWarps = 8, kThreads = kLanes * kWarps;
  static constexpr int kRows = kWarps, kPerLane = 4, kChannels = kLanes * kPerLane;  // a warp a row
  // Steps a round: a thread reads 8 steps' timesteps at once, and a training batch (B·K = 1 280)
  // is one round, one wait on memory (rounds of 256 waited five times).
  static constexpr int kStepsPerThread = 8, kRoundSteps = kThreads * kStepsPerThread;
  static constexpr int kWords = kRoundSteps / kLanes;  // a round's steps, a bit each
  // Four blocks an SM (at most 64 registers, 62 on sm_90): its phases wait on memory and
  // barriers, not arithmetic.
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr int kPhases = 4;
  struct Regs : Exchange<float> {
    float sum[kPerLane];  // starts at zero: every launcher value-initializes Regs
  };
  // The round's steps' rows kept [bit][word], a word's stride one entry more than the words: phase
  // 1's thread w reads word w's 32 steps, bit by bit, its warp's lanes then in 32 banks (stored
  // [word][bit], a warp's 32 reads of a bit fell in one bank, 32-way conflicts on all 32 of them;
  // phase 0's writes, a lane a bit, fall in 32 banks too).
  static constexpr int kWordStride = kWords + 1;
  static MINRNN_HOST_DEVICE int row_slot(int word, int bit) { return bit * kWordStride + word; }
  struct Shared {
    // This round's steps' table rows; 32 bits: a time table's rows are an episode's steps.
    typename Mem::template Array<int32_t, kLanes * kWordStride> rows;
    // [row][word]: bit j of word w set where the round's step 32·w + j reads the block's row.
    typename Mem::template Array<uint32_t, kRows * kWords> steps;
  };
  TokenLayout shape;
  typename Mem::template In<int64_t> timesteps;  // (B·K)
  typename Mem::template In<float> grad;         // (B·L, D)
  typename Mem::template Out<float> table_grad;  // (rows, D)

  MINRNN_HOST_DEVICE int64_t row_blocks() const { return (shape.table_rows + kRows - 1) / kRows; }
  MINRNN_HOST_DEVICE int64_t run_blocks() const {
    return row_blocks() * ((shape.width + kChannels - 1) / kChannels);
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return shape.runs * run_blocks(); }
  MINRNN_HOST_DEVICE int64_t run_steps() const { return shape.step_count() / shape.runs; }
  MINRNN_HOST_DEVICE int64_t rounds() const {
    return (run_steps() + kRoundSteps - 1) / kRoundSteps;
  }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  // Phases: 0 read the round's rows; 1 each word of the round's steps marks, row by row, the
  // steps that read the block's rows; 2 each warp adds its row's marked steps' token gradients in
  // ascending order (the CPU loop's order: the same bits); in the last round, 3 writes the rows.
  // A block's run reads its run's steps alone (run_first: its first) and writes its run's table.
  MINRNN_HOST_DEVICE void phase(int p, int64_t round, const Thread& th, Regs& r, Shared& sh) const {
    const int lane = th.index % kLanes, warp = th.index / kLanes;
    const int64_t run = th.block / run_blocks(), block = th.block - run * run_blocks();
    const int64_t run_first = run * run_steps(), round_first = round * kRoundSteps;
    const int64_t first_row = (block % row_blocks()) * kRows, row = first_row + warp;
    const int64_t channel = (block / row_blocks()) * kChannels + lane;  // the lane's first
    const int64_t left = run_steps() - round_first;
    const int real = static_cast<int>(left < kRoundSteps ? left : kRoundSteps);
    if (p == 0) {
      int64_t t[kStepsPerThread];
      MINRNN_UNROLL for (int j = 0; j < kStepsPerThread; ++j) {
        const int s = th.index + j * kThreads;
        if (s < real) t[j] = timesteps[run_first + round_first + s];
      }
      MINRNN_UNROLL for (int j = 0; j < kStepsPerThread; ++j) {
        const int s = th.index + j * kThreads;
        sh.rows[row_slot(warp + j * kWarps, lane)] =  // step s's word and bit
            s < real ? static_cast<int32_t>(time_row(t[j], shape.table_rows)) : -1;
      }
    } else if (p == 1) {
      if (th.index >= kWords) return;
      uint32_t marks[kRows] = {};  // registers take constant indices: the row by compares
      const auto first = static_cast<int32_t>(first_row);  // a table's rows: 32 bits
      for (int j = 0; j < kLanes; ++j) {
        const int32_t at = static_cast<int32_t>(sh.rows[row_slot(th.index, j)]) - first;
        MINRNN_UNROLL for (int q = 0; q < kRows; ++q) {
          if (at == q) marks[q] |= 1u << j;
        }
      }
      MINRNN_UNROLL for (int q = 0; q < kRows; ++q) sh.steps[q * kWords + th.index] = marks[q];
    } else if (p == 2) {
      if (row >= shape.table_rows) return;
      for (int w = 0; w * kLanes < real; ++w) {
        for (uint32_t m = sh.steps[warp * kWords + w]; m != 0; m &= m - 1) {
          float g[kPerLane];
          step_grad(run_first + round_first + w * kLanes + lowest_bit(m), channel, g);
          MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) r.sum[c] = r.sum[c] + g[c];
        }
      }
    } else if (round + 1 == rounds() && row < shape.table_rows) {
      MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
        const int64_t d = channel + c * kLanes;
        if (d < shape.width)
          table_grad[(run * shape.table_rows + row) * shape.width + d] = r.sum[c];
      }
    }
  }
  // The lane's channels of a step's token gradients, its groups' summed in order. The groups'
  // rows first, from one 64-bit division a step (on the GPU a range check and a 32-bit path), not
  // one a channel and group.
  MINRNN_HOST_DEVICE void step_grad(int64_t step, int64_t channel, float (&g)[kPerLane]) const {
    const int64_t window = step / shape.steps, k = step - window * shape.steps;
    int64_t rows[kMaxTokenGroups];
    MINRNN_UNROLL for (int j = 0; j < kMaxTokenGroups; ++j) {
      rows[j] = j < shape.groups ? shape.window_token_row(window, k, j) : -1;
    }
    MINRNN_UNROLL for (int c = 0; c < kPerLane; ++c) {
      const int64_t d = channel + c * kLanes;
      g[c] = 0.0f;
      MINRNN_UNROLL for (int j = 0; j < kMaxTokenGroups; ++j) {
        if (rows[j] >= 0 && d < shape.width) {
          g[c] = g[c] + static_cast<float>(grad[rows[j] * shape.width + d]);
        }
      }
    }
  }
};

}  // namespace minrnn::core::grid
