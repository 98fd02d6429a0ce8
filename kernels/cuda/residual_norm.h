// Launchers of a residual join's CUDA kernels (kernels/cuda/residual_norm_programs.h): plain
// pointers to contiguous float32 device arrays and a stream, no torch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/math/residual_norm_math.h"

namespace minrnn::core::kernels {

// The largest row width the kernels take.
int64_t residual_norm_max_width();

// rows × width: x, y in; sum, normed out; moments (rows, 2) out; gamma, beta (width).
struct ResidualNormArgs {
  int64_t rows, width;
  ResidualDropout dropout;    // its seed added to *seed_base when that is set
  const uint64_t* seed_base;  // device memory, or null
  float eps;
  const float *x, *y, *gamma, *beta;
  float *sum, *normed, *moments;
};
cudaError_t residual_norm_forward(const ResidualNormArgs& args, cudaStream_t stream);

// From the forward's sum and moments and the outputs' gradients (sum_grad may be null: none):
// x_grad, y_grad (rows × width), gamma_grad, beta_grad (width); `partials` scratch of
// 2 · residual_norm_partial_rows(rows) · width floats.
struct ResidualNormGradArgs {
  int64_t rows, width;
  ResidualDropout dropout;
  const uint64_t* seed_base;
  const float *sum, *moments, *gamma, *sum_grad, *normed_grad;
  float *x_grad, *y_grad, *gamma_grad, *beta_grad, *partials;
};
int64_t residual_norm_partial_rows(int64_t rows);
cudaError_t residual_norm_backward(const ResidualNormGradArgs& args, cudaStream_t stream);

}  // namespace minrnn::core::kernels
