// DT's loss as one op (ops/masked_mse.h) against the same formula in float64 LibTorch ops, loss and
// gradient: padded steps left out, an all-padding batch, and the inputs it leaves to LibTorch.
// The CUDA kernels' bodies run under the grid emulator in
// tests/kernels/pointwise_emulated_test.cpp.
#include "ops/masked_mse.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

torch::Tensor formula(const torch::Tensor& p, const torch::Tensor& t, const torch::Tensor& m) {
  return ((p - t).pow(2).mean(-1) * m).sum() / m.sum().clamp_min(1);
}

void expect_matches_float64(const torch::Tensor& mask, const torch::Device& device) {
  torch::manual_seed(5);
  const auto on = torch::TensorOptions().device(device);
  const torch::Tensor p0 = torch::randn({6, 5, 3}, on), t = torch::rand({6, 5, 3}, on) * 2 - 1;
  const torch::Tensor p = p0.clone().requires_grad_(true);
  const torch::Tensor p_ref = p0.to(torch::kDouble).requires_grad_(true);
  const torch::Tensor loss = masked_mse(p, t, mask.to(device));
  const torch::Tensor ref = formula(p_ref, t.to(torch::kDouble), mask.to(device, torch::kDouble));
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_LT(rel_err(loss, ref.cpu()), 1e-6) << loss.item<double>() << " vs " << ref.item<double>();
  (loss * 3).backward();
  (ref * 3).backward();
  EXPECT_LT(rel_err(p.grad(), p_ref.grad().cpu()), 1e-6);
}

TEST(MaskedMse, MatchesTheFormulaInFloat64WithPaddingLeftOut) {
  torch::Tensor mask = torch::ones({6, 5});
  mask.index_put_({torch::indexing::Slice(4), torch::indexing::Slice(2)}, 0);  // padded windows
  expect_matches_float64(mask, torch::kCPU);
}

TEST(MaskedMse, AnAllPaddingBatchHasNoLossAndNoGradient) {
  const torch::Tensor p = torch::randn({2, 3, 4}).requires_grad_(true);
  const torch::Tensor loss = masked_mse(p, torch::zeros({2, 3, 4}), torch::zeros({2, 3}));
  EXPECT_EQ(loss.item<float>(), 0.0f);
  loss.backward();
  EXPECT_EQ(p.grad().abs().max().item<float>(), 0.0f);
}

TEST(MaskedMse, OtherInputsRunTheFormula) {
  // Float64, and a strided prediction: LibTorch's ops, the same value.
  const torch::Tensor p = torch::randn({4, 3, 2}, torch::kDouble), t = torch::randn({4, 3, 2});
  const torch::Tensor m = torch::ones({4, 3});
  EXPECT_LT(rel_err(masked_mse(p, t.to(torch::kDouble), m.to(torch::kDouble)),
                    formula(p, t.to(torch::kDouble), m.to(torch::kDouble))),
            1e-12);
  const torch::Tensor strided = torch::randn({4, 2, 3}).transpose(1, 2);
  EXPECT_LT(rel_err(masked_mse(strided, t, m), formula(strided, t, m)), 1e-6);
}

TEST(MaskedMseCuda, MatchesTheFormulaInFloat64WithPaddingLeftOut) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  torch::Tensor mask = torch::ones({6, 5});
  mask.index_put_({torch::indexing::Slice(4), torch::indexing::Slice(2)}, 0);
  expect_matches_float64(mask, torch::kCUDA);
}

}  // namespace
}  // namespace minrnn::core
