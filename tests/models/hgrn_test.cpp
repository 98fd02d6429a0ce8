#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "models/hgrn.h"
#include "ops/scan.h"
#include "tests/ops/gradcheck.h"
#include "tests/tensor_compare.h"

using namespace minrnn::core;

namespace {

// Complex gates inside the unit disc (as HGRN's λ exp(iθ)) and arbitrary inputs.
struct ComplexInputs {
  torch::Tensor a_re, a_im, b_re, b_im, h0_re, h0_im;
  std::vector<torch::Tensor> all() const { return {a_re, a_im, b_re, b_im, h0_re, h0_im}; }
};
ComplexInputs complex_inputs(int64_t B, int64_t T, int64_t D, torch::Dtype dtype) {
  torch::Tensor r = torch::rand({B, T, D}, dtype), phi = torch::rand({B, T, D}, dtype) * 6.28;
  return {r * phi.cos(),
          r * phi.sin(),
          torch::randn({B, T, D}, dtype),
          torch::randn({B, T, D}, dtype),
          torch::randn({B, D}, dtype),
          torch::randn({B, D}, dtype)};
}

std::vector<torch::Tensor> as_list(const ComplexScanResult& r) {
  return {r.h_re, r.h_im, r.h_last_re, r.h_last_im};
}

using minrnn::testing::max_err;

// Copies every parameter of `from` into `to` (same architecture).
void copy_parameters(torch::nn::Module& to, const torch::nn::Module& from) {
  torch::NoGradGuard g;
  auto src = from.named_parameters();
  for (auto& p : to.named_parameters()) p.value().copy_(src[p.key()]);
}

HgrnOptions small_options(bool sequential) {
  HgrnOptions o;
  o.d_model = 12;
  o.expansion = 1.5;  // d = 18: the complex width differs from d_model
  o.dropout = 0.1;
  o.sequential_scan = sequential;
  return o;
}

}  // namespace

TEST(HgrnScan, FastEqualsSequentialValuesAndGradients) {
  torch::manual_seed(0);
  for (auto [B, T, D] :
       std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {3, 17, 5}, {2, 40, 130}}) {
    ComplexInputs in = complex_inputs(B, T, D, torch::kFloat);
    std::vector<torch::Tensor> fast_in, ref_in;
    for (auto& t : in.all()) {
      fast_in.push_back(t.clone().requires_grad_(true));
      ref_in.push_back(t.clone().requires_grad_(true));
    }
    auto run = [](const std::vector<torch::Tensor>& x, bool fast) {
      return as_list(fast ? linear_scan_complex(x[0], x[1], x[2], x[3], x[4], x[5])
                          : linear_scan_complex_sequential(x[0], x[1], x[2], x[3], x[4], x[5]));
    };
    auto fast = run(fast_in, true), ref = run(ref_in, false);
    torch::Tensor loss_fast = torch::zeros({}), loss_ref = torch::zeros({});
    for (size_t i = 0; i < fast.size(); ++i) {
      EXPECT_LT(max_err(fast[i], ref[i]), 1e-5) << "output " << i << " at D = " << D;
      torch::Tensor w = torch::randn_like(ref[i]);
      loss_fast = loss_fast + (fast[i] * w).sum();
      loss_ref = loss_ref + (ref[i] * w).sum();
    }
    loss_fast.backward();
    loss_ref.backward();
    for (size_t i = 0; i < fast_in.size(); ++i) {
      EXPECT_LT(max_err(fast_in[i].grad(), ref_in[i].grad()), 1e-4) << "grad of input " << i;
    }
  }
}

TEST(HgrnScan, GradientsMatchFiniteDifferences) {
  torch::manual_seed(1);
  ComplexInputs in = complex_inputs(2, 5, 3, torch::kDouble);
  minrnn::testing::expect_gradients_match(
      [](const std::vector<torch::Tensor>& x) {
        return as_list(linear_scan_complex(x[0], x[1], x[2], x[3], x[4], x[5]));
      },
      in.all());
}

TEST(HgrnScan, ZeroImaginaryPartIsTheRealScan) {
  torch::manual_seed(2);
  torch::Tensor a = torch::rand({2, 9, 7}), b = torch::randn({2, 9, 7}), z = torch::zeros_like(a);
  ComplexScanResult c = linear_scan_complex(a, z, b, z);
  EXPECT_LT(max_err(c.h_re, linear_scan(a, b).h), 1e-6);
  EXPECT_EQ(c.h_im.abs().max().item<float>(), 0.0f);
}

TEST(HgrnScan, EmptySequenceReturnsInitialState) {
  ComplexInputs in = complex_inputs(2, 0, 4, torch::kFloat);
  ComplexScanResult r = linear_scan_complex(in.a_re, in.a_im, in.b_re, in.b_im, in.h0_re, in.h0_im);
  EXPECT_EQ(r.h_re.sizes(), (std::vector<int64_t>{2, 0, 4}));
  EXPECT_TRUE(r.h_last_im.equal(in.h0_im));
}

TEST(HgrnScan, BadInputsNameTheArgument) {
  ComplexInputs in = complex_inputs(2, 5, 3, torch::kFloat);
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_NE(message([&] {
              linear_scan_complex(in.a_re, in.a_im, in.b_re, in.b_im.slice(1, 1));
            }).find("b_im"),
            std::string::npos);
  EXPECT_NE(message([&] {
              linear_scan_complex(in.a_re, in.a_im, in.b_re, in.b_im, in.h0_re);
            }).find("h0_im"),
            std::string::npos);
  EXPECT_NE(message([&] {
              linear_scan_complex(in.a_re, in.a_im, in.b_re, in.b_im, in.h0_re, in.h0_im.t());
            }).find("h0_im"),
            std::string::npos);
  EXPECT_NE(message([&] {
              linear_scan_complex(in.a_re.select(0, 0), in.a_im, in.b_re, in.b_im);
            }).find("a_re"),
            std::string::npos);
}

TEST(HgrnStack, LowerBoundsStartAtZeroAndRiseWithDepth) {
  torch::manual_seed(3);
  HgrnStack stack(small_options(false), 5);
  for (double scale : {0.0, 1.0, 2.0}) {
    {
      torch::NoGradGuard g;
      stack.bound_logits.copy_(torch::randn_like(stack.bound_logits) * scale);
    }
    torch::Tensor gamma = stack.lower_bounds();
    ASSERT_EQ(gamma.sizes(), (std::vector<int64_t>{5, 18}));
    EXPECT_EQ(gamma[0].abs().max().item<float>(), 0.0f);
    EXPECT_GE((gamma.slice(0, 1) - gamma.slice(0, 0, -1)).min().item<float>(), 0.0f);
    EXPECT_LT(gamma.max().item<float>(), 1.0f);
  }
  // At Γ = 0 the bounds are evenly spaced: γ^k = (k − 1)/H.
  torch::NoGradGuard g;
  stack.bound_logits.zero_();
  EXPECT_NEAR(stack.lower_bounds()[4][0].item<float>(), 4.0 / 5.0, 1e-6);
}

TEST(HgrnStack, ParallelEqualsSequentialEqualsStep) {
  torch::manual_seed(4);
  HgrnStack fast(small_options(false), 3), ref(small_options(true), 3);
  {
    torch::NoGradGuard g;
    fast.bound_logits.copy_(torch::randn_like(fast.bound_logits));
  }
  copy_parameters(ref, fast);
  fast.eval();
  ref.eval();
  torch::NoGradGuard g;
  torch::Tensor x = torch::randn({2, 25, 12});
  torch::Tensor y = fast.forward(x);
  EXPECT_LT(max_err(y, ref.forward(x)), 1e-5);
  // Two chunks carrying the state give the same as one pass.
  SequenceState chunked = fast.initial_state();
  torch::Tensor y1 = fast.forward(x.slice(1, 0, 10), &chunked);
  torch::Tensor y2 = fast.forward(x.slice(1, 10), &chunked);
  EXPECT_LT(max_err(torch::cat({y1, y2}, 1), y), 1e-5);
  SequenceState state = fast.initial_state();
  for (int64_t t = 0; t < 25; ++t) {
    EXPECT_LT(max_err(fast.step(x.select(1, t), state), y.select(1, t)), 1e-5) << "t = " << t;
  }
  for (size_t k = 0; k < state.size(); ++k) {
    EXPECT_EQ(state[k].h.sizes(), (std::vector<int64_t>{2, 36}));
    EXPECT_LT(max_err(state[k].h, chunked[k].h), 1e-5) << "layer " << k;
  }
}

TEST(HgrnStack, FactoryConstructorTrainsEveryParameter) {
  torch::manual_seed(5);
  HgrnStack stack(8, 2, 0.0, 2.0);
  EXPECT_TRUE(stack.streaming());
  EXPECT_EQ(stack.n_layers(), 2);
  EXPECT_EQ(stack.blocks()[0]->hgru->width(), 16);
  stack.forward(torch::randn({3, 6, 8})).pow(2).sum().backward();
  for (auto& p : stack.named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<float>(), 0.0f) << p.key();
  }
}

TEST(HgrnStack, BadInputsAreRejected) {
  HgrnStack stack(8, 2, 0.1);
  SequenceState wrong(3);
  EXPECT_THROW(stack.forward(torch::randn({2, 4, 7})), std::invalid_argument);
  EXPECT_THROW(stack.step(torch::randn({2, 4, 8}), wrong), std::invalid_argument);
  SequenceState state = stack.initial_state();
  EXPECT_THROW(stack.step(torch::randn({2, 8}), wrong), std::invalid_argument);
  state[0].h = torch::zeros({2, 5});
  EXPECT_THROW(stack.step(torch::randn({2, 8}), state), std::invalid_argument);
  EXPECT_THROW(HgrnStack(8, 0, 0.1), std::invalid_argument);
}

TEST(HgrnLayer, GradientsMatchFiniteDifferences) {
  torch::manual_seed(6);
  HgrnOptions o;
  o.d_model = 3;
  o.expansion = 1.0;
  Hgru layer(o);
  layer->to(torch::kDouble);
  {
    torch::NoGradGuard g;
    layer->theta.copy_(torch::randn_like(layer->theta));
  }
  // Inputs x, γ, h0 through finite differences ...
  torch::Tensor x = torch::randn({2, 4, 3}, torch::kDouble);
  torch::Tensor gamma = torch::rand({3}, torch::kDouble) * 0.9;
  torch::Tensor h0 = torch::randn({2, 6}, torch::kDouble);
  minrnn::testing::expect_gradients_match(
      [&](const std::vector<torch::Tensor>& in) {
        torch::Tensor last;
        torch::Tensor y = layer(in[0], in[1], in[2], &last);
        return std::vector<torch::Tensor>{y, last};
      },
      {x, gamma, h0});
  // ... and the parameters (θ, the fused projection, the norm, the output projection).
  torch::Tensor w = torch::randn({2, 4, 3}, torch::kDouble);
  auto loss = [&] { return (layer(x, gamma, h0) * w).sum(); };
  layer->zero_grad();
  loss().backward();
  torch::NoGradGuard g;
  for (auto& p : layer->named_parameters()) {
    auto flat = p.value().view(-1);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double orig = flat[i].item<double>(), eps = 1e-6;
      flat[i] = orig + eps;
      const double up = loss().item<double>();
      flat[i] = orig - eps;
      const double down = loss().item<double>();
      flat[i] = orig;
      const double numeric = (up - down) / (2 * eps);
      ASSERT_NEAR(p.value().grad().view(-1)[i].item<double>(), numeric,
                  1e-6 * std::max(1.0, std::abs(numeric)))
          << p.key() << " element " << i;
    }
  }
}

TEST(HgrnLayer, ZeroAngleZeroBoundIsARealGatedRecurrence) {
  torch::manual_seed(7);
  HgrnOptions o;
  o.d_model = 5;
  o.expansion = 0.8;  // d = 4
  Hgru layer(o);
  torch::NoGradGuard g;
  layer->theta.zero_();
  torch::Tensor x = torch::randn({2, 11, 5});
  torch::Tensor y = layer(x, torch::zeros({4}));
  // By hand: μ = σ(·), h_t = μ h_{t−1} + (1 − μ) SiLU(·) for the real and imaginary parts alone.
  const int64_t d = 4;
  torch::Tensor W = layer->in_proj->weight, bias = layer->in_proj->bias;
  auto proj = [&](const torch::Tensor& x_t, int64_t part, int64_t width) {
    return torch::matmul(x_t, W.slice(0, part * d, part * d + width).t()) +
           bias.slice(0, part * d, part * d + width);
  };
  torch::Tensor h_re = torch::zeros({2, d}), h_im = torch::zeros({2, d});
  for (int64_t t = 0; t < 11; ++t) {
    torch::Tensor x_t = x.select(1, t);
    torch::Tensor mu = torch::sigmoid(proj(x_t, 0, d));
    h_re = mu * h_re + (1 - mu) * torch::silu(proj(x_t, 1, d));
    h_im = mu * h_im + (1 - mu) * torch::silu(proj(x_t, 2, d));
    torch::Tensor gated = torch::sigmoid(proj(x_t, 3, 2 * d)) * torch::cat({h_re, h_im}, -1);
    torch::Tensor normed =
        torch::layer_norm(gated, {2 * d}, layer->norm->weight, layer->norm->bias, 1e-5);
    torch::Tensor want = torch::matmul(normed, layer->out_proj->weight.t()) + layer->out_proj->bias;
    EXPECT_LT(max_err(y.select(1, t), want), 1e-5) << "t = " << t;
  }
}

// Timings, outside the default run:
//   ./build-hgrn/tests/test_compute --gtest_filter='HgrnBench*' --gtest_also_run_disabled_tests
TEST(HgrnBench, DISABLED_ScanAndStackTimings) {
  torch::manual_seed(9);
  auto time_ms = [](const std::function<void()>& f, int reps) {
    f();  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           reps;
  };
  // A DT batch: 64 sequences of 20 steps × 3 tokens, width 128.
  ComplexInputs in = complex_inputs(64, 60, 128, torch::kFloat);
  std::vector<torch::Tensor> x;
  for (auto& t : in.all()) x.push_back(t.clone().requires_grad_(true));
  auto fwd_bwd = [&](bool fast) {
    return [&, fast] {
      auto r = fast ? linear_scan_complex(x[0], x[1], x[2], x[3], x[4], x[5])
                    : linear_scan_complex_sequential(x[0], x[1], x[2], x[3], x[4], x[5]);
      (r.h_re.sum() + r.h_im.sum()).backward();
    };
  };
  torch::Tensor a = in.a_re.abs().clone().requires_grad_(true), b = in.b_re.clone();
  std::printf("complex scan fwd+bwd (64,60,128): fast %.3f ms, sequential %.3f ms; real %.3f ms\n",
              time_ms(fwd_bwd(true), 20), time_ms(fwd_bwd(false), 20),
              time_ms([&] { linear_scan(a, b).h.sum().backward(); }, 20));
  HgrnStack stack(128, 3, 0.1);
  torch::Tensor tokens = torch::randn({64, 60, 128});
  std::printf("HgrnStack(128, 3 layers) fwd+bwd (64,60,128): %.2f ms\n",
              time_ms([&] { stack.forward(tokens).sum().backward(); }, 5));
}
