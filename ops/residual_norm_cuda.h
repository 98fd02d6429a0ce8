// Host side of a residual join's CUDA kernels (kernels/cuda/residual_norm.h), for
// ops/residual_norm.cpp. Built only with CUDA (cmake/Targets.cmake).
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "kernels/math/residual_norm_math.h"
#include "ops/dropout.h"

namespace minrnn::core {

// x (no rows: no residual), y (their rows, D) contiguous float32 on one CUDA device. {sum, normed,
// moments (rows, 2)}, one launch. gamma, beta (runs, D): a pack's runs stacked, rows / runs
// output rows each (a multiple of kernels::residual_norm_block_rows()), the dropout's base one a
// run.
struct ResidualNormCuda {
  torch::Tensor sum, normed, moments;
};
ResidualNormCuda residual_norm_cuda(const torch::Tensor& x, const torch::Tensor& y,
                                    const JoinRows& rows, const PassDropout& dropout,
                                    const torch::Tensor& gamma, const torch::Tensor& beta,
                                    float eps);
// {x_grad, y_grad, gamma_grad, beta_grad}, two launches; x_grad (undefined: no residual) and y_grad
// come in (x's and y's shapes, zeroed where no output reads) and are filled. sum_grad may be
// undefined (none).
std::vector<torch::Tensor> residual_norm_backward_cuda(
    const torch::Tensor& sum, const torch::Tensor& moments, const torch::Tensor& gamma,
    const torch::Tensor& sum_grad, const torch::Tensor& normed_grad, const JoinRows& rows,
    const PassDropout& dropout, torch::Tensor x_grad, torch::Tensor y_grad);

}  // namespace minrnn::core
