// Host side of a tanh head's CUDA kernels (kernels/cuda/tanh_head.h), for ops/tanh_head.cpp. Built
// only with CUDA. Contiguous float32 tensors on one CUDA device.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace minrnn::core {

// The kernels' limits: outputs a row, channels a row, outputs × channels, and the rows a backward
// block takes (a pack's runs must fill whole blocks).
int64_t tanh_head_cuda_max_outputs();
int64_t tanh_head_cuda_max_width();
int64_t tanh_head_cuda_max_terms();
int64_t tanh_head_cuda_block_rows();

// tanh(x · wᵀ + b): x (rows, width), w (outputs, width) and b (outputs), or a pack's runs stacked,
// w (runs, outputs, width) and b (runs, outputs) with x's rows the runs' one after the other.
torch::Tensor tanh_head_cuda(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b);
// {x's, w's and b's gradients} from the forward's y and its gradient y_grad (y's shape).
std::vector<torch::Tensor> tanh_head_backward_cuda(const torch::Tensor& x, const torch::Tensor& w,
                                                   const torch::Tensor& y,
                                                   const torch::Tensor& y_grad);

}  // namespace minrnn::core
