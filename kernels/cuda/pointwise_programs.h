// The element-wise passes of a training step that have CPU loops of their own, as phase programs
// (kernels/cuda/phase_program.h) for CUDA: a thread per element (BiasGelu four), one phase, so the
// kernels (kernels/cuda/pointwise.cu) and the host emulator's tests run the same bodies.
// - DropoutAdd: the hashed dropout-add (ops/dropout.h), out[i] = (x[i] +) keep(i) · y[i] · scale,
//   the CPU pass's arithmetic in its order, product and sum rounded separately (the kernels are
//   built without FMA contraction, as the CPU pass is), so GPU and CPU give the same bits.
// - BiasGelu: the fused MLP's forward pass (ops/mlp.h) — bias + exact GELU.
// - ColumnSums: a Linear's bias gradient (ops/affine.h), and with it the MLP's GELU backward (GELU′
//   recomputed from BiasGelu's input).
// The step's loss, end and AdamW: kernels/cuda/step_end_programs.h.
#pragma once
#include "kernels/cuda/phase_program.h"
#include "kernels/math/divider.h"
#include "kernels/math/dropout_math.h"

#include <math.h>

namespace minrnn::core::grid {

// One thread per element of n, one phase: the grid every pass here shares.
struct PointwiseGrid {
  static constexpr int kThreads = 256;
  static constexpr int kPhases = 1;
  struct Regs : Exchange<float> {};
  struct Shared {};
  int64_t n;
  MINRNN_HOST_DEVICE int64_t blocks() const { return (n + kThreads - 1) / kThreads; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int) { return {Boundary::kNone, 0}; }
  MINRNN_HOST_DEVICE int64_t element(const Thread& th) const {
    return th.block * kThreads + th.index;
  }
};

// One block's sum of a value per thread in a fixed order (the same bits every replay): phase 0
// writes each thread's value, levels 1 … kLevels halve them across barriers, and entry 0 then
// holds the sum.
struct BlockTree {
  static constexpr int kThreads = 256, kLevels = 8;  // 2^kLevels threads
  template <typename Array>
  static MINRNN_HOST_DEVICE void halve(Array& a, int index, int level) {
    const int half = kThreads >> level;
    if (index < half) a[index] = static_cast<float>(a[index]) + static_cast<float>(a[index + half]);
  }
};

template <typename T, typename Mem>
struct DropoutAdd : PointwiseGrid {
  uint64_t seed;
  const uint64_t* seed_base;  // when set, the seed is *seed_base + seed (a replayed graph's step)
  int64_t threshold;          // dropped where the draw is below: p·2³²
  T scale;                    // 1 / (1 − p)
  bool residual;              // with x; else out = keep · y · scale
  typename Mem::template In<T> x, y;
  typename Mem::template Out<T> out;
  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, Regs&, Shared&) const {
    const int64_t i = element(th);
    if (i >= n) return;
    const T scaled = static_cast<T>(y[i]) * scale;
    const uint64_t s = seed_base ? *seed_base + seed : seed;
    const T v = dropout_math::draw(s, i) >= threshold ? scaled : T(0);
    out[i] = residual ? static_cast<T>(x[i]) + v : v;
  }
};

MINRNN_HOST_DEVICE float erf_of(float v) {
  return ::erff(v);
}
MINRNN_HOST_DEVICE double erf_of(double v) {
  return ::erf(v);
}

// GELU(v) = v Φ(v) and GELU′(v) = Φ(v) + v φ(v): exact GELU, Φ by erf.
template <typename T>
struct GeluAt {
  T value, slope;
};
template <typename T>
MINRNN_HOST_DEVICE GeluAt<T> gelu_at(T v) {
  const T cdf = T(0.5) * (T(1) + erf_of(v * T(0.70710678118654752440)));
  const T pdf = T(0.39894228040143267794) * scan_math::exp_of(T(-0.5) * v * v);
  return {v * cdf, cdf + v * pdf};
}

// activated[i] = GELU(pre[i] + bias[i % width]). With rows_per_run > 0, a pack's runs stacked
// (ops/run_axis.h): bias (runs, width), each run's rows adding its own row. GELU′ is not kept: the
// backward (ColumnSums, Gelu) recomputes it from pre, where writing it cost a (rows, width)
// array. Element i's row and run by Dividers where the indices fit (prepared()). A thread takes
// kPerThread elements kThreads apart, their reads issued together: at one element a thread, an
// SM's 2 048 threads had 8 KB of reads in flight, a third of what the H200's bandwidth asks for
// (a stacked pack of 32's BiasGelu moved ~2.7 TB/s, 2026-11-28).
template <typename T, typename Mem>
struct BiasGelu : PointwiseGrid {
  static constexpr int kPerThread = 4;
  int64_t width;
  typename Mem::template In<T> pre, bias;
  typename Mem::template Out<T> activated;
  int64_t rows_per_run = 0;
  bool divide_fast = false;
  Divider by_width, by_run_rows;
  MINRNN_HOST_DEVICE int64_t blocks() const {
    return (n + kThreads * kPerThread - 1) / (kThreads * kPerThread);
  }
  // This pass with its dividers set (on the host, before a launch).
  BiasGelu prepared() const {
    BiasGelu k = *this;
    const int64_t run_rows = rows_per_run > 0 ? rows_per_run : 1;
    k.divide_fast = Divider::fits(n, width) && Divider::fits(n, run_rows);
    if (k.divide_fast) k.by_width = Divider::of(width), k.by_run_rows = Divider::of(run_rows);
    return k;
  }
  // Element i's bias: its run's row, its column.
  MINRNN_HOST_DEVICE int64_t bias_index(int64_t i) const {
    if (divide_fast) {  // every index below 2³¹: 32-bit arithmetic, not 64-bit
      const auto at = static_cast<uint32_t>(i), w = static_cast<uint32_t>(width);
      const uint32_t row = by_width.quotient(at), column = at - row * w;
      return rows_per_run > 0 ? by_run_rows.quotient(row) * w + column : column;
    }
    const int64_t row = i / width, column = i - row * width;
    return rows_per_run > 0 ? row / rows_per_run * width + column : column;
  }
  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, Regs&, Shared&) const {
    const int64_t first = th.block * kThreads * kPerThread + th.index;
    T v[kPerThread];
    MINRNN_UNROLL for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = first + k * kThreads;
      v[k] = i < n ? static_cast<T>(pre[i]) + static_cast<T>(bias[bias_index(i)]) : T(0);
    }
    MINRNN_UNROLL for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = first + k * kThreads;
      if (i < n) activated[i] = gelu_at(v[k]).value;
    }
  }
};

// The column sums of a (rows, width) array in a fixed order (the same bits every replay): a
// Linear's bias gradient. One pass sums each tile of kTileRows rows into a partial row; the same
// program over those partial rows sums them (ops/pointwise_cuda.cpp repeats it until one row is
// left). A block takes kLanes columns of one tile (SlicedSums: kSlices slices of the tile's rows,
// halved across barriers). With Gelu, each term is in · GELU′(pre + bias) (bias the run's row),
// written to `product` as it is summed: the MLP's GELU backward (d_hidden = d_activated · GELU′,
// the slope recomputed from BiasGelu's input) and its first bias's gradient in one pass, where
// LibTorch's column sum would read d_hidden again. With `runs` > 1 the rows are that many runs'
// one after the other (a pack's stacked runs, ops/run_axis.h), each summed on its own: no tile
// takes rows of two runs, and the last pass leaves a row a run.
// Gelu a template argument, not a flag: the plain sums (most of a step's) then keep few registers
// (a pass's 512 threads held 94 a thread for both, one block an SM), the GELU pass its own.
template <typename T, typename Mem, bool Gelu = false>
struct ColumnSums : SlicedSums {
  // Rows a thread sums in a tile, and how many of their reads it has in flight at once. A pass's
  // 512 threads held 94 registers a thread with 16 reads at once (one block an SM, its reads and
  // its sums' barriers one after the other, 2026-11-28): at 8 (4 with GELU′, whose terms made
  // together take registers of their own) they hold ≤ 64, two blocks an SM.
  static constexpr int kRowsPerThread = 16;
  static constexpr int kChunk = (sizeof(T) == 4 ? 8 : 4) / (Gelu ? 2 : 1);
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int64_t kTileRows = int64_t{kSlices} * kRowsPerThread;
  struct Regs : Exchange<float> {};
  struct Shared {
    typename Mem::template Array<T, kThreads> sums;
  };
  int64_t rows, width;
  typename Mem::template In<T> in, pre;    // (rows, width); pre read with Gelu
  typename Mem::template In<T> bias;       // (runs, width), read with Gelu
  typename Mem::template Out<T> product;   // (rows, width), written with Gelu
  typename Mem::template Out<T> sums_out;  // (tiles(), width)
  int64_t runs = 1;                        // rows / runs rows each
  MINRNN_HOST_DEVICE int64_t groups() const { return (width + kLanes - 1) / kLanes; }
  // The partial rows a pass over `rows` rows leaves (the next pass's rows, a run's).
  static MINRNN_HOST_DEVICE int64_t tiles_of(int64_t rows) {
    return (rows + kTileRows - 1) / kTileRows;
  }
  MINRNN_HOST_DEVICE int64_t run_rows() const { return rows / runs; }
  MINRNN_HOST_DEVICE int64_t run_tiles() const { return tiles_of(run_rows()); }
  MINRNN_HOST_DEVICE int64_t tiles() const { return runs * run_tiles(); }
  MINRNN_HOST_DEVICE int64_t blocks() const { return groups() * tiles(); }
  MINRNN_HOST_DEVICE void phase(int p, int64_t, const Thread& th, Regs&, Shared& sh) const {
    const int64_t tile = th.block / groups();  // tile `tile % run_tiles()` of its run
    const int64_t k = (th.block - tile * groups()) * kLanes + lane(th);
    if (p == 0) {
      const int64_t run = tile / run_tiles(), run_end = (run + 1) * run_rows();
      const int64_t tile_first = run * run_rows() + (tile - run * run_tiles()) * kTileRows;
      const int64_t first = tile_first + slice(th), tile_end = tile_first + kTileRows;
      const int64_t end = k >= width ? 0 : tile_end < run_end ? tile_end : run_end;
      sh.sums[th.index] = column_sum(first, end, k, run);
    } else if (p <= kLevels) {
      halve<T>(sh.sums, th, p);
    } else if (slice(th) == 0 && k < width) {
      sums_out[tile * width + k] = sh.sums[th.index];
    }
  }
  // Column k's rows first, first + kSlices, … below end (rows of run `run`), in order.
  MINRNN_HOST_DEVICE T column_sum(int64_t first, int64_t end, int64_t k, int64_t run) const {
    T sum = T(0);
    const int64_t count = end > first ? (end - first + kSlices - 1) / kSlices : 0;
    const T b = Gelu && count > 0 ? static_cast<T>(bias[run * width + k]) : T(0);
    walk_in_chunks<kChunk>(
        count,
        [&](int64_t n) {
          const int64_t i = (first + n * kSlices) * width + k;
          return Pair<T>{static_cast<T>(in[i]), Gelu ? static_cast<T>(pre[i]) : T(0)};
        },
        [&](int64_t n, Pair<T> v) {
          const T x = Gelu ? v.a * gelu_at(v.b + b).slope : v.a;
          if (Gelu) product[(first + n * kSlices) * width + k] = x;
          sum = sum + x;
        });
    return sum;
  }
};

}  // namespace minrnn::core::grid
