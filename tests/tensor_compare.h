// Comparisons of tensors the compute tests share, and their values as plain vectors.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace minrnn::testing {

// max |a − b| over all elements.
inline double max_err(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// ‖got − want‖ / ‖want‖ in float64 (`want` on the CPU, `got` on any device), for a result checked
// against a float64 reference.
inline double rel_err(const torch::Tensor& got, const torch::Tensor& want) {
  return (got.to(torch::kCPU).to(torch::kDouble) - want).norm().item<double>() /
         std::max(want.norm().item<double>(), 1e-30);
}

// A tensor's values as T (converted when its dtype differs), in row-major order.
template <typename T>
std::vector<T> values_of(const torch::Tensor& t) {
  const torch::Tensor c = t.to(c10::CppTypeToScalarType<T>::value).contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

// Run r's part of a pack's output, the runs' parts one after the other, `n` values each.
template <typename T>
std::vector<T> run_part(const std::vector<T>& values, int64_t run, size_t n) {
  const auto first = values.begin() + static_cast<int64_t>(static_cast<size_t>(run) * n);
  return std::vector<T>(first, first + static_cast<int64_t>(n));
}

// Float values (an emulated kernel's output buffer, say) as a float32 tensor of `shape`.
inline torch::Tensor tensor_from(const std::vector<float>& values, torch::IntArrayRef shape) {
  return torch::tensor(values).view(shape);
}

}  // namespace minrnn::testing
