// minLSTM's gate logit u = softplus(−p) − softplus(−k) (= log i − log f; core/minrnn.cpp) as one
// autograd op. As two torch softplus calls, their negations and a subtraction it was 15% of a
// minLSTM training step on the CPU (LibTorch's softplus kernel does not vectorize its log1p):
// here one pass forward and one backward (∂u/∂p = −σ(−p), ∂u/∂k = σ(−k), softplus's threshold
// taken as torch takes it), reading p and k where they lie in the gate projection's output. CPU
// float32 and float64; other devices and dtypes take the torch expression it equals. Once
// differentiable.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

torch::Tensor minlstm_gate_logit(const torch::Tensor& p, const torch::Tensor& k);

// The torch expression: the reference the tests compare against, and the path off the CPU.
torch::Tensor minlstm_gate_logit_reference(const torch::Tensor& p, const torch::Tensor& k);

}  // namespace minrnn::core
