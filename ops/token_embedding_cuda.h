// Host side of the token embedding's CUDA kernels (kernels/cuda/token_embedding.h), for
// ops/token_embedding.cpp. Built only with CUDA (cmake/Targets.cmake).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "kernels/math/token_embedding_math.h"

namespace minrnn::core {

// The op's tensors in one list, as its autograd function holds them: group j's input, weight and
// bias at 3j, 3j + 1, 3j + 2, then the timesteps, then the time table; contiguous, on one device.
constexpr size_t token_timesteps_at(int groups) {
  return 3 * static_cast<size_t>(groups);
}
constexpr size_t token_table_at(int groups) {
  return token_timesteps_at(groups) + 1;
}

// The tokens (B, L, D), one launch.
torch::Tensor token_embedding_cuda(const TokenLayout& shape, torch::TensorList flat);
// The gradients from the tokens' (B, L, D), two launches: a list like `flat`, holding each
// weight's, bias's and the table's (the inputs' and timesteps' undefined).
std::vector<torch::Tensor> token_embedding_backward_cuda(const TokenLayout& shape,
                                                         torch::TensorList flat,
                                                         const torch::Tensor& tokens_grad);

}  // namespace minrnn::core
