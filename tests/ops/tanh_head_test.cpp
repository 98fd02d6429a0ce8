// The tanh head op (ops/tanh_head.h): tanh(x · wᵀ + b) and its gradients against LibTorch's
// autograd in float64 — on the CPU (LibTorch's ops), a pack's runs stacked each as it is alone, a
// weight of another rank refused by name; on CUDA (the kernels: DT's head, a pack of runs, and a
// head wider than the kernels take, which runs LibTorch's ops there too). The kernels' bodies run
// under the grid emulator in tests/kernels/tanh_head_emulated_test.cpp.
#include "ops/tanh_head.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "ops/run_axis.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

struct Head {
  torch::Tensor x, w, b, dy;
};

// x (batch, K, width) as DT's state tokens, w (runs…, outputs, width).
Head random_head(int64_t batch, int64_t width, int64_t outputs, int64_t runs = 0) {
  torch::manual_seed(batch * width + outputs);
  const auto params = [&](std::vector<int64_t> sizes) {
    if (runs > 0) sizes.insert(sizes.begin(), runs);
    return torch::randn(sizes);
  };
  return {torch::randn({batch, 20, width}), params({outputs, width}) * 0.2, params({outputs}) * 0.5,
          torch::randn({batch, 20, outputs})};
}

// The op on `device` against tanh(linear) in float64 on the CPU: y and every gradient.
void expect_head_matches(const Head& h, const torch::Device& device, double tolerance) {
  const auto leaf = [](const torch::Tensor& t, const torch::TensorOptions& to) {
    return t.to(to, /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
  };
  const auto on = torch::TensorOptions().device(device);
  auto x = leaf(h.x, on), w = leaf(h.w, on), b = leaf(h.b, on);
  const torch::Tensor y = tanh_head(x, w, b);
  y.backward(h.dy.to(device));
  const auto in_double = torch::TensorOptions().dtype(torch::kDouble);
  auto xd = leaf(h.x, in_double), wd = leaf(h.w, in_double), bd = leaf(h.b, in_double);
  const torch::Tensor yd = torch::tanh(torch::linear(xd, wd, bd));
  yd.backward(h.dy.to(torch::kDouble));
  EXPECT_LT(rel_err(y.detach(), yd.detach()), tolerance);
  EXPECT_LT(rel_err(x.grad(), xd.grad()), tolerance);
  EXPECT_LT(rel_err(w.grad(), wd.grad()), tolerance);
  EXPECT_LT(rel_err(b.grad(), bd.grad()), tolerance);
}

// Each run of a stacked head against that run's head alone, on `device`.
void expect_runs_each_alone(const Head& pack, int64_t runs, const torch::Device& device,
                            double tolerance) {
  const torch::Tensor y = tanh_head(pack.x.to(device), pack.w.to(device), pack.b.to(device));
  for (int64_t r = 0; r < runs; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const torch::Tensor alone =
        torch::tanh(torch::linear(run_rows(pack.x, runs, r).to(torch::kDouble),
                                  pack.w[r].to(torch::kDouble), pack.b[r].to(torch::kDouble)));
    EXPECT_LT(rel_err(run_rows(y, runs, r), alone), tolerance);
  }
}

TEST(TanhHead, IsTheLinearsTanhAndItsGradients) {
  expect_head_matches(random_head(8, 64, 3), torch::kCPU, 1e-6);
  expect_runs_each_alone(random_head(6, 64, 3, 3), 3, torch::kCPU, 1e-6);
}

TEST(TanhHead, AWeightOfAnotherRankIsRefusedByName) {
  try {
    tanh_head(torch::zeros({2, 4}), torch::zeros({1, 1, 3, 4}), torch::zeros({3}));
    FAIL() << "a 4-D weight was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tanh_head's weight"), std::string::npos) << e.what();
  }
}

TEST(TanhHeadCuda, IsTheLinearsTanhAndItsGradients) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  SCOPED_TRACE("DT's action head");
  expect_head_matches(random_head(64, 128, 3), torch::kCUDA, 1e-5);
  SCOPED_TRACE("the widest rows the kernels take, at their most outputs");
  expect_head_matches(random_head(4, 256, 4), torch::kCUDA, 1e-5);
  SCOPED_TRACE("halfcheetah's and walker2d's 6 actions");
  expect_head_matches(random_head(64, 128, 6), torch::kCUDA, 1e-5);
  SCOPED_TRACE("more outputs than the kernels take: LibTorch's ops");
  expect_head_matches(random_head(4, 64, 9), torch::kCUDA, 1e-5);
  SCOPED_TRACE("more terms than the kernels take: LibTorch's ops");
  expect_head_matches(random_head(4, 256, 6), torch::kCUDA, 1e-5);
  SCOPED_TRACE("a pack's runs stacked");
  expect_runs_each_alone(random_head(6, 128, 6, 3), 3, torch::kCUDA, 1e-5);
}

}  // namespace
}  // namespace minrnn::core
