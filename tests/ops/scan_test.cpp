#include <gtest/gtest.h>

#include "ops/scan.h"
#include "tests/ops/gradcheck.h"

using namespace minrnn::core;

namespace {

// Gates in (0, 1) and positive values, so all three scans apply (the log one needs b > 0).
struct Inputs {
  torch::Tensor a, b, h0;
};
Inputs positive_inputs(int64_t B, int64_t T, int64_t D, torch::Dtype dtype = torch::kFloat) {
  return {torch::rand({B, T, D}, dtype), torch::rand({B, T, D}, dtype) + 0.01,
          torch::rand({B, D}, dtype) + 0.01};
}

void expect_close_to_max(const torch::Tensor& got, const torch::Tensor& want, double tol) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::isfinite(got).all().item<bool>());
  const double err = (got - want).abs().max().item<double>();
  const double scale = std::max(1.0, want.abs().max().item<double>());
  EXPECT_LE(err / scale, tol) << "max abs error " << err;
}

}  // namespace

TEST(Scan, FastEqualsSequentialEqualsLogParallel) {
  torch::manual_seed(0);
  for (auto [B, T, D] :
       std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {3, 17, 5}, {2, 64, 130}}) {
    Inputs in = positive_inputs(B, T, D);
    ScanResult fast = linear_scan(in.a, in.b, in.h0);
    ScanResult ref = linear_scan_sequential(in.a, in.b, in.h0);
    ScanResult logp = linear_scan_log_parallel(in.a.log(), in.b.log(), in.h0.log());
    expect_close_to_max(fast.h, ref.h, 1e-5);
    expect_close_to_max(fast.h_last, ref.h_last, 1e-5);
    expect_close_to_max(logp.h, ref.h, 1e-5);
    expect_close_to_max(logp.h_last, ref.h_last, 1e-5);
  }
}

TEST(Scan, LongSequenceStaysFiniteAndExact) {
  torch::manual_seed(1);
  Inputs in = positive_inputs(2, 4096, 8);
  ScanResult fast = linear_scan(in.a, in.b, in.h0);
  ScanResult ref = linear_scan_sequential(in.a.to(torch::kDouble), in.b.to(torch::kDouble),
                                          in.h0.to(torch::kDouble));
  expect_close_to_max(fast.h.to(torch::kDouble), ref.h, 1e-5);
  // The paper's log-space form subtracts two numbers of size |Σ log a| (here ~4000), so in float32
  // it keeps only ~|Σ log a|·2⁻²⁴ relative precision: finite and close, but not 1e-5
  // (docs/core.md).
  ScanResult logp = linear_scan_log_parallel(in.a.log(), in.b.log(), in.h0.log());
  expect_close_to_max(logp.h.to(torch::kDouble), ref.h, 5e-3);
}

TEST(Scan, NegativeValuesAndGatesWork) {
  torch::manual_seed(2);
  torch::Tensor a = torch::randn({2, 33, 7}), b = torch::randn({2, 33, 7}) * 0.1;
  expect_close_to_max(linear_scan(a, b).h, linear_scan_sequential(a, b).h, 1e-5);
}

TEST(Scan, ZeroInitialStateByDefaultAndEmptySequence) {
  torch::Tensor a = torch::rand({2, 4, 3}), b = torch::rand({2, 4, 3});
  expect_close_to_max(linear_scan(a, b).h, linear_scan(a, b, torch::zeros({2, 3})).h, 0);
  torch::Tensor h0 = torch::rand({2, 3});
  ScanResult empty = linear_scan(a.slice(1, 0, 0), b.slice(1, 0, 0), h0);
  EXPECT_EQ(empty.h.size(1), 0);
  expect_close_to_max(empty.h_last, h0, 0);
}

TEST(Scan, RejectsBadShapesWithAClearMessage) {
  torch::Tensor a = torch::rand({2, 4, 3});
  try {
    linear_scan(a, torch::rand({2, 4, 2}));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("same shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW(linear_scan(a, a, torch::rand({2, 4})), std::invalid_argument);
  EXPECT_THROW(linear_scan(torch::rand({4, 3}), torch::rand({4, 3})), std::invalid_argument);
}

TEST(Scan, FastGradientsMatchFiniteDifferences) {
  torch::manual_seed(3);
  Inputs in = positive_inputs(2, 5, 3, torch::kDouble);
  minrnn::testing::expect_gradients_match(
      [](const std::vector<torch::Tensor>& x) {
        ScanResult r = linear_scan(x[0], x[1], x[2]);
        return std::vector<torch::Tensor>{r.h, r.h_last};
      },
      {in.a, in.b, in.h0});
}

TEST(Scan, LogParallelGradientsMatchFiniteDifferences) {
  torch::manual_seed(4);
  Inputs in = positive_inputs(1, 6, 2, torch::kDouble);
  minrnn::testing::expect_gradients_match(
      [](const std::vector<torch::Tensor>& x) {
        ScanResult r = linear_scan_log_parallel(x[0], x[1], x[2]);
        return std::vector<torch::Tensor>{r.h};
      },
      {in.a.log(), in.b.log(), in.h0.log()});
}

TEST(Scan, FastGradientsEqualSequentialGradients) {
  torch::manual_seed(5);
  Inputs in = positive_inputs(3, 50, 70);
  torch::Tensor w = torch::randn({3, 50, 70});
  auto grads = [&](bool fast) {
    auto a = in.a.clone().requires_grad_(), b = in.b.clone().requires_grad_(),
         h0 = in.h0.clone().requires_grad_();
    ScanResult r = fast ? linear_scan(a, b, h0) : linear_scan_sequential(a, b, h0);
    ((r.h * w).sum() + r.h_last.sum()).backward();
    return std::vector<torch::Tensor>{a.grad(), b.grad(), h0.grad()};
  };
  auto g_fast = grads(true), g_ref = grads(false);
  for (int i = 0; i < 3; ++i) expect_close_to_max(g_fast[i], g_ref[i], 1e-5);
}

TEST(Scan, LowPrecisionInputsAccumulateInFloat) {
  torch::manual_seed(6);
  Inputs in = positive_inputs(2, 300, 4);
  ScanResult bf = linear_scan(in.a.to(torch::kBFloat16), in.b.to(torch::kBFloat16), in.h0);
  EXPECT_EQ(bf.h.scalar_type(), torch::kBFloat16);
  ScanResult ref = linear_scan_sequential(in.a.to(torch::kBFloat16).to(torch::kFloat),
                                          in.b.to(torch::kBFloat16).to(torch::kFloat), in.h0);
  expect_close_to_max(bf.h.to(torch::kFloat), ref.h, 2e-2);
}

// gated_scan: the minGRU/minLSTM gates fused into the kernel, against the torch-op reference.
TEST(GatedScan, FusedEqualsReferenceForwardAndBackward) {
  torch::manual_seed(10);
  for (bool positive : {true, false}) {
    for (auto [B, T, D] :
         std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {3, 17, 5}, {2, 64, 130}}) {
      torch::Tensor u = torch::randn({B, T, D}) * 3, c = torch::randn({B, T, D});
      torch::Tensor h0 = torch::randn({B, D}), w = torch::randn({B, T, D});
      auto run = [&](bool fused) {
        auto ug = u.clone().requires_grad_(), cg = c.clone().requires_grad_(),
             hg = h0.clone().requires_grad_();
        ScanResult r =
            fused ? gated_scan(ug, cg, hg, positive) : gated_scan_reference(ug, cg, hg, positive);
        ((r.h * w).sum() + r.h_last.sum()).backward();
        return std::vector<torch::Tensor>{r.h.detach(), r.h_last.detach(), ug.grad(), cg.grad(),
                                          hg.grad()};
      };
      auto fused = run(true), ref = run(false);
      for (size_t i = 0; i < fused.size(); ++i) {
        SCOPED_TRACE("output " + std::to_string(i) + (positive ? " positive" : " vanilla"));
        expect_close_to_max(fused[i], ref[i], 1e-5);
      }
    }
  }
}

TEST(GatedScan, SaturatedGatesOverLongSequencesStayExact) {
  torch::manual_seed(11);
  // Logits of ±30 make σ round to exactly 0 or 1 in float32: the state must neither blow up nor
  // produce NaN, forward or backward.
  torch::Tensor u = (torch::rand({2, 4096, 8}) * 60 - 30).requires_grad_();
  torch::Tensor c = torch::randn({2, 4096, 8}).requires_grad_();
  ScanResult r = gated_scan(u, c);
  r.h.sum().backward();
  ScanResult ref =
      gated_scan_reference(u.detach().to(torch::kDouble), c.detach().to(torch::kDouble));
  expect_close_to_max(r.h.detach().to(torch::kDouble), ref.h, 1e-5);
  EXPECT_TRUE(torch::isfinite(u.grad()).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(c.grad()).all().item<bool>());
}

TEST(GatedScan, GradientsMatchFiniteDifferences) {
  torch::manual_seed(12);
  for (bool positive : {true, false}) {
    SCOPED_TRACE(positive ? "positive candidate" : "identity candidate");
    minrnn::testing::expect_gradients_match(
        [positive](const std::vector<torch::Tensor>& x) {
          ScanResult r = gated_scan(x[0], x[1], x[2], positive);
          return std::vector<torch::Tensor>{r.h, r.h_last};
        },
        {torch::randn({2, 5, 3}, torch::kDouble) * 2, torch::randn({2, 5, 3}, torch::kDouble),
         torch::randn({2, 3}, torch::kDouble)});
  }
}

TEST(GatedScan, LowPrecisionAndBadShapes) {
  torch::manual_seed(13);
  torch::Tensor u = torch::randn({2, 300, 4}), c = torch::randn({2, 300, 4});
  ScanResult bf = gated_scan(u.to(torch::kBFloat16), c.to(torch::kBFloat16));
  EXPECT_EQ(bf.h.scalar_type(), torch::kBFloat16);
  ScanResult ref = gated_scan_reference(u.to(torch::kBFloat16).to(torch::kFloat),
                                        c.to(torch::kBFloat16).to(torch::kFloat));
  expect_close_to_max(bf.h.to(torch::kFloat), ref.h, 2e-2);
  try {
    gated_scan(u, c.slice(2, 0, 3));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gated_scan"), std::string::npos) << e.what();
  }
}
