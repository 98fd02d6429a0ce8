// The fused minLSTM gate logit (core/gate_logit.h) against the torch expression it replaces:
// values and gradients, on the strided chunks the gate projection yields, at saturating inputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/gate_logit.h"

namespace minrnn::core {
namespace {

// (B, T, 3H) like a minLSTM gate projection, scaled so some entries pass softplus's threshold (20)
// and some saturate σ.
torch::Tensor projection(torch::Dtype dtype, int64_t B, int64_t T, int64_t H) {
  torch::manual_seed(11);
  return (torch::randn({B, T, 3 * H}, torch::dtype(dtype)) * 12.0).requires_grad_(true);
}

void expect_equal_with_gradients(torch::Dtype dtype, double tol) {
  for (int64_t H : {1, 7, 64, 130}) {
    auto pre = projection(dtype, 3, 5, H);
    auto parts = pre.chunk(3, -1);  // strided views, as in MinRnn
    auto u = minlstm_gate_logit(parts[0], parts[1]);
    auto pre_ref = pre.detach().clone().requires_grad_(true);
    auto parts_ref = pre_ref.chunk(3, -1);
    auto u_ref = minlstm_gate_logit_reference(parts_ref[0], parts_ref[1]);
    ASSERT_EQ(u.sizes(), u_ref.sizes());
    EXPECT_TRUE(torch::allclose(u, u_ref, tol, tol)) << "H " << H << ": value";
    auto g = torch::randn_like(u);
    (u * g).sum().backward();
    (u_ref * g).sum().backward();
    EXPECT_TRUE(torch::allclose(pre.grad(), pre_ref.grad(), tol, tol)) << "H " << H << ": grad";
  }
}

TEST(MinLstmGateLogit, EqualsTheTorchExpressionInFloat64) {
  expect_equal_with_gradients(torch::kFloat64, 1e-12);
}

TEST(MinLstmGateLogit, EqualsTheTorchExpressionInFloat32) {
  expect_equal_with_gradients(torch::kFloat32, 2e-6);
}

TEST(MinLstmGateLogit, PassesGradcheckAndTakesAnyLayout) {
  torch::manual_seed(5);
  auto p = torch::randn({4, 6}, torch::dtype(torch::kFloat64)).requires_grad_(true);
  auto k = torch::randn({4, 6}, torch::dtype(torch::kFloat64)).requires_grad_(true);
  // Finite differences on the analytic backward (not autograd on the reference).
  const double eps = 1e-6;
  auto u = minlstm_gate_logit(p, k);
  u.sum().backward();
  auto pd = p.detach().clone(), kd = k.detach().clone();
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      auto pp = pd.clone(), pm = pd.clone();
      pp[i][j] += eps;
      pm[i][j] -= eps;
      const double fd =
          (minlstm_gate_logit(pp, kd).sum() - minlstm_gate_logit(pm, kd).sum()).item<double>() /
          (2 * eps);
      EXPECT_NEAR(p.grad()[i][j].item<double>(), fd, 1e-7);
    }
  }
  // A transposed (non-row-uniform) input is copied, not misread.
  auto pt = torch::randn({6, 4}, torch::dtype(torch::kFloat64)).t();
  auto kt = torch::randn({6, 4}, torch::dtype(torch::kFloat64)).t();
  EXPECT_TRUE(torch::allclose(minlstm_gate_logit(pt, kt), minlstm_gate_logit_reference(pt, kt),
                              1e-12, 1e-12));
}

}  // namespace
}  // namespace minrnn::core
