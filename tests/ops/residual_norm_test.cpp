// A residual join as one op (ops/residual_norm.h) against what it replaces, add_dropout and
// LibTorch's layer_norm with the same dropout seed: the sum bit for bit, the normed output and
// every gradient (through the sum and the normed output both, or the normed alone) to rounding;
// without a residual (x undefined) fused_dropout normed; evaluation takes no seed; one thread or
// two, the same bits; other inputs run the unfused ops;
// and on CUDA, the same against the CPU op. The kernels' bodies run under the grid emulator in
// tests/kernels/residual_norm_emulated_test.cpp.
#include "ops/residual_norm.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "ops/dropout.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

struct JoinInputs {
  torch::Tensor x, y, gamma, beta;
};

JoinInputs make_inputs(int64_t rows, int64_t width, torch::Device device = torch::kCPU) {
  torch::manual_seed(rows + width);
  const auto leaf = [&](torch::Tensor t) { return t.to(device).requires_grad_(true); };
  return {leaf(torch::randn({2, rows, width})), leaf(torch::randn({2, rows, width})),
          leaf(torch::randn({width})), leaf(torch::randn({width}))};
}
JoinInputs copy_of(const JoinInputs& in, torch::Device device = torch::kCPU) {
  const auto leaf = [&](const torch::Tensor& t) {
    return t.defined() ? t.detach().to(device).clone().requires_grad_(true) : t;
  };
  return {leaf(in.x), leaf(in.y), leaf(in.gamma), leaf(in.beta)};
}

constexpr double kP = 0.25, kEps = 1e-5;
constexpr uint64_t kSeed = 0x5EEDull;

ResidualNorm fused(const JoinInputs& in, bool training = true) {
  const DropoutSeeds seeds(kSeed);
  return add_dropout_norm(in.x, in.y, kP, training, in.gamma, in.beta, kEps);
}
ResidualNorm unfused(const JoinInputs& in, bool training = true) {
  const DropoutSeeds seeds(kSeed);
  const torch::Tensor sum =
      in.x.defined() ? add_dropout(in.x, in.y, kP, training) : fused_dropout(in.y, kP, training);
  return {sum, torch::layer_norm(sum, {in.y.size(-1)}, in.gamma, in.beta, kEps)};
}

// Backward through both outputs (or the normed alone); every input's gradient of `a` within
// `tolerance` of `b`'s.
void expect_same_grads(const JoinInputs& a, const ResidualNorm& ra, const JoinInputs& b,
                       const ResidualNorm& rb, bool through_sum, double tolerance) {
  torch::manual_seed(9);
  const torch::Tensor u = torch::randn(ra.sum.sizes()), v = torch::randn(ra.sum.sizes());
  const auto loss = [&](const ResidualNorm& r) {
    const torch::Tensor normed = (r.normed * v.to(r.normed.device())).sum();
    return through_sum ? normed + (r.sum * u.to(r.sum.device())).sum() : normed;
  };
  loss(ra).backward();
  loss(rb).backward();
  const std::vector<std::pair<const char*, std::pair<torch::Tensor, torch::Tensor>>> pairs{
      {"x", {a.x, b.x}},
      {"y", {a.y, b.y}},
      {"gamma", {a.gamma, b.gamma}},
      {"beta", {a.beta, b.beta}}};
  for (const auto& [name, t] : pairs) {
    if (!t.first.defined()) continue;  // no x: no residual
    EXPECT_LT(rel_err(t.first.grad(), t.second.grad().cpu().to(torch::kDouble)), tolerance) << name;
  }
}

TEST(ResidualNorm, IsAddDropoutThenLayerNorm) {
  for (const int64_t width : {128, 40, 300}) {
    SCOPED_TRACE("width " + std::to_string(width));
    const JoinInputs in = make_inputs(37, width), ref = copy_of(in);
    const ResidualNorm got = fused(in), want = unfused(ref);
    EXPECT_TRUE(torch::equal(got.sum, want.sum));  // add_dropout's mask and rounding
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(in, got, ref, want, true, 1e-5);
  }
}

// Nothing dropped (evaluation here; the tokens' own LayerNorm joins with p = 0): the loops skip
// the hash, and the join is still the add and LayerNorm, its gradients too, with and without x.
TEST(ResidualNorm, NothingDroppedIsTheAddAndLayerNormWithItsGradients) {
  for (const bool residual : {true, false}) {
    SCOPED_TRACE(residual ? "with x" : "without x");
    JoinInputs in = make_inputs(37, 128);
    if (!residual) in.x = torch::Tensor();
    const JoinInputs ref = copy_of(in);
    const ResidualNorm got = fused(in, false), want = unfused(ref, false);
    EXPECT_TRUE(torch::equal(got.sum, want.sum));
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(in, got, ref, want, true, 1e-5);
  }
}

// A backbone's input dropout joined to its first norm: no x, the sum fused_dropout's bits.
TEST(ResidualNorm, WithoutAResidualIsTheDropoutNormed) {
  for (const int64_t width : {128, 300}) {  // 300: wider than the CUDA kernels take
    SCOPED_TRACE("width " + std::to_string(width));
    JoinInputs in = make_inputs(37, width);
    in.x = torch::Tensor();
    const JoinInputs ref = copy_of(in);
    const ResidualNorm got = fused(in), want = unfused(ref);
    EXPECT_TRUE(torch::equal(got.sum, want.sum));
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(in, got, ref, want, true, 1e-5);
    EXPECT_TRUE(torch::equal(fused(in, false).sum, in.y));  // evaluation: y itself
  }
}

TEST(ResidualNorm, StridedInputsAreReadAsTheyAre) {
  // Every third token (the top block's selection), and a step of a sequence.
  const JoinInputs in = make_inputs(12, 32), ref = copy_of(in);
  const auto every_third = [](const torch::Tensor& t) {
    return t.slice(1, 1, torch::indexing::None, 3);
  };
  const JoinInputs got_in{every_third(in.x), every_third(in.y), in.gamma, in.beta};
  const JoinInputs want_in{every_third(ref.x), every_third(ref.y), ref.gamma, ref.beta};
  EXPECT_FALSE(got_in.x.is_contiguous());
  const ResidualNorm got = fused(got_in), want = unfused(want_in);
  EXPECT_TRUE(torch::equal(got.sum, want.sum));
  EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
  expect_same_grads(in, got, ref, want, true, 1e-5);
  const JoinInputs step{in.x.select(1, 3), in.y.select(1, 3), in.gamma, in.beta};
  const JoinInputs step_ref{ref.x.select(1, 3), ref.y.select(1, 3), ref.gamma, ref.beta};
  EXPECT_TRUE(torch::equal(fused(step, false).sum, unfused(step_ref, false).sum));
}

TEST(ResidualNorm, ASelectionReadsItsTokensInPlace) {
  // The minRNN stack's top block reads both at the state tokens; the Transformer's has y (its
  // top attention) at them already. The gradients come back whole, zero where nothing was read.
  const TokenSelection states{1, 3};
  for (const bool y_selected : {false, true}) {
    SCOPED_TRACE(y_selected ? "y selected already" : "both selected");
    JoinInputs in = make_inputs(14, 32);
    if (y_selected) in.y = states.apply(in.y).detach().contiguous().requires_grad_(true);
    const JoinInputs ref = copy_of(in);
    const TokenSelection y_read = y_selected ? TokenSelection{} : states;
    ResidualNorm got, want;
    {
      const DropoutSeeds seeds(kSeed);
      got = add_dropout_norm(in.x, in.y, kP, true, in.gamma, in.beta, kEps, states, y_read);
    }
    const JoinInputs read{states.apply(ref.x), y_read.apply(ref.y), ref.gamma, ref.beta};
    want = unfused(read);
    EXPECT_TRUE(torch::equal(got.sum, want.sum));
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(in, got, ref, want, true, 1e-5);
    EXPECT_EQ(in.x.grad().sizes(), in.x.sizes());
    EXPECT_EQ(in.x.grad().select(1, 0).abs().max().item<float>(), 0.0f);  // token 0: not read
  }
}

TEST(ResidualNorm, TheNormedOutputAloneHasItsGradients) {
  const JoinInputs in = make_inputs(5, 24), ref = copy_of(in);
  expect_same_grads(in, fused(in), ref, unfused(ref), false, 1e-5);
}

TEST(ResidualNorm, EvaluationDropsNothingAndTakesNoSeed) {
  const JoinInputs in = make_inputs(6, 16);
  torch::manual_seed(1);
  const ResidualNorm got = add_dropout_norm(in.x, in.y, kP, false, in.gamma, in.beta, kEps);
  const torch::Tensor next_draw = torch::rand({1});
  torch::manual_seed(1);
  EXPECT_TRUE(torch::equal(next_draw, torch::rand({1})));  // the generator was not touched
  EXPECT_TRUE(torch::equal(got.sum, in.x + in.y));
  const torch::Tensor want = torch::layer_norm(in.x + in.y, {16}, in.gamma, in.beta, kEps);
  EXPECT_LT(rel_err(got.normed, want.detach().to(torch::kDouble)), 1e-6);
}

TEST(ResidualNorm, OneThreadOrTwoGiveTheSameBits) {
  const int threads = at::get_num_threads();
  std::vector<torch::Tensor> grads[2];
  for (const int n : {1, 2}) {
    at::set_num_threads(n);
    const JoinInputs in = make_inputs(300, 64);  // five tasks of rows
    const ResidualNorm r = fused(in);
    (r.normed.pow(2).sum() + r.sum.sum()).backward();
    grads[n - 1] = {r.normed.detach(), in.x.grad(), in.y.grad(), in.gamma.grad(), in.beta.grad()};
  }
  at::set_num_threads(threads);
  for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_TRUE(torch::equal(grads[0][i], grads[1][i]));
}

TEST(ResidualNorm, OtherInputsRunTheUnfusedOps) {
  JoinInputs in = make_inputs(4, 8);
  for (torch::Tensor* t : {&in.x, &in.y, &in.gamma, &in.beta}) {
    *t = t->detach().to(torch::kDouble).requires_grad_(true);
  }
  const JoinInputs ref = copy_of(in);
  const ResidualNorm got = fused(in), want = unfused(ref);
  EXPECT_TRUE(torch::equal(got.sum, want.sum));
  EXPECT_TRUE(torch::equal(got.normed, want.normed));
  const JoinInputs no_x{torch::Tensor(), in.y, in.gamma, in.beta};  // without a residual too
  EXPECT_TRUE(torch::equal(fused(no_x).normed, unfused(no_x).normed));
  EXPECT_THROW(add_dropout_norm(in.x, in.y.narrow(1, 0, 2), kP, true, in.gamma, in.beta, kEps),
               std::invalid_argument);
}

TEST(ResidualNormCuda, IsTheCpuOp) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const int64_t width : {128, 40, 256}) {
    SCOPED_TRACE("width " + std::to_string(width));
    const JoinInputs cpu = make_inputs(37, width), cuda = copy_of(cpu, torch::kCUDA);
    const ResidualNorm got = fused(cuda), want = fused(cpu);
    EXPECT_TRUE(torch::equal(got.sum.cpu(), want.sum));  // the same mask and rounding
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(cuda, got, cpu, want, true, 1e-5);
  }
  {  // A backbone's input dropout joined to its first norm.
    JoinInputs cpu = make_inputs(37, 128);
    cpu.x = torch::Tensor();
    const JoinInputs cuda = copy_of(cpu, torch::kCUDA);
    const ResidualNorm got = fused(cuda), want = fused(cpu);
    EXPECT_TRUE(torch::equal(got.sum.cpu(), want.sum));
    EXPECT_LT(rel_err(got.normed, want.normed.detach().to(torch::kDouble)), 1e-6);
    expect_same_grads(cuda, got, cpu, want, true, 1e-5);
  }
  // The Transformer's top join: x read at the state tokens in place, y (B, T', D) as it is.
  const TokenSelection states{1, 3};
  JoinInputs cpu = make_inputs(14, 32);
  cpu.y = states.apply(cpu.y).detach().contiguous().requires_grad_(true);
  const JoinInputs cuda = copy_of(cpu, torch::kCUDA);
  const auto join = [&](const JoinInputs& in) {
    const DropoutSeeds seeds(kSeed);
    return add_dropout_norm(in.x, in.y, kP, true, in.gamma, in.beta, kEps, states, {});
  };
  const ResidualNorm got = join(cuda), want = join(cpu);
  EXPECT_TRUE(torch::equal(got.sum.cpu(), want.sum));
  expect_same_grads(cuda, got, cpu, want, true, 1e-5);
}

}  // namespace
}  // namespace minrnn::core
