// Causal attention's probability kernels (kernels/cuda/attention_probs_programs.h) run by the host
// emulator (tests/kernels/grid_emulator.h), every element written once and every barrier
// checked, against the CPU op (ops/attention_probs.h) with the same dropout seed: the dropped
// elements the same, the values and the scores' gradient to rounding (their sums run in another
// fixed order). Rows past the last whole block, rows narrower than a warp and as wide as the
// kernels take, every query and the top layer's selected ones.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "kernels/cuda/attention_probs_programs.h"
#include "ops/attention_probs.h"
#include "ops/dropout.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::rel_err;
using minrnn::testing::tensor_from;
using minrnn::testing::values_of;

constexpr double kAttentionDrop = 0.2, kLogitScale = 0.4;
constexpr uint64_t kEmulatedAttentionSeed = 0x5C0BEull;

// (batch · heads, Tq, T) scores of the queries `read` selects of T keys, of standard deviation
// `spread`.
void check_attention(int64_t heads, int64_t T, const TokenSelection& read, double spread = 3) {
  SCOPED_TRACE(std::to_string(heads) + " heads × " + std::to_string(T) + " keys, queries from " +
               std::to_string(read.first) + " every " + std::to_string(read.stride));
  torch::manual_seed(heads * T);
  const int64_t Tq = read.apply(torch::zeros({1, T})).size(1), rows = heads * Tq;
  const torch::Tensor scores = (torch::randn({1, heads, Tq, T}) * spread).requires_grad_(true);
  torch::Tensor want;
  {
    const DropoutSeeds seeds(
        kEmulatedAttentionSeed);  // its first call's seed is kEmulatedAttentionSeed itself
    want = causal_attention_probs(scores, kLogitScale, read, kAttentionDrop, true);
  }
  const HashedDropout dropout{kEmulatedAttentionSeed, std::llround(kAttentionDrop * 4294967296.0),
                              static_cast<float>(1.0 / (1.0 - kAttentionDrop))};
  const size_t n = static_cast<size_t>(rows * T);
  emu::Buffer<float> sb("scores", values_of<float>(scores)), probs("probs", n), out("out", n);
  const grid::AttentionProbsForward<emu::Memory> forward{{rows, T},
                                                         dropout,
                                                         nullptr,
                                                         {Tq, read.first, read.stride},
                                                         static_cast<float>(kLogitScale),
                                                         sb.in(),
                                                         probs.out(),
                                                         out.out()};
  emu::Log log;
  emu::run(forward, log);
  probs.check_written(log);
  out.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();
  const torch::Tensor got = tensor_from(out.data(), want.sizes());
  EXPECT_TRUE(torch::equal(got == 0, want.detach() == 0));
  EXPECT_LT(rel_err(got, want.detach().to(torch::kDouble)), 1e-6);

  const torch::Tensor out_grad = torch::randn(want.sizes());
  want.backward(out_grad);
  emu::Buffer<float> gb("out_grad", values_of<float>(out_grad)), scores_grad("scores_grad", n);
  const grid::AttentionProbsBackward<emu::Memory> backward{
      {rows, T},  dropout, nullptr,          static_cast<float>(kLogitScale),
      probs.in(), gb.in(), scores_grad.out()};
  emu::Log back_log;
  emu::run(backward, back_log);
  scores_grad.check_written(back_log);
  ASSERT_TRUE(back_log.ok()) << back_log.summary();
  EXPECT_LT(
      rel_err(tensor_from(scores_grad.data(), want.sizes()), scores.grad().to(torch::kDouble)),
      1e-5);
}

TEST(AttentionProbsEmulated, KernelsAreTheCpuOpsProbabilitiesAndGradient) {
  check_attention(3, 59, {});      // DT's K = 20: 59 tokens; the last block's rows partly past
  check_attention(2, 5, {});       // lanes past the row's end
  check_attention(1, 256, {});     // as wide as the kernels take
  check_attention(4, 59, {1, 3});  // the top layer's state tokens
  // Logits hundreds apart: exp overflows unless each row's largest is subtracted, the row's and
  // not a lane's.
  check_attention(2, 59, {}, 300);
}

}  // namespace
}  // namespace minrnn::core
