// A residual join's CUDA kernels (kernels/cuda/residual_norm_programs.h) run by the host emulator
// (tests/kernels/grid_emulator.h), every element written once and every barrier checked, against
// the CPU op (ops/residual_norm.h) with the same dropout seed: the sum bit for bit, the normed
// output and the gradients to rounding (their sums run in another fixed order). Rows past the last
// whole block, rows narrower than a warp and as wide as the kernels take, with and without the
// gradient through the sum, and without a residual; the form the launcher takes for the rows
// (4 channels a lane up to 128, the full form at exactly 128 or 256) to the general form's bits.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "kernels/cuda/residual_norm_programs.h"
#include "ops/dropout.h"
#include "ops/residual_norm.h"
#include "ops/token_selection.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::rel_err;
using minrnn::testing::run_part;
using minrnn::testing::tensor_from;
using minrnn::testing::values_of;

constexpr double kP = 0.25;
constexpr float kEps = 1e-5f;
constexpr uint64_t kSeed = 0xABCDEFull;

// Every output of a join's three kernels, emulated.
struct JoinOutputs {
  std::vector<float> sum, normed, moments, x_grad, y_grad, gamma_grad, beta_grad;
};

// The kernels over `rows` output rows of x and y (batch, tokens, width) read through `map`,
// every element written once and every barrier checked; without `residual` no x (and no x_grad),
// sum_grad undefined: none. `runs` > 1: a pack's runs stacked, gamma and beta (runs, width) and
// `bases` one a run; else one run, its seed the full one (bases empty). PerLane: the programs'
// channels a lane (4 takes rows of up to 128); FullRows: their form for rows exactly 32 · PerLane
// wide.
template <int PerLane = 8, bool FullRows = false>
JoinOutputs run_join(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& gamma,
                     const torch::Tensor& beta, const torch::Tensor& sum_grad,
                     const torch::Tensor& normed_grad, const RowMap& map, int64_t rows,
                     const HashedDropout& dropout, const std::vector<uint64_t>& bases, int64_t runs,
                     bool residual = true) {
  const int64_t width = y.size(-1);
  const size_t n = static_cast<size_t>(rows * width), n_in = static_cast<size_t>(y.numel());
  const uint64_t* base = bases.empty() ? nullptr : bases.data();
  const RunRows by_run{runs > 1 ? rows / runs : 0};
  const bool through_sum = sum_grad.defined();
  emu::Buffer<float> xb("x", values_of<float>(x.detach())), yb("y", values_of<float>(y.detach())),
      gb("gamma", values_of<float>(gamma.detach())), bb("beta", values_of<float>(beta.detach()));
  emu::Buffer<float> sum("sum", n), normed("normed", n), moments("moments", 2 * rows);
  const emu::In<float> x_in = residual ? xb.in() : emu::In<float>{nullptr};  // never read then
  const grid::ResidualNormForward<emu::Memory, PerLane, FullRows> forward{
      {rows, width}, dropout, base,    kEps,      map,          map,           residual, x_in,
      yb.in(),       gb.in(), bb.in(), sum.out(), normed.out(), moments.out(), by_run};
  emu::Log log;
  emu::run(forward, log);
  const int64_t partials = grid::RowGrid{rows, width}.blocks();
  emu::Buffer<float> sgb("sum_grad",
                         values_of<float>(through_sum ? sum_grad : torch::zeros({rows, width}))),
      ngb("normed_grad", values_of<float>(normed_grad));
  // The op zeroes the input gradients first where a selection leaves rows unread.
  emu::Buffer<float> x_grad("x_grad", std::vector<float>(n_in, 0.0f)),
      y_grad("y_grad", std::vector<float>(n_in, 0.0f)),
      gamma_partial("gamma_partial", static_cast<size_t>(partials * width)),
      beta_partial("beta_partial", static_cast<size_t>(partials * width)),
      gamma_grad("gamma_grad", static_cast<size_t>(gamma.numel())),
      beta_grad("beta_grad", static_cast<size_t>(gamma.numel()));
  const grid::ResidualNormBackward<emu::Memory, PerLane, FullRows> backward{
      {rows, width},
      dropout,
      base,
      map,
      map,
      sum.in(),
      moments.in(),
      gb.in(),
      sgb.in(),
      ngb.in(),
      through_sum,
      residual,
      residual ? x_grad.out() : emu::Out<float>{nullptr},
      y_grad.out(),
      gamma_partial.out(),
      beta_partial.out(),
      by_run};
  grid::NormParamGrads<emu::Memory> params{{},
                                           partials,
                                           width,
                                           gamma_partial.in(),
                                           beta_partial.in(),
                                           gamma_grad.out(),
                                           beta_grad.out()};
  params.runs = runs;
  emu::run(backward, log);
  emu::run(params, log);
  for (const auto* b :
       {&sum, &normed, &moments, &gamma_partial, &beta_partial, &gamma_grad, &beta_grad}) {
    b->check_written(log);
  }
  EXPECT_TRUE(log.ok()) << log.summary();
  return {sum.data(),    normed.data(),     moments.data(),  x_grad.data(),
          y_grad.data(), gamma_grad.data(), beta_grad.data()};
}

// run_join in the form kernels/cuda/residual_norm.cu launches for rows of `width`.
template <typename... Args>
JoinOutputs launched_join(int64_t width, const Args&... args) {
  return grid::with_row_form<4>(width, [&](auto lanes, auto full) {
    return run_join<decltype(lanes)::value, decltype(full)::value>(args...);
  });
}

// Run r's part of a pack's outputs, each as long as `alone`'s.
JoinOutputs run_part_of(const JoinOutputs& pack, int64_t r, const JoinOutputs& alone) {
  const auto part = [&](const std::vector<float>& v, const std::vector<float>& like) {
    return run_part(v, r, like.size());
  };
  return {part(pack.sum, alone.sum),
          part(pack.normed, alone.normed),
          part(pack.moments, alone.moments),
          part(pack.x_grad, alone.x_grad),
          part(pack.y_grad, alone.y_grad),
          part(pack.gamma_grad, alone.gamma_grad),
          part(pack.beta_grad, alone.beta_grad)};
}

void expect_same_bits(const JoinOutputs& a, const JoinOutputs& b) {
  EXPECT_EQ(a.sum, b.sum);
  EXPECT_EQ(a.normed, b.normed);
  EXPECT_EQ(a.moments, b.moments);
  EXPECT_EQ(a.x_grad, b.x_grad);
  EXPECT_EQ(a.y_grad, b.y_grad);
  EXPECT_EQ(a.gamma_grad, b.gamma_grad);
  EXPECT_EQ(a.beta_grad, b.beta_grad);
}

// x, y (batch, tokens, width) read at the tokens `read` selects (both), as the top block does;
// without `residual` no x (a backbone's input dropout joined to its first norm).
void check(int64_t batch, int64_t tokens, int64_t width, const TokenSelection& read,
           bool through_sum, bool residual = true) {
  SCOPED_TRACE(std::to_string(batch) + " × " + std::to_string(tokens) + " rows of " +
               std::to_string(width) + ", every " + std::to_string(read.stride) + " from " +
               std::to_string(read.first) + (through_sum ? ", through the sum too" : "") +
               (residual ? "" : ", no residual"));
  torch::manual_seed(batch * tokens * width);
  const torch::Tensor x = torch::randn({batch, tokens, width}).requires_grad_(true);
  const torch::Tensor y = torch::randn({batch, tokens, width}).requires_grad_(true);
  const torch::Tensor gamma = torch::randn({width}).requires_grad_(true);
  const torch::Tensor beta = torch::randn({width}).requires_grad_(true);
  ResidualNorm want;
  {
    const DropoutSeeds seeds(kSeed);  // its first call's seed is kSeed itself
    want = add_dropout_norm(residual ? x : torch::Tensor(), y, kP, true, gamma, beta, kEps, read,
                            read);
  }
  if (!residual) {  // fused_dropout's bits
    const DropoutSeeds seeds(kSeed);
    EXPECT_TRUE(torch::equal(want.sum, fused_dropout(read.apply(y), kP, true)));
  }
  const HashedDropout dropout{kSeed, std::llround(kP * 4294967296.0),
                              static_cast<float>(1.0 / (1.0 - kP))};
  const int64_t selected = want.sum.size(1), rows = batch * selected;
  const RowMap map =
      read.all() ? RowMap::identity(rows) : RowMap{selected, tokens, read.first, read.stride};
  const torch::Tensor sum_grad = torch::randn({rows, width}),
                      normed_grad = torch::randn({rows, width});
  const JoinOutputs got = run_join(x, y, gamma, beta, through_sum ? sum_grad : torch::Tensor(),
                                   normed_grad, map, rows, dropout, {}, 1, residual);
  EXPECT_TRUE(torch::equal(tensor_from(got.sum, want.sum.sizes()), want.sum.detach()));
  EXPECT_LT(
      rel_err(tensor_from(got.normed, want.sum.sizes()), want.normed.detach().to(torch::kDouble)),
      1e-6);

  torch::autograd::backward({want.sum, want.normed}, {through_sum ? sum_grad.view(want.sum.sizes())
                                                                  : torch::zeros_like(want.sum),
                                                      normed_grad.view(want.sum.sizes())});
  const auto expect_close = [](const torch::Tensor& got, const torch::Tensor& grad,
                               const char* what) {
    EXPECT_LT(rel_err(got, grad.to(torch::kDouble)), 1e-5) << what;
  };
  if (residual) {
    expect_close(tensor_from(got.x_grad, x.sizes()), x.grad(), "x");  // zero rows and all
  } else {
    EXPECT_FALSE(x.grad().defined());
  }
  expect_close(tensor_from(got.y_grad, y.sizes()), y.grad(), "y");
  expect_close(tensor_from(got.gamma_grad, {width}), gamma.grad(), "gamma");
  expect_close(tensor_from(got.beta_grad, {width}), beta.grad(), "beta");
  // The form the launcher takes for these rows (4 channels a lane up to 128, the full form at
  // exactly 128 or 256): the same bits.
  const JoinOutputs launched =
      launched_join(width, x, y, gamma, beta, through_sum ? sum_grad : torch::Tensor(), normed_grad,
                    map, rows, dropout, std::vector<uint64_t>{}, int64_t{1}, residual);
  expect_same_bits(launched, got);
}

TEST(ResidualNormEmulated, KernelsAreTheCpuOpsJoinAndGradients) {
  check(1, 19, 128, {}, true);     // DT's width; the last block's rows partly past the end
  check(3, 3, 40, {}, false);      // lanes past the row's end; no gradient through the sum
  check(1, 3, 256, {}, true);      // as wide as the kernels take
  check(4, 11, 40, {1, 3}, true);  // the top block's state tokens: every third from the second
}

// A backbone's input dropout joined to its first norm: no x, sum = dropout(y).
TEST(ResidualNormEmulated, AJoinWithoutAResidualIsTheDropoutNormed) {
  check(2, 19, 128, {}, true, false);
  check(3, 3, 40, {}, false, false);
}

// A pack's runs stacked (kernels/math/run_rows.h): each run's rows joined with its own γ and β,
// dropped out with its own seed base and its elements counted from its first row, its γ and β
// gradients summed from its own blocks — every output bit for bit that run's alone. All tokens,
// and the top block's state tokens.
TEST(ResidualNormEmulated, EachRunOfAPackIsJoinedAsItIsAlone) {
  constexpr int64_t kRuns = 3, kBatch = 4;
  for (const int64_t width : {40, 128}) {  // lanes past the row's end; DT's rows, the full form
    for (const TokenSelection read : {TokenSelection{}, TokenSelection{1, 3}}) {
      SCOPED_TRACE(std::to_string(width) + " wide, every " + std::to_string(read.stride) +
                   " from " + std::to_string(read.first));
      torch::manual_seed(77);
      const int64_t tokens = 12, selected = read.count(tokens);
      const torch::Tensor x = torch::randn({kRuns * kBatch, tokens, width}),
                          y = torch::randn({kRuns * kBatch, tokens, width}),
                          gamma = torch::randn({kRuns, width}), beta = torch::randn({kRuns, width});
      const int64_t rows = kRuns * kBatch * selected, run_rows = kBatch * selected;
      const torch::Tensor sum_grad = torch::randn({rows, width}),
                          normed_grad = torch::randn({rows, width});
      const auto map_of = [&](int64_t out_rows) {
        return read.all() ? RowMap::identity(out_rows)
                          : RowMap{selected, tokens, read.first, read.stride};
      };
      const HashedDropout offset{0x1234ull, std::llround(kP * 4294967296.0),
                                 static_cast<float>(1.0 / (1.0 - kP))};
      const std::vector<uint64_t> bases = {11, 2026, 987654321};
      const JoinOutputs pack = launched_join(width, x, y, gamma, beta, sum_grad, normed_grad,
                                             map_of(rows), rows, offset, bases, kRuns);
      for (int64_t r = 0; r < kRuns; ++r) {
        SCOPED_TRACE("run " + std::to_string(r));
        HashedDropout own = offset;
        own.seed += bases[r];
        const auto slice = [&](const torch::Tensor& t) {
          return t.narrow(0, r * t.size(0) / kRuns, t.size(0) / kRuns);
        };
        const JoinOutputs alone =
            run_join(slice(x), slice(y), gamma[r], beta[r], slice(sum_grad), slice(normed_grad),
                     map_of(run_rows), run_rows, own, {}, 1);
        expect_same_bits(run_part_of(pack, r, alone), alone);
      }
    }
  }
}

}  // namespace
}  // namespace minrnn::core
