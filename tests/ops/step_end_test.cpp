// A training step's end (ops/step_end.h): the global gradient norm it clips by — LibTorch's
// clip_grad_norm_'s on the CPU, the squares summed in blocks on CUDA (label cuda: skips without a
// GPU; the kernels' bodies run under the emulator in tests/kernels/pointwise_emulated_test.cpp) —
// and the gradient scale it writes for AdamW.
#include "ops/step_end.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "kernels/math/adamw_math.h"

namespace minrnn::core {
namespace {

struct Ended {
  float norm, grad_scale, apply;
};

// end_step over `grads` with `clip`, on their device.
Ended end_with(const std::vector<torch::Tensor>& grads, double clip, float loss = 0.5f) {
  const auto on = torch::TensorOptions().device(grads[0].device());
  torch::Tensor scalars = torch::zeros({kAdamWStepScalarCount}, on);
  scalars[kApplyScalar].fill_(1);
  const StepEndTensors t{torch::full({}, loss, on),
                         grads,
                         torch::full({1}, 3, on.dtype(torch::kInt64)),
                         scalars,
                         torch::zeros({kStepVerdictCount}, on.dtype(torch::kInt64)),
                         torch::zeros({}, on),
                         torch::zeros({}, on)};
  end_step(t, clip);
  const torch::Tensor s = scalars.cpu();
  return {t.norm_kept.item<float>(), s[kGradScaleScalar].item<float>(),
          s[kApplyScalar].item<float>()};
}

// Tensors of one element up to a few blocks of the CUDA kernel, more of them than one of its
// launches takes (48).
std::vector<torch::Tensor> gradients(const torch::Device& device) {
  torch::manual_seed(4);
  std::vector<torch::Tensor> grads;
  for (int64_t i = 0; i < 53; ++i) grads.push_back(torch::randn({1 + i * 311}, device) * 0.1);
  return grads;
}

double norm_in_float64(const std::vector<torch::Tensor>& grads) {
  double squares = 0;
  for (const auto& g : grads)
    squares += g.to(torch::kCPU, torch::kDouble).pow(2).sum().item<double>();
  return std::sqrt(squares);
}

TEST(StepEnd, OnTheCpuTheNormIsClipGradNormsAndItsScaleIsApplied) {
  std::vector<torch::Tensor> grads = gradients(torch::kCPU);
  const Ended e = end_with(grads, 0.25);
  std::vector<torch::Tensor> params;
  for (const auto& g : grads) {
    params.push_back(torch::zeros_like(g).requires_grad_(true));
    params.back().mutable_grad() = g.clone();
  }
  const double libtorch = torch::nn::utils::clip_grad_norm_(params, 0.25);
  EXPECT_EQ(e.norm, static_cast<float>(libtorch));
  EXPECT_EQ(e.grad_scale, 0.25f / (e.norm + 1e-6f));
  EXPECT_EQ(e.apply, 1.0f);
  // No clip: no norm, no scale.
  const Ended off = end_with(grads, 0);
  EXPECT_EQ(off.norm, 0.0f);
  EXPECT_EQ(off.grad_scale, 1.0f);
  // A non-finite gradient stops the step.
  grads[7][3] = NAN;
  EXPECT_EQ(end_with(grads, 0.25).apply, 0.0f);
}

TEST(StepEnd, RefusesAGradientOfAnotherDtype) {
  EXPECT_THROW(end_with({torch::zeros({3}, torch::kDouble)}, 1.0), std::invalid_argument);
}

TEST(StepEndCuda, TheNormIsTheSquaresSummedToRounding) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const std::vector<torch::Tensor> grads = gradients(torch::kCUDA);
  const double want = norm_in_float64(grads);
  const Ended e = end_with(grads, 0.25);
  EXPECT_NEAR(e.norm, want, 1e-5 * want);
  EXPECT_EQ(e.grad_scale, 0.25f / (e.norm + 1e-6f));
  EXPECT_EQ(end_with(grads, 0.25).norm, e.norm);  // a fixed order: the same bits again
  const Ended off = end_with(grads, 0);
  EXPECT_EQ(off.norm, 0.0f);
  EXPECT_EQ(off.grad_scale, 1.0f);
  // A non-finite gradient stops the step.
  std::vector<torch::Tensor> bad = grads;
  bad[7] = bad[7].clone();
  bad[7][3] = NAN;
  EXPECT_EQ(end_with(bad, 0.25).apply, 0.0f);
}

}  // namespace
}  // namespace minrnn::core
