// The CUDA element-wise kernels: the phase programs of pointwise_programs.h and
// step_end_programs.h under
// kernels/cuda/launch.cuh's phase loop. Built with --fmad=false (core/CMakeLists.txt): no product
// is contracted into an FMA, so each rounds as the CPU loops' do.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pointwise.h"
#include "kernels/cuda/pointwise_programs.h"
#include "kernels/cuda/step_end_programs.h"

namespace minrnn::core::kernels {
namespace {

using grid::DeviceMemory;

// Each batch of up to Program::kTensors of `count` tensors in one launch: `add(k, t)` appends
// tensor t to a copy of `first`, `launched(k)` follows each launch.
template <typename Program, typename Add, typename Launched>
cudaError_t launch_batches(const Program& first, int count, cudaStream_t stream, Add add,
                           Launched launched) {
  static_assert(sizeof(Program) <= 4096, "a kernel's arguments: 4 KB before CUDA 12.1");
  for (int start = 0; start < count; start += Program::kTensors) {
    Program k = first;
    for (int t = start; t < count && t < start + Program::kTensors; ++t) add(k, t);
    if (k.blocks() == 0) continue;
    if (const cudaError_t err = launch(k, stream); err != cudaSuccess) return err;
    launched(k);
  }
  return cudaSuccess;
}

template <typename T>
grid::DropoutAdd<T, DeviceMemory> dropout_program(const DropoutAddArgs& a) {
  const T* x = static_cast<const T*>(a.x);
  return {{a.n},
          a.seed,
          a.seed_base,
          a.threshold,
          static_cast<T>(a.scale),
          x != nullptr,
          x,
          static_cast<const T*>(a.y),
          static_cast<T*>(a.out)};
}
template <typename T>
grid::BiasGelu<T, DeviceMemory> bias_gelu_program(const BiasGeluArgs& a) {
  grid::BiasGelu<T, DeviceMemory> k{};
  k.n = a.n, k.width = a.width, k.rows_per_run = a.rows_per_run;
  k.pre = static_cast<const T*>(a.pre), k.bias = static_cast<const T*>(a.bias);
  k.activated = static_cast<T*>(a.activated);
  return k.prepared();
}
// One pass of the column sums (ColumnSums<T, Gelu>) over `rows` rows of `in` into `out`; returns
// the partial rows it left (one a run: the last pass).
template <typename T, bool Gelu>
cudaError_t column_sums_pass(const ColumnSumsArgs& a, const T* in, int64_t rows, T* out,
                             int64_t* tiles, cudaStream_t stream) {
  grid::ColumnSums<T, DeviceMemory, Gelu> k{};
  k.rows = rows, k.width = a.width, k.in = in, k.runs = a.runs, k.sums_out = out;
  k.pre = static_cast<const T*>(a.pre), k.bias = static_cast<const T*>(a.bias);
  k.product = static_cast<T*>(a.product);
  *tiles = k.tiles();
  return launch(k, stream);
}
// Each pass sums tiles of rows into partial rows, the next sums those, until one row is left:
// the partial rows of pass n go to scratch, one level after another, the last row to sums.
template <typename T>
cudaError_t column_sums_of(const ColumnSumsArgs& a, cudaStream_t stream) {
  using Plain = grid::ColumnSums<T, DeviceMemory>;
  const T* in = static_cast<const T*>(a.in);
  T* scratch = static_cast<T*>(a.scratch);
  for (int64_t rows = a.rows, pass = 0;; ++pass) {
    const bool last = Plain::tiles_of(rows / a.runs) <= 1;
    T* out = last ? static_cast<T*>(a.sums) : scratch;
    int64_t tiles = 0;
    const cudaError_t err = pass == 0 && a.pre != nullptr
                                ? column_sums_pass<T, true>(a, in, rows, out, &tiles, stream)
                                : column_sums_pass<T, false>(a, in, rows, out, &tiles, stream);
    if (err != cudaSuccess || last) return err;
    in = scratch, scratch += tiles * a.width, rows = tiles;
  }
}

}  // namespace

cudaError_t dropout_add(const DropoutAddArgs& a, cudaStream_t stream) {
  return a.float64 ? launch(dropout_program<double>(a), stream)
                   : launch(dropout_program<float>(a), stream);
}
cudaError_t bias_gelu(const BiasGeluArgs& a, cudaStream_t stream) {
  return a.float64 ? launch(bias_gelu_program<double>(a), stream)
                   : launch(bias_gelu_program<float>(a), stream);
}
int64_t column_sums_scratch(int64_t rows, int64_t width, int64_t runs) {
  using Program = grid::ColumnSums<float, DeviceMemory>;
  int64_t partial_rows = 0;  // every pass's but the last's, as column_sums_of writes them
  for (int64_t left = Program::tiles_of(rows / runs); left > 1; left = Program::tiles_of(left)) {
    partial_rows += runs * left;
  }
  return partial_rows * width;
}
cudaError_t column_sums(const ColumnSumsArgs& a, cudaStream_t stream) {
  return a.float64 ? column_sums_of<double>(a, stream) : column_sums_of<float>(a, stream);
}
cudaError_t adamw_step(const AdamWTensor* tensors, int count, const AdamWUpdate& update,
                       const AdamWStepScalars* scalars, cudaStream_t stream, int64_t runs) {
  using Program = grid::AdamWStep<DeviceMemory>;
  const auto add = [&](Program& k, int t) {
    const AdamWTensor& x = tensors[t];
    k.add(x.n, x.p, x.g, x.m, x.v, x.p, x.m, x.v);
  };
  Program first{update, scalars};
  first.tensors.runs = runs;
  return launch_batches(first, count, stream, add, [](const Program&) {});
}

cudaError_t masked_mse_forward(const MaskedMseArgs& a, float* loss, float* denominator,
                               cudaStream_t stream) {
  const grid::MaskedMseForward<DeviceMemory> k{a.rows, a.width, a.predicted, a.target,
                                               a.mask, loss,    denominator, a.runs};
  return launch(k, stream);
}
cudaError_t masked_mse_backward(const MaskedMseArgs& a, const float* grad_loss,
                                const float* denominator, float* grad, cudaStream_t stream) {
  const grid::MaskedMseBackward<DeviceMemory> k{
      {a.rows * a.width}, a.width, a.predicted,
      a.target,           a.mask,  grad_loss,
      denominator,        grad,    a.runs > 1 ? a.rows / a.runs : 0};
  return launch(k, stream);
}

int64_t square_sum_partials(const int64_t* sizes, int count) {
  using Blocks = decltype(grid::SquareSums<DeviceMemory>::tensors);
  int64_t partials = 0;
  for (int t = 0; t < count; ++t) partials += Blocks::blocks_of(sizes[t]);
  return partials;
}

cudaError_t end_step(const EndStepArgs& a, cudaStream_t stream) {
  using Sums = grid::SquareSums<DeviceMemory>;
  int64_t written = 0;  // a run's partial sums, over the launches so far
  const auto add = [&](Sums& k, int t) {
    k.first_partial = written;
    k.add(a.sizes[t], a.grads[t]);
  };
  Sums first;
  first.partials = a.partials;
  first.tensors.runs = a.runs;
  first.run_partials = square_sum_partials(a.sizes, a.count);
  const cudaError_t err = launch_batches(first, a.count, stream, add,
                                         [&](const Sums& k) { written += k.blocks() / a.runs; });
  if (err != cudaSuccess) return err;
  // In place: on the device each In and its Out are the same array.
  const grid::EndStep<DeviceMemory> k{a.clip,     written,    a.loss,    a.partials,
                                      a.scalars,  a.step,     a.verdict, a.scalars,
                                      a.loss_out, a.norm_out, a.verdict, a.runs};
  return launch(k, stream);
}

}  // namespace minrnn::core::kernels
