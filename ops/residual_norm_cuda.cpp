// Host side of a residual join's CUDA kernels (residual_norm_cuda.h). Built only with CUDA.
#include "ops/residual_norm_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda/residual_norm.h"
#include "ops/side_work.h"

namespace minrnn::core {
namespace {

// A pack's runs stacked (gamma (runs, D)): each run's output rows; 0 for one run's join.
int64_t rows_per_run(const JoinRows& rows, const torch::Tensor& gamma) {
  return gamma.dim() == 2 ? rows.rows / gamma.size(0) : 0;
}

}  // namespace

ResidualNormCuda residual_norm_cuda(const torch::Tensor& x, const torch::Tensor& y,
                                    const JoinRows& rows, const PassDropout& dropout,
                                    const torch::Tensor& gamma, const torch::Tensor& beta,
                                    float eps) {
  c10::cuda::CUDAGuard guard(y.device());
  const int64_t width = y.size(1);
  const auto options = y.options();
  ResidualNormCuda out{torch::empty({rows.rows, width}, options),
                       torch::empty({rows.rows, width}, options),
                       torch::empty({rows.rows, 2}, options)};
  const kernels::ResidualNormArgs args{rows.rows,
                                       width,
                                       dropout.dropout,
                                       dropout.base_pointer(),
                                       eps,
                                       rows.x,
                                       rows.y,
                                       x.numel() > 0 ? x.data_ptr<float>() : nullptr,
                                       y.data_ptr<float>(),
                                       gamma.data_ptr<float>(),
                                       beta.data_ptr<float>(),
                                       out.sum.data_ptr<float>(),
                                       out.normed.data_ptr<float>(),
                                       out.moments.data_ptr<float>(),
                                       rows_per_run(rows, gamma)};
  C10_CUDA_CHECK(kernels::residual_norm_forward(args, at::cuda::getCurrentCUDAStream()));
  return out;
}

std::vector<torch::Tensor> residual_norm_backward_cuda(
    const torch::Tensor& sum, const torch::Tensor& moments, const torch::Tensor& gamma,
    const torch::Tensor& sum_grad, const torch::Tensor& normed_grad, const JoinRows& rows,
    const PassDropout& dropout, torch::Tensor x_grad, torch::Tensor y_grad) {
  c10::cuda::CUDAGuard guard(sum.device());
  const int64_t width = sum.size(1);
  std::vector<torch::Tensor> grads{std::move(x_grad), std::move(y_grad), {}, {}};
  torch::Tensor partials =
      torch::empty({2 * kernels::residual_norm_partial_rows(rows.rows), width}, sum.options());
  const kernels::ResidualNormGradArgs args{
      rows.rows,
      width,
      dropout.dropout,
      dropout.base_pointer(),
      rows.x,
      rows.y,
      sum.data_ptr<float>(),
      moments.data_ptr<float>(),
      gamma.data_ptr<float>(),
      sum_grad.defined() ? sum_grad.data_ptr<float>() : nullptr,
      normed_grad.data_ptr<float>(),
      grads[0].defined() ? grads[0].data_ptr<float>() : nullptr,
      grads[1].data_ptr<float>(),
      nullptr,
      nullptr,
      partials.data_ptr<float>(),
      rows_per_run(rows, gamma)};
  C10_CUDA_CHECK(kernels::residual_norm_backward(args, at::cuda::getCurrentCUDAStream()));
  // γ's and β's gradients from the partials, beside the rest of the backward.
  const auto gamma_beta = beside({partials}, [&] {
    std::vector<torch::Tensor> made{torch::empty_like(gamma), torch::empty_like(gamma)};
    kernels::ResidualNormGradArgs sums = args;
    sums.gamma_grad = made[0].data_ptr<float>();
    sums.beta_grad = made[1].data_ptr<float>();
    C10_CUDA_CHECK(kernels::norm_param_grads(sums, at::cuda::getCurrentCUDAStream()));
    return made;
  });
  grads[2] = gamma_beta[0];
  grads[3] = gamma_beta[1];
  return grads;
}

}  // namespace minrnn::core
