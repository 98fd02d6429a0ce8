// Causal attention's probabilities as one op (ops/attention_probs.h) against the LibTorch ops it
// replaces with the same dropout seed — the scale, the causal mask, the softmax, fused_dropout —
// in value and gradient, for every query and for the top layer's selected ones; evaluation takes
// no seed; other dtypes run those ops; and on CUDA, the same against the CPU op. The kernels'
// bodies run under the grid emulator in tests/kernels/attention_probs_emulated_test.cpp.
#include "ops/attention_probs.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>

#include "ops/dropout.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

constexpr double kAttentionP = 0.25, kAttentionScale = 0.35;
constexpr uint64_t kAttentionSeed = 0xA77Eull;

// (B, H, Tq, T) scores of the queries `read` selects of T tokens.
torch::Tensor attention_scores(int64_t T, const TokenSelection& read,
                               torch::Device device = torch::kCPU,
                               torch::Dtype dtype = torch::kFloat) {
  torch::manual_seed(T + read.first);
  const int64_t Tq = read.apply(torch::zeros({1, T})).size(1);
  return (torch::randn({2, 3, Tq, T}) * 2).to(device, dtype).requires_grad_(true);
}

torch::Tensor attention_reference(const torch::Tensor& scores, const TokenSelection& read,
                                  bool training) {
  const DropoutSeeds seeds(kAttentionSeed);
  const int64_t T = scores.size(-1);
  const auto key_pos = torch::arange(T, torch::kLong);
  const auto future =
      key_pos.unsqueeze(0) > read.apply(key_pos.unsqueeze(0)).squeeze(0).unsqueeze(1);
  const torch::Tensor masked =
      (scores * kAttentionScale)
          .masked_fill(future.to(scores.device()), -std::numeric_limits<double>::infinity());
  return fused_dropout(torch::softmax(masked, -1), kAttentionP, training);
}
torch::Tensor attention_fused(const torch::Tensor& scores, const TokenSelection& read,
                              bool training) {
  const DropoutSeeds seeds(kAttentionSeed);
  return causal_attention_probs(scores, kAttentionScale, read, kAttentionP, training);
}

// Both through the same weights: the values and the scores' gradients within `tolerance`.
void expect_same_probs(const torch::Tensor& a_scores, const torch::Tensor& a,
                       const torch::Tensor& b_scores, const torch::Tensor& b, double tolerance) {
  EXPECT_LT(rel_err(a, b.detach().cpu().to(torch::kDouble)), tolerance);
  const torch::Tensor w = torch::randn(a.sizes());
  (a * w.to(a.device(), a.scalar_type())).sum().backward();
  (b * w.to(b.device(), b.scalar_type())).sum().backward();
  EXPECT_LT(rel_err(a_scores.grad(), b_scores.grad().cpu().to(torch::kDouble)), tolerance);
}

TEST(AttentionProbs, IsTheScaledMaskedSoftmaxDroppedOut) {
  for (const TokenSelection read : {TokenSelection{}, TokenSelection{1, 3}}) {
    SCOPED_TRACE("queries from " + std::to_string(read.first) + " every " +
                 std::to_string(read.stride));
    const torch::Tensor ours = attention_scores(59, read);
    const torch::Tensor theirs = ours.detach().to(torch::kDouble).requires_grad_(true);
    const torch::Tensor got = attention_fused(ours, read, true);
    const torch::Tensor want = attention_reference(theirs, read, true);
    // The same mask: dropped exactly where fused_dropout drops.
    EXPECT_TRUE(torch::equal(got == 0, want == 0));
    EXPECT_GT((got == 0).sum().item<int64_t>(), got.numel() / 5);  // the mask and the future
    expect_same_probs(ours, got, theirs, want, 1e-6);
  }
}

TEST(AttentionProbs, EvaluationIsTheSoftmaxAndTakesNoSeed) {
  const torch::Tensor scores = attention_scores(20, {});
  torch::manual_seed(1);
  const torch::Tensor got = causal_attention_probs(scores, kAttentionScale, {}, kAttentionP, false);
  const torch::Tensor next_draw = torch::rand({1});
  torch::manual_seed(1);
  EXPECT_TRUE(torch::equal(next_draw, torch::rand({1})));  // the generator was not touched
  EXPECT_LT(rel_err(got, attention_reference(scores.detach().to(torch::kDouble), {}, false)), 1e-6);
  EXPECT_EQ(got[0][0][0][1].item<float>(), 0.0f);  // the first query sees the first key alone
  EXPECT_FLOAT_EQ(got[0][0][0][0].item<float>(), 1.0f);
}

TEST(AttentionProbs, OtherDtypesRunTheLibTorchOpsAndMisshapenScoresAreRefused) {
  const torch::Tensor scores = attention_scores(9, {}, torch::kCPU, torch::kDouble);
  EXPECT_TRUE(
      torch::equal(attention_fused(scores, {}, true), attention_reference(scores, {}, true)));
  EXPECT_THROW(
      causal_attention_probs(torch::zeros({3, 9, 9}), kAttentionScale, {}, kAttentionP, true),
      std::invalid_argument);
  EXPECT_THROW(causal_attention_probs(torch::zeros({1, 1, 4, 9}), kAttentionScale, {7, 1},
                                      kAttentionP, true),
               std::invalid_argument);  // queries 7 … 10 of 9 keys
}

// The passes on rows `pitch` floats apart (ops/causal_attention.cpp pads DT's 59 keys to 60 on
// CUDA): each output in the scores' pitch, and the same bits as on rows packed — the dropout's
// elements counted as rows of 59; out's gradient taken in any layout.
void expect_pitch_keeps_bits(torch::Device device) {
  torch::manual_seed(41);
  constexpr int64_t kRows = 40, kT = 59, kPitch = 64;
  const auto on = torch::TensorOptions().device(device);
  const torch::Tensor scores = torch::randn({kRows, kT}, on) * 2,
                      out_grad = torch::randn({kRows, kT}, on);
  torch::Tensor laid = torch::full({kRows, kPitch}, NAN, on);
  const torch::Tensor padded = laid.narrow(1, 0, kT).copy_(scores);
  const QueryRows queries{kRows, 0, 1};  // one query a row, each at key 0 … 39 of 59
  const PassDropout dropout = [&] {
    const DropoutSeeds seeds(kAttentionSeed);
    return next_pass_dropout(kAttentionP, true, device);
  }();
  const AttentionProbs packed = attention_probs_forward(scores, queries, dropout, kAttentionScale);
  const AttentionProbs pitched = attention_probs_forward(padded, queries, dropout, kAttentionScale);
  EXPECT_EQ(pitched.probs.stride(0), kPitch);
  EXPECT_EQ(pitched.out.stride(0), kPitch);
  EXPECT_TRUE(torch::equal(pitched.probs, packed.probs));
  EXPECT_TRUE(torch::equal(pitched.out, packed.out));
  const torch::Tensor packed_grad =
      attention_probs_backward(packed.probs, out_grad, dropout, kAttentionScale);
  const torch::Tensor pitched_grad =
      attention_probs_backward(pitched.probs, out_grad, dropout, kAttentionScale);
  EXPECT_EQ(pitched_grad.stride(0), kPitch);
  EXPECT_TRUE(torch::equal(pitched_grad, packed_grad));
}

TEST(AttentionProbs, RowsPaddedToAPitchGiveThePackedRowsBits) {
  expect_pitch_keeps_bits(torch::kCPU);
}

TEST(AttentionProbsCuda, IsTheCpuOp) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const TokenSelection read : {TokenSelection{}, TokenSelection{1, 3}}) {
    const torch::Tensor cpu = attention_scores(59, read);
    const torch::Tensor cuda = cpu.detach().to(torch::kCUDA).requires_grad_(true);
    const torch::Tensor got = attention_fused(cuda, read, true),
                        want = attention_fused(cpu, read, true);
    EXPECT_TRUE(torch::equal(got.cpu() == 0, want == 0));  // the same mask
    expect_same_probs(cuda, got, cpu, want, 1e-5);
  }
  SCOPED_TRACE("rows padded to a pitch");
  expect_pitch_keeps_bits(torch::kCUDA);
}

}  // namespace
}  // namespace minrnn::core
