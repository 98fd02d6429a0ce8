// Comparisons of tensors the compute tests share.
#pragma once
#include <torch/torch.h>

namespace minrnn::testing {

// max |a − b| over all elements.
inline double max_err(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace minrnn::testing
