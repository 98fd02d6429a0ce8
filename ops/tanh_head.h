// A Linear to a few outputs and its tanh, tanh(x · wᵀ + b), as one op: DT's action head
// (rl/decision_model.cpp). On CUDA, for float32 rows of at most 256 channels, at most 8 outputs
// and at most 1 024 of both (6 actions at 128 channels: halfcheetah, walker2d), the kernels of
// kernels/cuda/tanh_head_programs.h: one launch forward and two backward (the input gradient with
// each block's partial sums of the parameters' gradients, then those summed), where cuBLAS's
// products on rows 3 floats wide took its unaligned kernels (one forward, two backward: ~41 µs of
// an H200's step, 2026-11-27 20:33), and the tanh and the bias's column sums launches of their own.
// Elsewhere — the CPU included, whose steps keep their bits — the same in LibTorch ops:
// core::affine, then torch::tanh.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// x (…, in), w (outputs, in), b (outputs): (…, outputs). A pack's runs stacked (ops/run_axis.h):
// w (P, outputs, in), b (P, outputs), x's dim 0 the runs' rows one after the other.
torch::Tensor tanh_head(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);

}  // namespace minrnn::core
