// The fused MLP op (ops/mlp.h) against the nn::Sequential it stands in for, run in float64 by
// autograd: output and the gradients of the input and all four parameters, on a 3-D input, a
// strided one (the top block's selected tokens), and without an input gradient.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ops/mlp.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

torch::nn::Sequential make_mlp(int64_t d, int64_t ratio) {
  return torch::nn::Sequential(torch::nn::Linear(d, ratio * d), torch::nn::GELU(),
                               torch::nn::Linear(ratio * d, d));
}

using testing::rel_err;

void expect_matches_float64_autograd(const torch::Tensor& x_in, bool input_grad) {
  torch::manual_seed(3);
  auto mlp = make_mlp(x_in.size(-1), 4);
  auto ref = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(mlp->clone());
  ref->to(torch::kDouble);
  torch::Tensor x = x_in.detach().clone().requires_grad_(input_grad);
  torch::Tensor x_ref = x_in.detach().to(torch::kDouble).requires_grad_(input_grad);
  torch::Tensor y = mlp_forward(mlp, x);
  torch::Tensor y_ref = ref->forward(x_ref);
  ASSERT_EQ(y.sizes(), y_ref.sizes());
  EXPECT_LT(rel_err(y, y_ref), 2e-6);
  torch::Tensor w = torch::randn(y.sizes(), torch::kDouble);
  (y * w.to(torch::kFloat)).sum().backward();
  (y_ref * w).sum().backward();
  if (input_grad) {
    EXPECT_LT(rel_err(x.grad(), x_ref.grad()), 1e-5);
  }
  const auto params = mlp->parameters(), ref_params = ref->parameters();
  ASSERT_EQ(params.size(), 4u);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_LT(rel_err(params[i].grad(), ref_params[i].grad()), 1e-5) << "parameter " << i;
  }
}

TEST(FusedMlp, MatchesTheSequentialInFloat64) {
  torch::manual_seed(1);
  // Rows past one 256-row chunk of the bias-gradient sum, and a ragged last chunk.
  expect_matches_float64_autograd(torch::randn({3, 211, 16}) * 2.0, true);
}

TEST(FusedMlp, TakesAStridedInputAndNoInputGradient) {
  torch::manual_seed(2);
  // Every third token, as the top block reads its state tokens.
  expect_matches_float64_autograd(torch::randn({4, 30, 8}).slice(1, 1, 30, 3), true);
  expect_matches_float64_autograd(torch::randn({5, 7, 8}), false);
}

TEST(FusedMlp, OtherDtypesRunTheSequential) {
  torch::manual_seed(4);
  auto mlp = make_mlp(6, 2);
  mlp->to(torch::kDouble);
  torch::Tensor x = torch::randn({2, 3, 6}, torch::kDouble);
  EXPECT_TRUE(torch::equal(mlp_forward(mlp, x), mlp->forward(x)));
}

TEST(FusedMlp, IsDeterministic) {
  torch::manual_seed(5);
  auto mlp = make_mlp(16, 4);
  torch::Tensor x = torch::randn({8, 100, 16});
  std::vector<torch::Tensor> grads;
  for (int run = 0; run < 2; ++run) {
    mlp->zero_grad();
    mlp_forward(mlp, x).pow(2).sum().backward();
    grads.push_back(mlp->parameters()[1].grad().clone());
  }
  EXPECT_TRUE(torch::equal(grads[0], grads[1]));
}

// On a GPU the op runs the kernels of kernels/cuda/pointwise_programs.h (emulated on the host in
// tests/kernels/pointwise_emulated_test.cpp) around cuBLAS products; float32 and float64 against
// the Sequential in float64 on the CPU. Skips without a GPU.
TEST(FusedMlpCuda, MatchesTheSequentialInFloat64) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (auto dtype : {torch::kFloat, torch::kDouble}) {
    torch::manual_seed(7);
    auto mlp = make_mlp(32, 4);
    auto ref = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(mlp->clone());
    ref->to(torch::kDouble);
    mlp->to(torch::kCUDA, dtype);
    const torch::Tensor x0 = torch::randn({3, 50, 32}, torch::kDouble);
    auto x = x0.to(torch::kCUDA, dtype).requires_grad_(true);
    auto x_ref = x0.clone().requires_grad_(true);
    const torch::Tensor y = mlp_forward(mlp, x), y_ref = ref->forward(x_ref);
    const double tol = dtype == torch::kFloat ? 1e-5 : 1e-12;
    EXPECT_LT(rel_err(y.cpu(), y_ref), tol);
    const torch::Tensor w = torch::randn(y_ref.sizes(), torch::kDouble);
    (y * w.to(torch::kCUDA, dtype)).sum().backward();
    (y_ref * w).sum().backward();
    EXPECT_LT(rel_err(x.grad().cpu(), x_ref.grad()), tol * 10);
    const auto params = mlp->parameters(), ref_params = ref->parameters();
    for (size_t k = 0; k < params.size(); ++k) {
      EXPECT_LT(rel_err(params[k].grad().cpu(), ref_params[k].grad()), tol * 10)
          << "parameter " << k;
    }
  }
}

}  // namespace
}  // namespace minrnn::core
