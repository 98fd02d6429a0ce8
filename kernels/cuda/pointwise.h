// Launchers of the CUDA element-wise kernels (kernels/cuda/pointwise.cu): plain pointers and a
// stream, no torch, as kernels/cuda/scan.h. Contiguous arrays of n elements on the stream's device;
// `float64` picks double, else float.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/math/adamw_math.h"

namespace minrnn::core::kernels {

struct DropoutAddArgs {
  const void* x;  // null: out = keep · y · scale
  const void* y;
  void* out;
  int64_t n;
  uint64_t seed;              // added to *seed_base when that is set
  const uint64_t* seed_base;  // device memory, or null
  int64_t threshold;
  double scale;
  bool float64;
};
cudaError_t dropout_add(const DropoutAddArgs& args, cudaStream_t stream);

// The fused MLP's forward pass: pre (rows, width) + bias (width) → activated = GELU of it.
// rows_per_run > 0: a pack's runs stacked, bias (runs, width), each run's rows its own row.
struct BiasGeluArgs {
  const void *pre, *bias;
  void* activated;
  int64_t n, width;
  bool float64;
  int64_t rows_per_run = 0;
};
cudaError_t bias_gelu(const BiasGeluArgs& args, cudaStream_t stream);

// The column sums of in (rows, width) into sums (width), in a fixed order; with pre set (in's
// shape, bias beside it as BiasGelu's), of in · GELU′(pre + bias), the products written to product
// (the MLP's GELU backward and its bias gradient in one pass). scratch: column_sums_scratch(rows,
// width) elements for the partial rows (none when rows fit one tile). ceil(log₂₅₆ rows) launches,
// one up to 256 rows, two up to 65 536. With runs > 1, the rows are that many runs' one after the
// other, each summed on its own: sums (runs, width).
struct ColumnSumsArgs {
  const void *in, *pre, *bias;
  void *product, *sums, *scratch;
  int64_t rows, width;
  bool float64;
  int64_t runs = 1;
};
int64_t column_sums_scratch(int64_t rows, int64_t width, int64_t runs = 1);
cudaError_t column_sums(const ColumnSumsArgs& args, cudaStream_t stream);

// One AdamW step of `count` float32 parameter tensors, in place (each p, m, v of its n elements),
// in as few launches as the kernel takes tensors: with `update`, or, when `scalars` (device
// memory) is set, with the values found there when the kernel runs.
struct AdamWTensor {
  float *p, *m, *v;
  const float* g;
  int64_t n;
};
// With runs > 1 each tensor holds a pack's stacked runs (n elements a run, one run after the
// other), run r's stepped with scalars[r].
cudaError_t adamw_step(const AdamWTensor* tensors, int count, const AdamWUpdate& update,
                       const AdamWStepScalars* scalars, cudaStream_t stream, int64_t runs = 1);

// A training step's end (kernels/math/adamw_math.h, end_of_step), in place: the squares of the
// `count` float32 gradients (each of sizes[i] elements; none where nothing clips) summed a block
// at a time into `partials` (square_sum_partials(sizes, count) floats), then one block takes
// the global norm from those and ends the step. Every pointer but grads and sizes (host arrays
// of device pointers and sizes) to device memory: the step's loss, its number, its scalars
// (kAdamWStepScalarCount floats), its verdict (first bad step, what), and where the loss and the
// norm are kept. ceil(count / 48) + 1 launches.
struct EndStepArgs {
  const float* loss;
  const float* const* grads;
  const int64_t* sizes;
  int count;
  float* partials;
  const int64_t* step;
  float* scalars;
  int64_t* verdict;
  float *loss_out, *norm_out;
  float clip;
  // A pack's runs stacked: each gradient `runs` runs of sizes[i] elements, and the loss, number,
  // scalars, verdict and outputs one a run; partials runs · square_sum_partials(sizes, count).
  int64_t runs = 1;
};
int64_t square_sum_partials(const int64_t* sizes, int count);
cudaError_t end_step(const EndStepArgs& args, cudaStream_t stream);

// DT's masked MSE (kernels/math/masked_mse_math.h) of float32 (rows, width) predictions against
// targets, mask (rows): the loss and its denominator into two device floats; and the gradient
// (rows, width) from the loss's gradient (a device float) and that denominator.
// With runs > 1 the rows are a pack's runs' (rows / runs each): a loss and denominator a run.
struct MaskedMseArgs {
  const float *predicted, *target, *mask;
  int64_t rows, width;
  int64_t runs = 1;
};
cudaError_t masked_mse_forward(const MaskedMseArgs& args, float* loss, float* denominator,
                               cudaStream_t stream);
cudaError_t masked_mse_backward(const MaskedMseArgs& args, const float* grad_loss,
                                const float* denominator, float* grad, cudaStream_t stream);

}  // namespace minrnn::core::kernels
