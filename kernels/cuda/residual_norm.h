// Launchers of a residual join's CUDA kernels (kernels/cuda/residual_norm_programs.h): plain
// pointers to contiguous float32 device arrays and a stream, no torch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/math/residual_norm_math.h"

namespace minrnn::core::kernels {

// rows × width out: sum, normed, moments (rows, 2); x (null: no residual, sum = dropout(y)), y in,
// their rows read through x_rows and y_rows; gamma, beta (width).
struct ResidualNormArgs {
  int64_t rows, width;
  HashedDropout dropout;      // its seed added to *seed_base when that is set
  const uint64_t* seed_base;  // device memory, or null
  float eps;
  RowMap x_rows, y_rows;
  const float *x, *y, *gamma, *beta;
  float *sum, *normed, *moments;
  // A pack's runs stacked (kernels/math/run_rows.h): rows per run (0: one run), gamma and beta
  // (runs, width), seed_base one a run.
  int64_t rows_per_run = 0;
};
cudaError_t residual_norm_forward(const ResidualNormArgs& args, cudaStream_t stream);

// From the forward's sum and moments and the outputs' gradients (sum_grad may be null: none):
// x_grad (null: no residual), y_grad (x's and y's shapes: their rows the maps read are written,
// others left as they are), gamma_grad, beta_grad (width); `partials` scratch of
// 2 · residual_norm_partial_rows(rows) · width floats. Two launches: residual_norm_backward the
// input gradients and each block's γ and β partial rows, then norm_param_grads those summed
// (nothing but the step end reads them: a side stream may take it, ops/side_work.h).
struct ResidualNormGradArgs {
  int64_t rows, width;
  HashedDropout dropout;
  const uint64_t* seed_base;
  RowMap x_rows, y_rows;
  const float *sum, *moments, *gamma, *sum_grad, *normed_grad;
  float *x_grad, *y_grad, *gamma_grad, *beta_grad, *partials;
  int64_t rows_per_run = 0;  // as ResidualNormArgs'; a multiple of the rows a block takes
};
// The rows a backward block takes: a pack's runs must fill whole blocks.
int64_t residual_norm_block_rows();
int64_t residual_norm_partial_rows(int64_t rows);
cudaError_t residual_norm_backward(const ResidualNormGradArgs& args, cudaStream_t stream);
cudaError_t norm_param_grads(const ResidualNormGradArgs& args, cudaStream_t stream);

}  // namespace minrnn::core::kernels
