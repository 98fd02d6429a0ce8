// Host side of the CUDA element-wise kernels (kernels/cuda/pointwise.h), for ops/dropout.cpp,
// ops/mlp.cpp and ops/fused_adamw.cpp. Built only with CUDA (cmake/Targets.cmake). CUDA
// float32/float64 tensors.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/math/adamw_math.h"
#include "ops/step_end.h"

namespace minrnn::core {

// (x +) keep · y · scale (x: undefined, or y's shape, device and dtype); the mask is the CPU
// pass's (kernels/math/dropout_math.h) for the seed `seed`, plus the value of `seed_base` (an int64
// scalar on y's device) when it is defined, read as the kernel runs.
torch::Tensor dropout_add_cuda(const torch::Tensor& x, const torch::Tensor& y, uint64_t seed,
                               const torch::Tensor& seed_base, int64_t threshold, double scale);

// GELU(pre (rows, width) + bias (width)), (rows, width). bias (runs, width): a pack's runs
// stacked (ops/run_axis.h), each run's rows its own bias.
torch::Tensor bias_gelu_cuda(const torch::Tensor& pre, const torch::Tensor& bias);
// {d_activated · GELU′(pre + bias) element by element, its column sums}: the MLP's GELU backward
// and its first bias's gradient, in one pass over d_activated and pre (and a small one over
// partial sums), GELU′ recomputed there. With runs > 1 the rows are a pack's runs'
// (ops/run_axis.h), each run's sums their own: (runs, width).
std::pair<torch::Tensor, torch::Tensor> gelu_backward_cuda(const torch::Tensor& d_activated,
                                                           const torch::Tensor& pre,
                                                           const torch::Tensor& bias,
                                                           int64_t runs = 1);
// The column sums of rows (rows, width) → (width): a Linear's bias gradient, in a fixed order.
// With runs > 1, each run's rows summed on their own: (runs, width). Written into `into` where
// given (contiguous, runs × width elements, returned in its own shape), else a new tensor.
torch::Tensor column_sums_cuda(const torch::Tensor& rows, int64_t runs = 1,
                               const torch::Tensor& into = {});

// A parameter AdamW updates: p, its gradient g and moments m, v, contiguous float32 of p's shape on
// p's device.
struct AdamWTensors {
  torch::Tensor p, g, m, v;
};
// One AdamW step of the parameters (all on one CUDA device), in place, a few launches for all:
// with `update`, or, when `scalars` is defined (kAdamWStepScalarCount float32 values on their
// device, an AdamWStepScalars), with the values it holds as the kernels run. With runs > 1 every
// parameter is a pack's stacked runs' (ops/run_axis.h) and scalars (runs, kAdamWStepScalarCount):
// run r's slices stepped with row r.
void adamw_step_cuda(const std::vector<AdamWTensors>& params, const AdamWUpdate& update,
                     const torch::Tensor& scalars, int64_t runs = 1);

// ops/step_end.h's end_step on CUDA: the gradients' squares summed a block at a time, then one
// block a run for its norm and the rest (two launches up to 48 gradients).
void end_step_cuda(const StepEndTensors& t, float clip, int64_t runs);

// ops/masked_mse.h on CUDA (contiguous float32 p, t of rows × width, mask of rows): {loss, its
// denominator max(Σ mask, 1)}, one launch; and the gradient with respect to p, one launch. With
// runs > 1, a pack's runs' rows: a loss and denominator a run, (runs).
std::pair<torch::Tensor, torch::Tensor> masked_mse_cuda(const torch::Tensor& p,
                                                        const torch::Tensor& t,
                                                        const torch::Tensor& mask, int64_t width,
                                                        int64_t runs = 1);
torch::Tensor masked_mse_backward_cuda(const torch::Tensor& p, const torch::Tensor& t,
                                       const torch::Tensor& mask, int64_t width,
                                       const torch::Tensor& grad_loss,
                                       const torch::Tensor& denominator);

}  // namespace minrnn::core
