// Launchers of a tanh head's CUDA kernels (kernels/cuda/tanh_head_programs.h): plain pointers to
// contiguous float32 device arrays and a stream, no torch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace minrnn::core::kernels {

// y (rows, outputs) = tanh(x (rows, width) · weightᵀ + bias), weight (outputs, width), bias
// (outputs); outputs ≤ tanh_head_max_outputs(), width ≤ tanh_head_max_width(), outputs · width ≤
// tanh_head_max_terms(). A pack's runs
// stacked: rows_per_run > 0, weight (runs, outputs, width), bias (runs, outputs).
struct TanhHeadArgs {
  int64_t rows, width, outputs;
  const float *x, *weight, *bias;
  int64_t rows_per_run = 0;
};
int64_t tanh_head_max_outputs();
int64_t tanh_head_max_width();
int64_t tanh_head_max_terms();
cudaError_t tanh_head_forward(const TanhHeadArgs& args, float* y, cudaStream_t stream);

// From the forward's y and its gradient: x_grad (rows, width), and each backward block's partial
// row into partials (tanh_head_partial_rows(rows) rows of outputs · width + outputs floats: the
// weight gradient's terms, then the bias's), which column sums finish (ColumnSums, one run a
// partial row's run). A pack's rows_per_run must be a multiple of tanh_head_block_rows().
int64_t tanh_head_block_rows();
int64_t tanh_head_partial_rows(int64_t rows);
cudaError_t tanh_head_backward(const TanhHeadArgs& args, const float* y, const float* y_grad,
                               float* x_grad, float* partials, cudaStream_t stream);

}  // namespace minrnn::core::kernels
