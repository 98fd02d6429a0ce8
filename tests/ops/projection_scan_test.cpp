// gated_projection_scan — the minGRU/minLSTM scan read in place from the gate projection, with
// minLSTM's gates computed inside the kernel without a log — against the torch expression
// (chunk, logsigmoid, gated_scan_reference): values and gradients of pre and h0, at logits far
// into saturation (|x| up to ~60), for both cells and both candidate forms.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ops/scan.h"
#include "tests/ops/gradcheck.h"

namespace minrnn::core {
namespace {

// (B, T, G·H) like a gate projection, scaled so some entries pass the threshold and saturate σ.
torch::Tensor projection(torch::Dtype dtype, int64_t B, int64_t T, int64_t gates, int64_t H) {
  return torch::randn({B, T, gates * H}, torch::dtype(dtype)) * 12.0;
}

void expect_equal_to_reference(torch::Dtype dtype, double tol) {
  torch::manual_seed(11);
  for (int64_t gates : {2, 3}) {
    for (bool positive : {true, false}) {
      // T = 1 (a size-1 dimension's stride is arbitrary), channels below and above a slice.
      for (auto [B, T, H] :
           std::vector<std::array<int64_t, 3>>{{3, 5, 1}, {2, 1, 7}, {2, 9, 64}, {1, 4, 130}}) {
        SCOPED_TRACE("gates " + std::to_string(gates) + (positive ? " g" : " identity") + " " +
                     std::to_string(B) + "x" + std::to_string(T) + "x" + std::to_string(H));
        auto pre = projection(dtype, B, T, gates, H).requires_grad_(true);
        auto h0 = torch::randn({B, H}, torch::dtype(dtype)).requires_grad_(true);
        auto pre_ref = pre.detach().clone().requires_grad_(true);
        auto h0_ref = h0.detach().clone().requires_grad_(true);
        ScanResult r = gated_projection_scan(pre, gates, h0, positive);
        ScanResult ref = gated_projection_scan_reference(pre_ref, gates, h0_ref, positive);
        EXPECT_TRUE(torch::allclose(r.h, ref.h, tol, tol)) << "h";
        EXPECT_TRUE(torch::allclose(r.h_last, ref.h_last, tol, tol)) << "h_last";
        auto w = torch::randn_like(r.h), w_last = torch::randn_like(r.h_last);
        ((r.h * w).sum() + (r.h_last * w_last).sum()).backward();
        ((ref.h * w).sum() + (ref.h_last * w_last).sum()).backward();
        EXPECT_TRUE(torch::allclose(pre.grad(), pre_ref.grad(), tol, tol)) << "d pre";
        EXPECT_TRUE(torch::allclose(h0.grad(), h0_ref.grad(), tol, tol)) << "d h0";
      }
    }
  }
}

TEST(ProjectionScan, EqualsTheTorchExpressionInFloat64) {
  expect_equal_to_reference(torch::kFloat64, 1e-11);
}

TEST(ProjectionScan, EqualsTheTorchExpressionInFloat32) {
  expect_equal_to_reference(torch::kFloat32, 2e-5);
}

// Finite differences on the kernels' analytic backward (not autograd on the reference), at
// moderate logits where differences are accurate.
TEST(ProjectionScan, GradientsMatchFiniteDifferences) {
  torch::manual_seed(5);
  for (int64_t gates : {2, 3}) {
    for (bool positive : {true, false}) {
      SCOPED_TRACE("gates " + std::to_string(gates) + (positive ? " g" : " identity"));
      minrnn::testing::expect_gradients_match(
          [&](const std::vector<torch::Tensor>& x) {
            ScanResult r = gated_projection_scan(x[0], gates, x[1], positive);
            return std::vector<torch::Tensor>{r.h, r.h_last};
          },
          {torch::randn({2, 4, gates * 3}, torch::kDouble), torch::randn({2, 3}, torch::kDouble)});
    }
  }
}

// Only the projection is kept for the backward: its gradient is one tensor of its shape, and no
// (B,T,D) copy of a block outlives the forward.
TEST(ProjectionScan, GradientIsOneTensorOfTheProjectionsShape) {
  auto pre = torch::randn({2, 6, 3 * 5}).requires_grad_(true);
  ScanResult r = gated_projection_scan(pre, 3);
  r.h.sum().backward();
  ASSERT_TRUE(pre.grad().defined());
  EXPECT_EQ(pre.grad().sizes(), pre.sizes());
  EXPECT_TRUE(pre.grad().isfinite().all().item<bool>());
}

TEST(ProjectionScan, RejectsBadShapesWithAClearMessage) {
  auto expect_message = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_message([] { gated_projection_scan(torch::randn({2, 3, 7}), 2); }, "(B, T, 2·D)");
  expect_message([] { gated_projection_scan(torch::randn({2, 3, 6}), 4); }, "gates must be 2");
  expect_message(
      [] {
        gated_projection_scan(torch::randn({2, 3, 6}), 3, torch::zeros({2, 3}));
      },
      "h0");
}

}  // namespace
}  // namespace minrnn::core
