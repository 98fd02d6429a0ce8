// The hashed dropout (ops/dropout.h): the fused CPU pass equals the same hash written in torch ops
// (what other devices run), the draws are Bernoulli(1 − p), and its gradients are autograd's
// through the unfused x + y ⊙ mask / (1 − p).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "ops/dropout.h"
#include "ops/scan.h"
#include "tests/ops/gradcheck.h"

namespace minrnn::core {
namespace {

torch::Tensor unfused(const torch::Tensor& x, const torch::Tensor& y, double p, uint64_t seed) {
  return x + y * dropout_mask_reference(y, p, seed) * (1.0 / (1.0 - p));
}

TEST(HashedDropout, FusedPassEqualsTheTorchOpsHash) {
  for (auto dtype : {torch::kFloat, torch::kDouble}) {
    for (double p : {0.1, 0.5, 0.9}) {
      torch::manual_seed(1);
      auto x = torch::randn({3, 37, 29}, dtype), y = torch::randn({3, 37, 29}, dtype);
      const uint64_t seed = 0xDEADBEEF12345678ull;
      EXPECT_TRUE(torch::equal(add_dropout_seeded(x, y, p, seed), unfused(x, y, p, seed)))
          << "p " << p;
      auto mask = dropout_mask_reference(y, p, seed);
      EXPECT_TRUE(torch::equal(add_dropout_seeded({}, y, p, seed), y * mask * (1.0 / (1.0 - p))));
    }
  }
}

TEST(HashedDropout, DrawsAreBernoulliAndIndependentOfTheirNeighbours) {
  const int64_t n = 1 << 20;
  auto y = torch::ones({n});
  for (double p : {0.1, 0.5}) {
    auto keep = dropout_mask_reference(y, p, 42).to(torch::kDouble);
    const double mean = keep.mean().item<double>();
    const double sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(mean, 1 - p, 5 * sd);
    // Adjacent elements (consecutive counters of the hash) are uncorrelated.
    auto c = keep - mean;
    const double corr =
        (c.slice(0, 1) * c.slice(0, 0, n - 1)).mean().item<double>() / (p * (1 - p));
    EXPECT_LT(std::abs(corr), 5.0 / std::sqrt(static_cast<double>(n)));
  }
  // Different seeds give different masks.
  auto a = dropout_mask_reference(y, 0.5, 1), b = dropout_mask_reference(y, 0.5, 2);
  EXPECT_NEAR(a.ne(b).to(torch::kDouble).mean().item<double>(), 0.5, 0.01);
}

TEST(HashedDropout, GradientsMatchAutogradOfTheUnfusedFormInFloat64) {
  torch::manual_seed(2);
  auto x = torch::randn({4, 9, 6}, torch::kDouble).requires_grad_(true);
  auto y = torch::randn({4, 9, 6}, torch::kDouble).requires_grad_(true);
  auto w = torch::randn({4, 9, 6}, torch::kDouble);
  const uint64_t seed = 777;
  auto fused = torch::autograd::grad({(add_dropout_seeded(x, y, 0.3, seed) * w).sum()}, {x, y});
  auto ref = torch::autograd::grad({(unfused(x, y, 0.3, seed) * w).sum()}, {x, y});
  EXPECT_TRUE(torch::allclose(fused[0], ref[0], 0, 1e-15));
  EXPECT_TRUE(torch::allclose(fused[1], ref[1], 0, 1e-15));
  // Without the residual only y has a gradient.
  auto g = torch::autograd::grad({(add_dropout_seeded({}, y, 0.3, seed) * w).sum()}, {y});
  EXPECT_TRUE(torch::allclose(g[0], ref[1], 0, 1e-15));
  testing::expect_gradients_match(
      [&](const std::vector<torch::Tensor>& in) {
        return std::vector<torch::Tensor>{add_dropout_seeded(in[0], in[1], 0.3, seed)};
      },
      {x, y});
}

TEST(HashedDropout, SeededByTorchsGeneratorAndOffOutsideTraining) {
  auto x = torch::randn({64, 60, 128}), y = torch::randn({64, 60, 128});
  torch::manual_seed(5);
  auto first = add_dropout(x, y, 0.1, true);
  auto second = add_dropout(x, y, 0.1, true);
  torch::manual_seed(5);
  EXPECT_TRUE(torch::equal(add_dropout(x, y, 0.1, true), first));
  EXPECT_FALSE(torch::equal(first, second));  // each call draws a new seed
  EXPECT_TRUE(torch::equal(add_dropout(x, y, 0.1, false), x + y));
  EXPECT_TRUE(torch::equal(add_dropout(x, y, 0.0, true), x + y));
  EXPECT_TRUE(fused_dropout(y, 0.1, false).is_same(y));
  // About p of the elements are zeroed, the rest scaled by 1/(1 − p).
  auto d = fused_dropout(y, 0.1, true);
  EXPECT_NEAR(d.eq(0).to(torch::kDouble).mean().item<double>(), 0.1, 0.005);
  auto kept = d.ne(0);
  EXPECT_TRUE(torch::allclose(d.masked_select(kept), y.masked_select(kept) / 0.9));
  EXPECT_THROW(add_dropout(x, y, 1.0, true), std::invalid_argument);
}

// The path non-CPU devices and other dtypes take: the torch-ops hash, autograd through torch.
// Inside a DropoutSeeds scope, call k of the step is seeded base + k·2³²·γ, whether the base is a
// host value or a tensor read when the pass runs (a replayed graph's); outside, the generator's.
TEST(HashedDropout, AScopesCallsAreSeededFromItsBase) {
  torch::manual_seed(12);
  const torch::Tensor x = torch::randn({3, 50}), y = torch::randn({3, 50});
  const uint64_t base = 0xABCDEF0123456789ull;
  const uint64_t stride = 0x9E3779B97F4A7C15ull << 32;
  const torch::Tensor want0 = add_dropout_seeded(x, y, 0.3, base);
  const torch::Tensor want1 = add_dropout_seeded({}, y, 0.3, base + stride);
  {
    DropoutSeeds seeds(base);
    EXPECT_TRUE(torch::equal(add_dropout(x, y, 0.3, true), want0));
    EXPECT_TRUE(torch::equal(fused_dropout(y, 0.3, true), want1));
  }
  {
    DropoutSeeds seeds(torch::tensor({static_cast<int64_t>(base)}, torch::kInt64));
    EXPECT_TRUE(torch::equal(add_dropout(x, y, 0.3, true), want0));
    const torch::Tensor yg = y.clone().requires_grad_(true);
    const torch::Tensor out = fused_dropout(yg, 0.3, true);
    EXPECT_TRUE(torch::equal(out, want1));
    out.sum().backward();  // the backward regenerates the mask from the same base and call
    EXPECT_TRUE(torch::equal(yg.grad() != 0, want1 != 0));
  }
  EXPECT_THROW(DropoutSeeds(torch::zeros({2, 1}, torch::kInt64)), std::invalid_argument);
  EXPECT_THROW(DropoutSeeds(torch::zeros({1}, torch::kFloat)), std::invalid_argument);
  {
    // Two runs' bases: a pack's scope (ops/run_axis.h), whose dropouts run a run at a time.
    DropoutSeeds pack(torch::zeros({2}, torch::kInt64));
    EXPECT_EQ(pack.runs(), 2);
    EXPECT_THROW(add_dropout(x, y, 0.3, true), std::logic_error);
  }
  // Outside any scope: drawn from the generator again, so not the scope's seeds.
  EXPECT_FALSE(torch::equal(add_dropout(x, y, 0.3, true), want0));
}

TEST(HashedDropout, OtherDtypesRunTheTorchOpsForm) {
  auto x = torch::randn({5, 7}).to(torch::kBFloat16), y = torch::randn({5, 7}).to(torch::kBFloat16);
  auto got = add_dropout_seeded(x, y, 0.5, 9);
  EXPECT_TRUE(torch::equal(got, unfused(x, y, 0.5, 9)));
}

// The CUDA pass (kernels/cuda/pointwise_programs.h under the emulator in dropout_emulated_test.cpp)
// on a GPU: the CPU pass's bits, forward and backward. Skips without a GPU.
TEST(DropoutCuda, PassOnTheGpuEqualsTheCpuPassBitForBit) {
  if (!cuda_scan_available()) GTEST_SKIP() << "no CUDA GPU visible (or built without CUDA)";
  for (auto dtype : {torch::kFloat, torch::kDouble}) {
    torch::manual_seed(2);
    auto x = torch::randn({5, 61, 130}, dtype), y = torch::randn({5, 61, 130}, dtype);
    const uint64_t seed = 0xC0FFEEull;
    auto xg = x.cuda().requires_grad_(true), yg = y.cuda().requires_grad_(true);
    auto xc = x.clone().requires_grad_(true), yc = y.clone().requires_grad_(true);
    const torch::Tensor on_gpu = add_dropout_seeded(xg, yg, 0.1, seed);
    const torch::Tensor on_cpu = add_dropout_seeded(xc, yc, 0.1, seed);
    EXPECT_TRUE(torch::equal(on_gpu.cpu(), on_cpu));
    const auto g = torch::randn_like(x);
    on_gpu.backward(g.cuda());
    on_cpu.backward(g);
    EXPECT_TRUE(torch::equal(yg.grad().cpu(), yc.grad()));
    EXPECT_TRUE(torch::equal(add_dropout_seeded({}, y.cuda(), 0.3, seed).cpu(),
                             add_dropout_seeded({}, y, 0.3, seed)));
  }
}

}  // namespace
}  // namespace minrnn::core
