// Finite-difference gradient check for float64 functions of several tensors (LibTorch's C++ API has
// no gradcheck). The scalar loss is a fixed random projection of the outputs, so every output
// matters.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace minrnn::testing {

using TensorFn = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>&)>;

inline void expect_gradients_match(const TensorFn& fn, std::vector<torch::Tensor> inputs,
                                   double eps = 1e-6, double tol = 1e-6) {
  for (auto& x : inputs) x = x.detach().to(torch::kDouble).requires_grad_(true);
  std::vector<torch::Tensor> outs = fn(inputs);
  std::vector<torch::Tensor> weights;
  torch::Tensor loss = torch::zeros({}, torch::kDouble);
  for (auto& o : outs) {
    weights.push_back(torch::randn_like(o));
    loss = loss + (o * weights.back()).sum();
  }
  std::vector<torch::Tensor> analytic =
      torch::autograd::grad({loss}, inputs, {}, false, false, true);
  torch::NoGradGuard no_grad;
  auto loss_at = [&](const std::vector<torch::Tensor>& xs) {
    auto os = fn(xs);
    double total = 0;
    for (size_t i = 0; i < os.size(); ++i) total += (os[i] * weights[i]).sum().item<double>();
    return total;
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<torch::Tensor> xs;
    for (auto& x : inputs) xs.push_back(x.detach().clone());
    auto flat = xs[k].view(-1);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double orig = flat[i].item<double>();
      flat[i] = orig + eps;
      const double up = loss_at(xs);
      flat[i] = orig - eps;
      const double down = loss_at(xs);
      flat[i] = orig;
      const double numeric = (up - down) / (2 * eps);
      const double got = analytic[k].defined() ? analytic[k].view(-1)[i].item<double>() : 0.0;
      ASSERT_NEAR(got, numeric, tol * std::max(1.0, std::abs(numeric)))
          << "input " << k << " element " << i;
    }
  }
}

}  // namespace minrnn::testing
