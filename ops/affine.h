// A Linear layer's product as one autograd op whose forward and input gradient run on the CPU
// kernel of ops/gemm_cpu.h (the weight and bias gradients by LibTorch): the minRNN gate
// projection and the Transformer's projections. Where the kernel does not apply (GPU, float64,
// widths not a multiple of 16, AVX-512), it is torch::linear itself.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// x (…, in) · wᵀ + b, w (out, in), b (out) or undefined.
torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);

}  // namespace minrnn::core
