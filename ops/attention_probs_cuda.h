// Host side of causal attention's probability kernels (kernels/cuda/attention_probs.h), for
// ops/attention_probs.cpp. Built only with CUDA.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "kernels/math/attention_math.h"
#include "ops/dropout.h"

namespace minrnn::core {

// scores (rows, T) float32 on a CUDA device, rows of unit stride `scores.stride(0)` apart → probs
// and out (given, in scores' shape and pitch), one launch.
void attention_probs_cuda(const torch::Tensor& scores, const QueryRows& queries,
                          const PassDropout& dropout, float scale, torch::Tensor& probs,
                          torch::Tensor& out);
// The scores' gradient (given, probs' shape and pitch) from probs and out's gradient (the same),
// one launch.
void attention_probs_backward_cuda(const torch::Tensor& probs, const torch::Tensor& out_grad,
                                   const PassDropout& dropout, float scale,
                                   torch::Tensor& scores_grad);

}  // namespace minrnn::core
