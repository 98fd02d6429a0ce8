// Host side of the CUDA element-wise kernels (pointwise_cuda.h). Built only with CUDA.
#include "ops/pointwise_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/pointwise.h"

namespace minrnn::core {

torch::Tensor dropout_add_cuda(const torch::Tensor& x_in, const torch::Tensor& y_in, uint64_t seed,
                               const torch::Tensor& seed_base, int64_t threshold, double scale) {
  c10::cuda::CUDAGuard guard(y_in.device());
  const torch::Tensor y = y_in.contiguous();
  const torch::Tensor x = x_in.defined() ? x_in.contiguous() : x_in;
  torch::Tensor out = torch::empty_like(y, torch::MemoryFormat::Contiguous);
  const kernels::DropoutAddArgs args{
      x.defined() ? x.data_ptr() : nullptr,
      y.data_ptr(),
      out.data_ptr(),
      y.numel(),
      seed,
      seed_base.defined() ? reinterpret_cast<const uint64_t*>(seed_base.data_ptr()) : nullptr,
      threshold,
      scale,
      y.scalar_type() == torch::kDouble};
  C10_CUDA_CHECK(kernels::dropout_add(args, at::cuda::getCurrentCUDAStream()));
  return out;
}

torch::Tensor bias_gelu_cuda(const torch::Tensor& pre_in, const torch::Tensor& bias_in) {
  c10::cuda::CUDAGuard guard(pre_in.device());
  const torch::Tensor pre = pre_in.contiguous(), bias = bias_in.contiguous();
  torch::Tensor activated = torch::empty_like(pre);
  const int64_t width = pre.size(-1), rows = pre.numel() / width;
  const kernels::BiasGeluArgs args{pre.data_ptr(),
                                   bias.data_ptr(),
                                   activated.data_ptr(),
                                   pre.numel(),
                                   width,
                                   pre.scalar_type() == torch::kDouble,
                                   bias.dim() == 2 ? rows / bias.size(0) : 0};
  C10_CUDA_CHECK(kernels::bias_gelu(args, at::cuda::getCurrentCUDAStream()));
  return activated;
}

namespace {

// The column sums of in (rows, width), of in · GELU′(pre + bias) where pre is defined (the
// products into product): every tensor contiguous, of in's device and dtype. runs > 1: each run's
// rows on their own, (runs, width). Into `into` where given.
torch::Tensor column_sums_into(const torch::Tensor& in, const torch::Tensor& pre,
                               const torch::Tensor& bias, const torch::Tensor& product,
                               int64_t runs, const torch::Tensor& into = {}) {
  c10::cuda::CUDAGuard guard(in.device());
  const int64_t rows = in.size(0), width = in.size(1);
  const std::vector<int64_t> shape =
      runs == 1 ? std::vector<int64_t>{width} : std::vector<int64_t>{runs, width};
  if (into.defined() && (!into.is_contiguous() || into.numel() != runs * width ||
                         into.scalar_type() != in.scalar_type() || into.device() != in.device())) {
    throw std::invalid_argument("column sums: `into` is not a contiguous tensor of runs × width");
  }
  torch::Tensor sums = into.defined() ? into : torch::empty(shape, in.options());
  if (rows == 0) return sums.zero_();
  if (rows % runs != 0) throw std::invalid_argument("column sums: rows do not split into runs");
  torch::Tensor scratch =
      torch::empty({kernels::column_sums_scratch(rows, width, runs)}, in.options());
  const kernels::ColumnSumsArgs args{in.data_ptr(),
                                     pre.defined() ? pre.data_ptr() : nullptr,
                                     bias.defined() ? bias.data_ptr() : nullptr,
                                     product.defined() ? product.data_ptr() : nullptr,
                                     sums.data_ptr(),
                                     scratch.data_ptr(),
                                     rows,
                                     width,
                                     in.scalar_type() == torch::kDouble,
                                     runs};
  C10_CUDA_CHECK(kernels::column_sums(args, at::cuda::getCurrentCUDAStream()));
  return sums;
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> gelu_backward_cuda(const torch::Tensor& d_activated_in,
                                                           const torch::Tensor& pre_in,
                                                           const torch::Tensor& bias_in,
                                                           int64_t runs) {
  const torch::Tensor d_activated = d_activated_in.contiguous(), pre = pre_in.contiguous(),
                      bias = bias_in.contiguous();
  torch::Tensor d_hidden = torch::empty_like(pre);
  torch::Tensor d_bias = column_sums_into(d_activated, pre, bias, d_hidden, runs);
  return {d_hidden, d_bias};
}

torch::Tensor column_sums_cuda(const torch::Tensor& rows, int64_t runs, const torch::Tensor& into) {
  return column_sums_into(rows.contiguous(), {}, {}, {}, runs, into);
}

void adamw_step_cuda(const std::vector<AdamWTensors>& params, const AdamWUpdate& update,
                     const torch::Tensor& scalars, int64_t runs) {
  if (params.empty()) return;
  c10::cuda::CUDAGuard guard(params[0].p.device());
  std::vector<kernels::AdamWTensor> tensors;
  for (const auto& x : params) {
    tensors.push_back({x.p.data_ptr<float>(), x.m.data_ptr<float>(), x.v.data_ptr<float>(),
                       x.g.data_ptr<float>(), x.p.numel() / runs});
  }
  const auto* device_scalars =
      scalars.defined() ? reinterpret_cast<const AdamWStepScalars*>(scalars.data_ptr<float>())
                        : nullptr;
  C10_CUDA_CHECK(kernels::adamw_step(tensors.data(), static_cast<int>(tensors.size()), update,
                                     device_scalars, at::cuda::getCurrentCUDAStream(), runs));
}

std::pair<torch::Tensor, torch::Tensor> masked_mse_cuda(const torch::Tensor& p,
                                                        const torch::Tensor& t,
                                                        const torch::Tensor& mask, int64_t width,
                                                        int64_t runs) {
  c10::cuda::CUDAGuard guard(p.device());
  const auto scalar = p.options().dtype(torch::kFloat);
  const std::vector<int64_t> shape = runs > 1 ? std::vector<int64_t>{runs} : std::vector<int64_t>{};
  torch::Tensor loss = torch::empty(shape, scalar), denominator = torch::empty(shape, scalar);
  const kernels::MaskedMseArgs args{
      p.data_ptr<float>(), t.data_ptr<float>(), mask.data_ptr<float>(), mask.numel(), width, runs};
  C10_CUDA_CHECK(kernels::masked_mse_forward(args, loss.data_ptr<float>(),
                                             denominator.data_ptr<float>(),
                                             at::cuda::getCurrentCUDAStream()));
  return {loss, denominator};
}

torch::Tensor masked_mse_backward_cuda(const torch::Tensor& p, const torch::Tensor& t,
                                       const torch::Tensor& mask, int64_t width,
                                       const torch::Tensor& grad_loss,
                                       const torch::Tensor& denominator) {
  c10::cuda::CUDAGuard guard(p.device());
  torch::Tensor grad = torch::empty_like(p);
  const kernels::MaskedMseArgs args{
      p.data_ptr<float>(), t.data_ptr<float>(), mask.data_ptr<float>(), mask.numel(), width,
      denominator.numel()};
  C10_CUDA_CHECK(kernels::masked_mse_backward(args, grad_loss.data_ptr<float>(),
                                              denominator.data_ptr<float>(), grad.data_ptr<float>(),
                                              at::cuda::getCurrentCUDAStream()));
  return grad;
}

void end_step_cuda(const StepEndTensors& t, float clip, int64_t runs) {
  c10::cuda::CUDAGuard guard(t.loss.device());
  std::vector<const float*> grads;
  std::vector<int64_t> sizes;
  if (clip > 0) {  // else no norm: nothing to sum
    for (const torch::Tensor& g : t.grads) {
      grads.push_back(g.data_ptr<float>());
      sizes.push_back(g.numel() / runs);
    }
  }
  const int count = static_cast<int>(grads.size());
  const int64_t partials = runs * kernels::square_sum_partials(sizes.data(), count);
  torch::Tensor partial_sums = torch::empty({std::max<int64_t>(partials, 1)}, t.loss.options());
  const kernels::EndStepArgs args{t.loss.data_ptr<float>(),
                                  grads.data(),
                                  sizes.data(),
                                  count,
                                  partial_sums.data_ptr<float>(),
                                  t.step.data_ptr<int64_t>(),
                                  t.scalars.data_ptr<float>(),
                                  t.verdict.data_ptr<int64_t>(),
                                  t.loss_kept.data_ptr<float>(),
                                  t.norm_kept.data_ptr<float>(),
                                  clip,
                                  runs};
  C10_CUDA_CHECK(kernels::end_step(args, at::cuda::getCurrentCUDAStream()));
}

}  // namespace minrnn::core
