// Host side of causal attention's probability kernels (attention_probs_cuda.h). Built only with
// CUDA.
#include "ops/attention_probs_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <initializer_list>

#include "kernels/cuda/attention_probs.h"

namespace minrnn::core {
namespace {

// A pack's runs' rows (dropout bases one a run: ops/dropout.h, next_runs_dropout): each run's.
int64_t rows_per_run(const torch::Tensor& rows, const PassDropout& dropout) {
  return dropout.base.defined() && dropout.base.numel() > 1 ? rows.size(0) / dropout.base.numel()
                                                            : 0;
}

// The rows' pitch, which every array of one launch shares (one index reads them all).
int64_t shared_pitch(const torch::Tensor& rows,
                     std::initializer_list<const torch::Tensor*> others) {
  for (const torch::Tensor* t : others) {
    TORCH_CHECK(t->strides() == rows.strides(), "attention probabilities: rows of pitch ",
                t->stride(0), " beside rows of pitch ", rows.stride(0));
  }
  return rows.stride(0);
}

}  // namespace

void attention_probs_cuda(const torch::Tensor& scores, const QueryRows& queries,
                          const PassDropout& dropout, float scale, torch::Tensor& probs,
                          torch::Tensor& out) {
  c10::cuda::CUDAGuard guard(scores.device());
  const kernels::AttentionProbsArgs args{scores.size(0),
                                         scores.size(1),
                                         shared_pitch(scores, {&probs, &out}),
                                         dropout.dropout,
                                         dropout.base_pointer(),
                                         queries,
                                         scale,
                                         scores.data_ptr<float>(),
                                         probs.data_ptr<float>(),
                                         out.data_ptr<float>(),
                                         rows_per_run(scores, dropout)};
  C10_CUDA_CHECK(kernels::attention_probs_forward(args, at::cuda::getCurrentCUDAStream()));
}

void attention_probs_backward_cuda(const torch::Tensor& probs, const torch::Tensor& out_grad,
                                   const PassDropout& dropout, float scale,
                                   torch::Tensor& scores_grad) {
  c10::cuda::CUDAGuard guard(probs.device());
  const kernels::AttentionProbsGradArgs args{probs.size(0),
                                             probs.size(1),
                                             shared_pitch(probs, {&out_grad, &scores_grad}),
                                             dropout.dropout,
                                             dropout.base_pointer(),
                                             scale,
                                             probs.data_ptr<float>(),
                                             out_grad.data_ptr<float>(),
                                             scores_grad.data_ptr<float>(),
                                             rows_per_run(probs, dropout)};
  C10_CUDA_CHECK(kernels::attention_probs_backward(args, at::cuda::getCurrentCUDAStream()));
}

}  // namespace minrnn::core
