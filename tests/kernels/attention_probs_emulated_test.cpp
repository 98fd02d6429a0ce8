// Causal attention's probability kernels (kernels/cuda/attention_probs_programs.h) run by the host
// emulator (tests/kernels/grid_emulator.h), every element written once and every barrier
// checked, against the CPU op (ops/attention_probs.h) with the same dropout seed: the dropped
// elements the same, the values and the scores' gradient to rounding (their sums run in another
// fixed order). Rows past the last whole block, rows narrower than a warp and as wide as the
// kernels take, every query and the top layer's selected ones.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

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
                                                         out.out(),
                                                         {},
                                                         T};
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
      {rows, T},         dropout, nullptr, static_cast<float>(kLogitScale), probs.in(), gb.in(),
      scores_grad.out(), {},      T};
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

// Rows of `x` (rows, T) laid `pitch` floats apart, the pad NaN (read anywhere, it would show).
std::vector<float> pitched(const torch::Tensor& x, int64_t pitch) {
  const int64_t T = x.size(1);
  torch::Tensor laid = torch::full({x.size(0), pitch}, NAN);
  laid.narrow(1, 0, T).copy_(x);
  return values_of<float>(laid);
}

// Both kernels over `rows` rows of T scores `pitch` apart (seed_base: null, or one base a run),
// emulated: {probs, out, scores_grad}, each row's T values (the pad checked never written).
// PerLane: the programs' keys a lane (2 takes rows of up to 64 keys, as the launcher does).
template <int PerLane = 8>
std::vector<std::vector<float>> run_probs(const torch::Tensor& scores,
                                          const torch::Tensor& out_grad, const QueryRows& queries,
                                          const HashedDropout& dropout, const uint64_t* seed_base,
                                          int64_t rows_per_run, int64_t pitch = 0) {
  const int64_t rows = scores.size(0), T = scores.size(1);
  if (pitch == 0) pitch = T;
  const size_t n = static_cast<size_t>(rows * pitch);
  emu::Buffer<float> sb("scores", pitched(scores, pitch)), probs("probs", n), out("out", n),
      gb("out_grad", pitched(out_grad, pitch)), scores_grad("scores_grad", n);
  const float scale = static_cast<float>(kLogitScale);
  const grid::AttentionProbsForward<emu::Memory, PerLane> forward{
      {rows, T}, dropout,     seed_base, queries,        scale,
      sb.in(),   probs.out(), out.out(), {rows_per_run}, pitch};
  const grid::AttentionProbsBackward<emu::Memory, PerLane> backward{
      {rows, T}, dropout,           seed_base,      scale, probs.in(),
      gb.in(),   scores_grad.out(), {rows_per_run}, pitch};
  emu::Log log;
  emu::run(forward, log);
  emu::run(backward, log);
  const auto in_a_row = [&](int64_t i) { return i % pitch < T; };
  for (const auto* b : {&probs, &out, &scores_grad}) b->check_written(log, in_a_row);
  EXPECT_TRUE(log.ok()) << log.summary();
  std::vector<std::vector<float>> rows_of(3);
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    if (!in_a_row(i)) continue;
    rows_of[0].push_back(probs.data()[i]);
    rows_of[1].push_back(out.data()[i]);
    rows_of[2].push_back(scores_grad.data()[i]);
  }
  return rows_of;
}

// Rows padded to a pitch (ops/causal_attention.cpp pads DT's 59 keys to 60 on CUDA, for cuBLAS's
// aligned kernels): the same bits as rows packed, the pad never read (NaN there) nor written, and
// the dropout's elements still counted as rows of 59; by the 2-keys-a-lane programs too.
TEST(AttentionProbsEmulated, RowsPaddedToAPitchGiveThePackedRowsBits) {
  torch::manual_seed(29);
  constexpr int64_t kT = 59;
  for (const TokenSelection read : {TokenSelection{}, TokenSelection{1, 3}}) {
    SCOPED_TRACE("queries from " + std::to_string(read.first));
    const int64_t Tq = read.count(kT), rows = 2 * Tq;
    const QueryRows queries{Tq, read.first, read.stride};
    const torch::Tensor scores = torch::randn({rows, kT}) * 3, out_grad = torch::randn({rows, kT});
    const HashedDropout dropout{0x5eedull, std::llround(kAttentionDrop * 4294967296.0),
                                static_cast<float>(1.0 / (1.0 - kAttentionDrop))};
    const auto packed = run_probs(scores, out_grad, queries, dropout, nullptr, 0);
    for (const int64_t pitch : {60, 64}) {
      SCOPED_TRACE("pitch " + std::to_string(pitch));
      const auto padded = run_probs(scores, out_grad, queries, dropout, nullptr, 0, pitch);
      for (size_t k = 0; k < packed.size(); ++k) EXPECT_EQ(padded[k], packed[k]) << "output " << k;
      // The 2-keys-a-lane programs the launcher takes for rows of ≤ 64 keys: the same bits.
      const auto narrow = run_probs<2>(scores, out_grad, queries, dropout, nullptr, 0, pitch);
      for (size_t k = 0; k < packed.size(); ++k) EXPECT_EQ(narrow[k], packed[k]) << "output " << k;
    }
  }
}

// A pack's runs stacked (kernels/math/run_rows.h): each run's rows dropped out with its own seed
// base, their elements counted from the run's first row — every output bit for bit the run's
// alone.
TEST(AttentionProbsEmulated, EachRunOfAPackIsDroppedOutAsItIsAlone) {
  torch::manual_seed(31);
  constexpr int64_t kRuns = 3, kHeads = 2, kT = 59;
  const TokenSelection read{1, 3};
  const int64_t Tq = read.count(kT), run_rows = kHeads * Tq;
  const QueryRows queries{Tq, read.first, read.stride};
  const torch::Tensor scores = torch::randn({kRuns * run_rows, kT}) * 3,
                      out_grad = torch::randn({kRuns * run_rows, kT});
  const HashedDropout offset{0x77ull, std::llround(kAttentionDrop * 4294967296.0),
                             static_cast<float>(1.0 / (1.0 - kAttentionDrop))};
  const std::vector<uint64_t> bases = {5, 1u << 20, 123456789};
  const auto pack = run_probs<2>(scores, out_grad, queries, offset, bases.data(), run_rows);
  for (int64_t r = 0; r < kRuns; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const auto alone =
        run_probs(scores.narrow(0, r * run_rows, run_rows),
                  out_grad.narrow(0, r * run_rows, run_rows), queries, offset, bases.data() + r, 0);
    for (size_t k = 0; k < pack.size(); ++k) {
      EXPECT_EQ(testing::run_part(pack[k], r, alone[k].size()), alone[k]) << "output " << k;
    }
  }
}

}  // namespace
}  // namespace minrnn::core
